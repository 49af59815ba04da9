// The inspector in a real browser (Debian's Chromium through playwright-core) against the
// real daemon binary and its built-in mock agent: the token screen, a new session, a
// message, a permission approved from the keyboard, a multi-select question answered, a
// slow turn cancelled, a reload in the middle of a streamed turn (every event then shown
// exactly once), the sessions list showing what waits, and an agent installed from the
// test kit's loopback mirror with its progress bar moving. axe-core finds no serious
// accessibility violation on any screen, nothing breaks the page's CSP, and every screen
// is saved as a screenshot.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, newPage, screenshot, seriousViolations, startDaemon, startMirror } from './harness.mjs';

const TOKEN = 'inspector-test-token';
/** The agent installed from the mirror: the mirror serves its ~200 MB at 128 MiB/s, so the
 * download takes about two seconds and the bar is seen to move. */
const INSTALL_AGENT = 'claude';

let mirror;
let daemon;
let browser;
let page;

async function accessible(name) {
  const violations = await seriousViolations(page);
  assert.deepEqual(violations, [], `axe-core on the ${name} screen`);
  await screenshot(page, name);
}

function assistantMessages() {
  return page.locator('article.message.role-assistant');
}

async function send(text) {
  await page.getByLabel('Message').fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Waits until the session shows `n` ended turns. */
async function turnsEnded(n, timeout = 20_000) {
  await page.locator('.turn-end').nth(n - 1).waitFor({ timeout });
}

before(async () => {
  mirror = await startMirror(['--agent', INSTALL_AGENT, '--rate-kib-per-sec', '131072']);
  daemon = await startDaemon({ token: TOKEN, args: ['--install-mirror', mirror.url] });
  browser = await launchBrowser();
  page = await newPage(browser);
});

after(async () => {
  const problems = page?.problems ?? [];
  await browser?.close();
  await daemon?.close();
  await mirror?.close();
  assert.deepEqual(problems, [], 'no page error, console error or CSP violation');
});

describe('the inspector behind a token', () => {
  test('asks for the token once, refuses a wrong one, and keeps it out of the URL', async () => {
    await page.goto(`${daemon.url}/ui/`);
    await page.getByLabel('Token').waitFor();
    await accessible('token');
    await page.getByLabel('Token').fill('wrong');
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByText('The daemon refused that token.').waitFor();
    await page.getByLabel('Token').fill(TOKEN);
    await page.getByRole('button', { name: 'Connect' }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    assert.ok(!page.url().includes(TOKEN));
    const cookies = await page.context().cookies();
    assert.deepEqual(cookies, []);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('sandbox-daemon.token')), TOKEN);
  });

  test('creates a mock session from the live listings', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'New session' }).click();
    await page.getByLabel('Permission mode').locator('option', { hasText: 'acceptEdits' }).waitFor({ state: 'attached' });
    await accessible('new-session');
    await page.getByLabel('Session id').fill('ui-one');
    await page.getByLabel('Agent', { exact: true }).selectOption('mock');
    await page.getByLabel('Permission mode').selectOption('default');
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.waitForURL('**/ui/sessions/ui-one');
    await page.getByText('Session started · mock').waitFor();
    const info = await daemon.api('/sessions/ui-one');
    assert.equal(info.agent, 'mock');
    assert.equal(info.permissionMode, 'default');
  });

  test('sends a message and approves a permission from the keyboard', async () => {
    await send('use a tool, then ask permission');
    const tray = page.getByRole('region', { name: /Waiting for you/ });
    const once = tray.getByRole('button', { name: 'Once' });
    await once.waitFor();
    await page.getByRole('region', { name: /Tool call/ }).first().waitFor();
    await accessible('session-permission');

    // The sessions list shows what waits in the session.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sessions' }).click();
    const row = page.getByRole('row', { name: /ui-one/ });
    await row.getByText('1 permission').waitFor();
    await accessible('sessions');
    await row.getByRole('link', { name: 'ui-one' }).click();
    await page.waitForURL('**/ui/sessions/ui-one');

    await tray.getByRole('button', { name: 'Once' }).focus();
    await page.keyboard.press('Enter');
    await turnsEnded(1);
    await assert.doesNotReject(tray.waitFor({ state: 'detached' }));
    await page.locator('.permission-marker', { hasText: 'once' }).first().waitFor();
    await page.getByRole('region', { name: 'Command' }).first().waitFor();
    await page.locator('.diff').first().waitFor();
    assert.match(await assistantMessages().last().innerText(), /echo: use a tool, then ask permission/);
    const events = (await daemon.api('/sessions/ui-one/events?limit=1000')).events;
    const resolved = events.find((e) => e.type === 'permissionResolved');
    assert.equal(resolved.data.automatic, false);
  });

  test('answers a multi-select question', async () => {
    await send('ask me a question');
    const form = page.getByRole('form', { name: 'Question' });
    await form.waitFor();
    assert.equal(await form.getByRole('radio').count(), 3, 'the single-choice question offers radios');
    assert.equal(await form.getByRole('checkbox').count(), 3, 'the multi-select question offers checkboxes');
    await form.getByLabel('Red').check();
    await form.getByLabel('Cheese').check();
    await form.getByLabel('Olives').check();
    await accessible('session-question');
    await form.getByRole('button', { name: 'Answer' }).click();
    await turnsEnded(2);
    await page.getByText('You answered: Color = Red; Toppings = Cheese, Olives').waitFor();
    const events = (await daemon.api('/sessions/ui-one/events?limit=1000')).events;
    const resolved = events.filter((e) => e.type === 'questionResolved').at(-1);
    assert.deepEqual(resolved.data.answers, [['Red'], ['Cheese', 'Olives']]);
  });

  test('cancels a slow turn', async () => {
    await send('be slow 500');
    await assistantMessages().last().getByText(/slow 3 /).waitFor();
    await page.getByRole('button', { name: 'Cancel turn' }).click();
    await turnsEnded(3, 9_000);
    await page.locator('.turn-end').nth(2).getByText('Turn cancelled').waitFor();
    const text = await assistantMessages().last().innerText();
    assert.ok(!text.includes('slow 499'), 'the turn stopped before its end');
    await assert.doesNotReject(page.getByRole('button', { name: 'Send' }).isEnabled());
  });

  test('a reload in the middle of a streamed turn shows every event exactly once', async () => {
    await send('slow 400');
    await assistantMessages().last().getByText(/slow 20 /).waitFor();
    await page.reload();
    assert.equal((await daemon.api('/sessions/ui-one')).status, 'running', 'the reload came mid-turn');
    await turnsEnded(4);
    const info = await daemon.api('/sessions/ui-one');
    const events = (await daemon.api(`/sessions/ui-one/events?limit=1000`)).events;
    const streamed = events.filter(
      (e) => e.type === 'itemCompleted' && e.data.item.kind === 'message' && e.data.item.role === 'assistant',
    );
    const expected = streamed.map((e) => e.data.item.content.map((p) => p.text ?? '').join('')).find((t) => t.startsWith('slow 0 ') && t.includes('slow 399 '));
    assert.ok(expected, 'the slow message is in the log');
    const shown = page.locator('article.message.role-assistant', { hasText: 'slow 399 ' });
    assert.equal(await shown.count(), 1, 'the streamed message is shown once');
    assert.equal((await shown.locator('.markdown').innerText()).trim(), expected.trim());
    await page.getByTestId('event-count').getByText(String(info.eventCount), { exact: true }).waitFor();

    await page.getByRole('checkbox', { name: /Raw events/ }).check();
    const rows = page.locator('.raw-events li');
    await rows.nth(info.eventCount - 1).waitFor();
    const sequences = await rows.evaluateAll((items) => items.map((li) => Number(li.dataset.sequence)));
    assert.deepEqual(sequences, Array.from({ length: info.eventCount }, (_, i) => i + 1));
    await rows.first().locator('summary').click();
    await screenshot(page, 'session-raw-events');
    await page.getByRole('checkbox', { name: /Raw events/ }).uncheck();
  });

  test('installs an agent from the loopback mirror with a moving progress bar', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
    const card = page.locator(`section.agent[data-agent="${INSTALL_AGENT}"]`);
    await card.waitFor();
    await accessible('agents');
    await page.evaluate(() => {
      window.progressSeen = [];
      const record = () => {
        for (const bar of document.querySelectorAll('progress')) {
          if (bar.hasAttribute('value')) window.progressSeen.push([bar.value, bar.max]);
        }
      };
      new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['value', 'max'] });
    });
    await card.getByRole('button', { name: /^(Install|Reinstall) / }).click();
    await card.getByRole('progressbar').waitFor();
    await card.getByText(/Downloading [^:]*: [1-9]/).waitFor({ timeout: 30_000 });
    await screenshot(page, 'agents-installing');
    await card.getByText(/^Installed /).waitFor({ timeout: 120_000 });
    const seen = await page.evaluate(() => window.progressSeen);
    const downloading = seen.filter(([value, max]) => max > 1 && value < max);
    assert.ok(new Set(downloading.map(([value]) => value)).size >= 2, `the bar moved while downloading: ${JSON.stringify(seen.slice(0, 20))}`);
    const values = downloading.map(([value]) => value);
    assert.deepEqual(values, [...values].sort((a, b) => a - b), 'the bar only moves forward');
    await card.getByText('installed', { exact: true }).waitFor();
    await card.getByText('in use').waitFor();
    const agents = (await daemon.api('/agents')).agents;
    assert.ok(agents.find((a) => a.id === INSTALL_AGENT).installed);
    await card.getByText('Models and modes').click();
    await card.getByRole('heading', { name: 'Models' }).waitFor();
    await screenshot(page, 'agents-installed');
  });

  test('ends the session from the composer', async () => {
    await page.goto(`${daemon.url}/ui/sessions/ui-one`);
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'End session' }).click();
    await page.getByText(/Session ended/).waitFor();
    await page.getByTestId('session-status').getByText('ended').waitFor();
    assert.equal(await page.getByLabel('Message').isDisabled(), true);
    assert.equal((await daemon.api('/sessions/ui-one')).status, 'ended');
  });
});

describe('the inspector on a trusted machine (--no-token)', () => {
  test('needs no token, and its own requests pass the browser guard', async () => {
    const open = await startDaemon();
    const tab = await newPage(browser);
    try {
      await tab.goto(`${open.url}/ui/new`);
      await tab.getByLabel('Session id').fill('open-one');
      await tab.getByRole('button', { name: 'Create session' }).click();
      await tab.waitForURL('**/ui/sessions/open-one');
      await tab.getByLabel('Message').fill('hello there');
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByText('echo: hello there').waitFor();
      assert.deepEqual(tab.problems, []);
    } finally {
      await tab.context().close();
      await open.close();
    }
  });
});
