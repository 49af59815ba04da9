// Every OpenAPI operation, called through the SDK against the real daemon.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProblemError, SandboxDaemon, routes, type UiMessageChunk, type UniversalEvent } from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, isProblem, range, readSpec, startDaemon, uniqueId } from './helpers.js';

/** The method streaming each operation that can answer `text/event-stream`. */
const streamingMethods: Record<string, string> = {
  streamEvents: 'streamEvents',
  installAgent: 'installAgentProgress',
  processLogs: 'followProcessLogs',
  uiMessageStream: 'uiMessageStream',
};

/** Every operationId of spec/openapi.json with its method and path, and whether it can stream. */
function specOperations(): Array<{ id: string; method: string; path: string; streams: boolean }> {
  const out: Array<{ id: string; method: string; path: string; streams: boolean }> = [];
  for (const [path, item] of Object.entries(readSpec().paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op && typeof op === 'object' && typeof op.operationId === 'string') {
        const responses = Object.values((op as { responses?: Record<string, { content?: object }> }).responses ?? {});
        const streams = responses.some((r) => r.content !== undefined && 'text/event-stream' in r.content);
        out.push({ id: op.operationId, method: method.toUpperCase(), path, streams });
      }
    }
  }
  return out;
}

describe('parity with spec/openapi.json', () => {
  it('has a client method for every operationId', () => {
    const ops = specOperations();
    assert.ok(ops.length >= 18, `only ${ops.length} operations found`);
    const missing = ops.filter((op) => typeof Reflect.get(SandboxDaemon.prototype, op.id) !== 'function');
    assert.deepEqual(missing.map((op) => op.id), [], 'operations without an SDK method');
  });

  it('has a streaming method for every operation that can answer text/event-stream', () => {
    const streaming = specOperations().filter((op) => op.streams);
    assert.deepEqual(streaming.map((op) => op.id).sort(), Object.keys(streamingMethods).sort(), 'operations that stream');
    for (const op of streaming) {
      const name = streamingMethods[op.id];
      assert.equal(typeof (name && Reflect.get(SandboxDaemon.prototype, name)), 'function', `${op.id}: ${name}`);
    }
  });

  it('routes every operation to the method and path of the spec', () => {
    const expected = Object.fromEntries(specOperations().map((op) => [op.id, { method: op.method, path: op.path }]));
    assert.deepEqual({ ...routes }, expected);
  });
});

describe('operations against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  before(async () => {
    daemon = await startDaemon({ validate: true });
  });
  after(async () => {
    await daemon.close();
  });

  it('health answers ok with the spec version', async () => {
    const health = await daemon.health();
    assert.equal(health.status, 'ok');
    assert.equal(health.version, readSpec().info.version);
    assert.equal(health.store.status, 'ok');
  });

  it('openapi serves the document this daemon runs, every operation of which has a method', async () => {
    const document = (await daemon.openapi()) as ReturnType<typeof readSpec> & { openapi: string; info: { title: string } };
    assert.match(document.openapi, /^3\.1\./);
    assert.equal(document.info.title, 'sandbox-daemon');
    const served = Object.values(document.paths).flatMap((item) => Object.values(item).map((op) => op.operationId));
    assert.ok(served.length >= 18);
    for (const id of served) assert.equal(typeof Reflect.get(SandboxDaemon.prototype, String(id)), 'function', `${id}`);
  });

  it('listAgents, agentModels, agentModes and installAgent describe the mock', async () => {
    const { agents } = await daemon.listAgents();
    const mock = agents.find((a) => a.id === 'mock');
    assert.ok(mock?.installed && mock.supported);
    assert.equal(mock.capabilities.permissions, true);

    const models = await daemon.agentModels('mock');
    assert.ok(models.models.some((m) => m.id === models.defaultModel));
    const modes = await daemon.agentModes('mock');
    assert.ok(modes.permissionModes.includes('default'));
    assert.ok(modes.modes.length > 0);

    const installed = await daemon.installAgent('mock');
    assert.equal(installed.agent, 'mock');
    assert.equal(installed.alreadyInstalled, true);
  });

  it('putCredential, getCredential, listCredentials, deleteCredential: a login is kept, its secret never answered', async () => {
    // A client that records every answer (status and text) besides the shared one.
    const answers: Array<{ op: string; status: number; text: string }> = [];
    const client = new SandboxDaemon({
      baseUrl: daemon.baseUrl,
      token: daemon.token,
      validate: true,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        const url = new URL(input instanceof Request ? input.url : String(input));
        answers.push({ op: `${init?.method ?? 'GET'} ${url.pathname}`, status: response.status, text: await response.clone().text() });
        return response;
      },
    });
    const statuses = (op: string): number[] => answers.filter((a) => a.op === op).map((a) => a.status);
    // Codex's auth.json as `codex login` writes it, with fake tokens.
    const login = { tokens: { access_token: 'at-fake', refresh_token: 'rt-fake', id_token: 'x.y.z' } };

    const stored = await client.putCredential('codex', { login, source: '/home/me/.codex/auth.json' });
    assert.equal(stored.agent, 'codex');
    assert.equal(stored.source, '/home/me/.codex/auth.json');
    assert.deepEqual(stored.entries.map(({ name, kind }) => ({ name, kind })), [{ name: 'chatgpt', kind: 'oauth' }]);
    const replaced = await client.putCredential('codex', { login });
    assert.deepEqual(statuses('PUT /credentials/codex'), [201, 200], 'stored, then replaced');
    assert.deepEqual(replaced.entries.map(({ name, kind }) => ({ name, kind })), [{ name: 'chatgpt', kind: 'oauth' }]);
    assert.deepEqual(await client.getCredential('codex'), replaced);
    assert.deepEqual((await client.listCredentials()).credentials, [replaced]);

    const codex = (await client.listAgents()).agents.find((a) => a.id === 'codex');
    assert.equal(codex?.credentials?.required, true);
    assert.ok(codex.credentials.available.includes('storedLogin'), `available: ${codex.credentials.available.join(', ')}`);

    await assert.rejects(
      client.putCredential('codex', { login: { tokens: { refresh_token: 'rt-fake' } } }),
      (e: unknown) => e instanceof ProblemError && e.status === 422 && e.type.endsWith('invalid-credential'),
    );
    await assert.rejects(
      client.putCredential('codex', { login, token: 'both' }),
      (e: unknown) => e instanceof ProblemError && e.status === 422 && e.kind === 'invalid-body',
    );
    await assert.rejects(
      client.getCredential('cursor' as 'codex'),
      (e: unknown) => e instanceof ProblemError && e.status === 404 && e.kind === 'unknown-agent',
    );
    assert.deepEqual(await client.getCredential('codex'), replaced, 'a refused put changes nothing');

    assert.equal(await client.deleteCredential('codex'), undefined);
    assert.deepEqual(statuses('DELETE /credentials/codex'), [204]);
    await assert.rejects(
      client.getCredential('codex'),
      (e: unknown) => e instanceof ProblemError && e.status === 404 && e.kind === 'credential-not-found',
    );
    await assert.rejects(
      client.deleteCredential('codex'),
      (e: unknown) => e instanceof ProblemError && e.status === 404 && e.kind === 'credential-not-found',
    );
    assert.deepEqual((await client.listCredentials()).credentials, []);

    assert.ok(answers.length >= 12);
    for (const answer of answers) {
      assert.ok(!answer.text.includes('at-fake') && !answer.text.includes('rt-fake'), `${answer.op} answered a secret: ${answer.text}`);
    }
  });

  it('createSession, getSession, sendMessage, getEvents, endSession, deleteSession', async () => {
    const id = uniqueId('ops');
    assert.deepEqual(await daemon.createSession(id, { agent: 'mock' }), { healthy: true });
    const session = daemon.session(id);

    const info = await daemon.getSession(id);
    assert.equal(info.status, 'idle');
    assert.equal(info.agent, 'mock');

    const { turnId } = await daemon.sendMessage(id, { message: 'hello' });
    const turn = await waitForTurnEnd(collectUntil(daemon.events(id), (e) => e.type === 'turnEnded'), turnId);
    assert.equal(turn.type === 'turnEnded' && turn.data.stopReason, 'completed');

    // Paging: offset/limit/hasMore, and history() walks every page.
    const total = (await daemon.getSession(id)).eventCount;
    const first = await daemon.getEvents(id, { offset: 0, limit: 2 });
    assert.deepEqual(first.events.map((e) => e.sequence), [1, 2]);
    assert.equal(first.hasMore, true);
    const last = await daemon.getEvents(id, { offset: total - 1, limit: 5, includeRaw: true });
    assert.deepEqual(last.events.map((e) => e.sequence), [total]);
    assert.equal(last.hasMore, false);
    const all = await collect(session.history({ pageSize: 3 }));
    assert.deepEqual(all.map((e) => e.sequence), range(1, total));

    const ended = await daemon.endSession(id);
    assert.equal(ended.status, 'ended');
    assert.equal((await daemon.endSession(id)).status, 'ended', 'ending twice answers the ended session');

    assert.equal(await daemon.deleteSession(id), undefined);
    await assert.rejects(daemon.getSession(id), (e: unknown) => e instanceof ProblemError && e.status === 404);
  });

  it('listSessions pages with nextCursor, and sessions() follows it', async () => {
    const ids = [uniqueId('list'), uniqueId('list'), uniqueId('list')];
    for (const id of ids) await daemon.createSession(id, { agent: 'mock' });
    const page = await daemon.listSessions({ limit: 2 });
    assert.equal(page.sessions.length, 2);
    assert.equal(typeof page.nextCursor, 'string');
    const seen = [];
    for await (const s of daemon.sessions({ status: 'idle' })) seen.push(s.sessionId);
    for (const id of ids) assert.ok(seen.includes(id), `${id} listed`);
    assert.equal(new Set(seen).size, seen.length, 'no session listed twice');
  });

  it('replyPermission, replyQuestion and rejectQuestion answer pending requests', async () => {
    const session = await daemon.startSession(uniqueId('hitl'), { agent: 'mock' });
    const events: UniversalEvent[] = [];
    const stream = session.events();
    await session.send('permission, then a question; then another question');
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'permissionAsked') {
        const pending = await session.info();
        assert.deepEqual(pending.pendingPermissions.map((p) => p.permissionId), [event.data.permissionId]);
        await daemon.replyPermission(session.id, event.data.permissionId, { reply: 'once' });
      }
      if (event.type === 'questionAsked') {
        await daemon.replyQuestion(session.id, event.data.questionId, { answers: [['Blue'], ['Olives']] });
      }
      if (event.type === 'turnEnded') break;
    }
    const resolved = events.filter((e) => e.type === 'permissionResolved' || e.type === 'questionResolved');
    assert.deepEqual(
      resolved.map((e) => e.data.outcome),
      ['once', 'answered'],
    );

    const second = session.events({ offset: (await session.info()).eventCount });
    await session.send('question');
    for await (const event of second) {
      if (event.type === 'questionAsked') await daemon.rejectQuestion(session.id, event.data.questionId);
      if (event.type === 'questionResolved') assert.equal(event.data.outcome, 'rejected');
      if (event.type === 'turnEnded') break;
    }
  });

  it('cancelTurn interrupts a running turn, which ends cancelled', async () => {
    const session = await daemon.startSession(uniqueId('cancel'), { agent: 'mock' });
    let cancelled: string | undefined;
    for await (const event of session.turn('slow')) {
      if (event.type === 'itemDelta' && cancelled === undefined) {
        cancelled = (await daemon.cancelTurn(session.id)).turnId;
      }
      if (event.type === 'turnEnded') {
        assert.equal(event.data.turnId, cancelled);
        assert.equal(event.data.stopReason, 'cancelled');
      }
    }
    assert.ok(cancelled, 'the turn was cancelled while running');
  });

  it('streamEvents replays the log from an offset and ends after sessionEnded', async () => {
    const session = await daemon.startSession(uniqueId('stream'), { agent: 'mock' });
    await session.run('tool');
    await session.end();
    const total = (await session.info()).eventCount;
    const events = await collect(daemon.streamEvents(session.id, { offset: 3 }));
    assert.deepEqual(events.map((e) => e.sequence), range(4, total));
    assert.equal(events.at(-1)?.type, 'sessionEnded');
    // Opened past the end of an ended session: nothing to deliver, and it ends at once.
    assert.deepEqual(await collect(daemon.streamEvents(session.id, { offset: total })), []);
  });

  it('uiMessageStream answers a turn as UI message chunks, null with no turn running, 404 for an unknown turn', async () => {
    const session = await daemon.startSession(uniqueId('ui'), { agent: 'mock' });
    assert.equal(await daemon.uiMessageStream(session.id), null, 'no turn runs');
    const { turnId } = await daemon.sendMessage(session.id, { message: 'hello' });
    const stream = await daemon.uiMessageStream(session.id, { turnId });
    assert.ok(stream);
    const chunks: UiMessageChunk[] = [];
    const reader = stream.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    assert.deepEqual(chunks[0], { type: 'start', messageId: `msg_${turnId}`, messageMetadata: { turnId } });
    assert.equal(chunks.at(-1)?.type, 'finish');
    const text = chunks.flatMap((c) => (c.type === 'text-delta' ? [String(c['delta'])] : [])).join('');
    assert.equal(text, 'echo: hello');
    await assert.rejects(daemon.uiMessageStream(session.id, { turnId: 'turn_99' }), isProblem(404, 'turn-not-found'));
  });

  it('createWebhook, listWebhooks, getWebhook, listWebhookDeliveries, deleteWebhook: a receiver that is down', async () => {
    // Nothing listens on port 1 of loopback: every attempt fails, and the delivery stays pending.
    const secret = 'operations-test-secret-0123';
    const created = await daemon.createWebhook({ url: 'http://127.0.0.1:1/hooks', events: ['sessionEnded'], secret });
    assert.match(created.id, /^wh_/);
    assert.equal(created.secret ?? undefined, undefined, 'a secret given is not answered');
    assert.deepEqual(await daemon.getWebhook(created.id), created);
    assert.ok((await daemon.listWebhooks()).webhooks.some((w) => w.id === created.id));

    const session = await daemon.startSession(uniqueId('hooked'), { agent: 'mock' });
    const ended = await session.end();
    let pending;
    for (let tries = 0; tries < 200 && !pending; tries += 1) {
      const page = await daemon.listWebhookDeliveries(created.id, { limit: 500 });
      pending = page.deliveries.find((d) => d.sessionId === session.id && d.attempts >= 1);
      if (!pending) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(pending, 'the sessionEnded delivery was attempted');
    assert.equal(pending.id, `${session.id}:${ended.eventCount}`);
    assert.equal(pending.eventType, 'sessionEnded');
    assert.equal(pending.status, 'pending');
    assert.ok(pending.lastError, 'why it failed');
    assert.ok(pending.nextAttemptAt, 'when it is tried again');
    const all = await collect(daemon.webhookDeliveries(created.id, { limit: 1 }));
    assert.ok(all.some((d) => d.id === pending.id));

    assert.equal(await daemon.deleteWebhook(created.id), undefined);
    await assert.rejects(daemon.getWebhook(created.id), (e: unknown) => e instanceof ProblemError && e.status === 404 && e.kind === 'webhook-not-found');
    assert.ok(!(await daemon.listWebhooks()).webhooks.some((w) => w.id === created.id));
  });
});

/** Iterates until `stop` matches (inclusive); returns the events. */
async function collectUntil(iterable: AsyncIterable<UniversalEvent>, stop: (e: UniversalEvent) => boolean): Promise<UniversalEvent[]> {
  const out: UniversalEvent[] = [];
  for await (const event of iterable) {
    out.push(event);
    if (stop(event)) break;
  }
  return out;
}

async function waitForTurnEnd(events: Promise<UniversalEvent[]>, turnId: string): Promise<UniversalEvent> {
  const list = await events;
  const end = list.find((e) => e.type === 'turnEnded' && e.data.turnId === turnId);
  assert.ok(end, `turnEnded of ${turnId}`);
  return end;
}
