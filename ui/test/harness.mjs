// What the inspector's browser tests share: a daemon (the binary named by
// SANDBOX_DAEMON_BIN, on a free loopback port, in a temporary data dir), the test kit's
// loopback install mirror, Debian's Chromium driven by playwright-core (no browser
// download), axe-core, and screenshots (into UI_SCREENSHOTS, default ui/test-results/).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
const here = new URL('..', import.meta.url).pathname;

/** Where screenshots go. */
export const screenshots = process.env.UI_SCREENSHOTS ?? join(here, 'test-results', 'screenshots');

/** The absolute path an environment variable names. */
function need(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (see ui/ci.sh)`);
  return resolve(value);
}

/** Starts a process and resolves with the first stdout/stderr line matching `pattern`. */
async function startProcess(command, args, pattern, env = {}, cwd = undefined) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const logs = [];
  const found = new Promise((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        if (logs.length > 200) logs.shift();
        const match = line.match(pattern);
        if (match) resolve(match);
      });
    }
    child.once('error', (error) => reject(new Error(`${command} could not start: ${error.message}`)));
    child.once('exit', (code, signal) =>
      reject(new Error(`${command} exited (${code ?? signal}) before it was ready:\n${logs.join('\n')}`)),
    );
    setTimeout(() => reject(new Error(`${command} was not ready within 60 s:\n${logs.join('\n')}`)), 60_000).unref();
  });
  const match = await found;
  return { child, match, logs };
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await once(child, 'exit');
  clearTimeout(timer);
}

/**
 * A daemon on a free loopback port: `{ url, token, close }`. `token` undefined means
 * `--no-token`; `args` are extra flags.
 */
export async function startDaemon({ token, args = [] } = {}) {
  const binary = need('SANDBOX_DAEMON_BIN');
  const dataDir = await mkdtemp(join(tmpdir(), 'inspector-daemon-'));
  const workspace = await mkdtemp(join(tmpdir(), 'inspector-workspace-'));
  const flags = ['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, ...(token ? [] : ['--no-token']), ...args];
  const env = token ? { SANDBOX_DAEMON_TOKEN: token } : {};
  // The daemon's own directory is the sessions' default cwd: a scratch dir, not the repo.
  const { child, match } = await startProcess(binary, flags, /listening on (https?:\/\/\S+)/, env, workspace);
  const url = match[1].replace(/\/$/, '');
  return {
    url,
    token,
    /** Calls the API (with the token) and answers the JSON body. */
    async api(path, init = {}) {
      const headers = { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(init.body ? { 'content-type': 'application/json' } : {}) };
      const response = await fetch(url + path, { ...init, headers: { ...headers, ...init.headers } });
      const text = await response.text();
      if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    async close() {
      await stop(child);
      await rm(dataDir, { recursive: true, force: true });
      await rm(workspace, { recursive: true, force: true });
    },
  };
}

/** The test kit's loopback mirror of the agents' download hosts: `{ url, close }`. */
export async function startMirror(args = []) {
  const binary = need('SANDBOX_TESTKIT_BIN');
  const { child, match } = await startProcess(binary, ['mirror', ...args], /^\{"url":"(http:\/\/127\.0\.0\.1:\d+)"\}$/);
  return { url: match[1], close: () => stop(child) };
}

/** Debian's Chromium, headless, with nothing that would reach past loopback. */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_BIN ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/**
 * A new page that records what must never happen: uncaught errors, console errors and
 * Content-Security-Policy violations (`page.problems`).
 */
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // A refused request is logged by the browser itself; the app reports it on screen.
    if (message.type() === 'error' && !/Failed to load resource/.test(message.text())) {
      problems.push(`console error: ${message.text()}`);
    }
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  page.problems = problems;
  return page;
}

const axeSource = readFile(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core on the page (WCAG 2.1 A and AA rules) and answers the violations that are
 * serious or critical. axe is evaluated over the DevTools protocol, which the page's CSP
 * does not govern, so the page keeps its real CSP.
 */
export async function seriousViolations(page) {
  await page.evaluate(await axeSource);
  const result = await page.evaluate(() =>
    // eslint-disable-next-line no-undef
    axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }),
  );
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact}: ${v.id} (${v.help}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Saves a full-page screenshot as `<name>.png`. */
export async function screenshot(page, name) {
  await mkdir(screenshots, { recursive: true });
  const path = join(screenshots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
