// Portable sessions through the SDK against real daemons: export a session, import it into
// a second daemon (another data dir, another id, another cwd) where the mock agent still
// remembers the earlier turns; tampered bundles are refused; handover to another agent.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ProblemError, type EventOf, type SessionExport, type TurnResult, type UniversalEvent } from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, range, startDaemon, uniqueId } from './helpers.js';

/** The assistant messages of a turn, in order. */
function replies(turn: TurnResult): string[] {
  return turn.events
    .filter((e): e is EventOf<'itemCompleted'> => e.type === 'itemCompleted')
    .filter((e) => e.data.item.kind === 'message' && e.data.item.role === 'assistant')
    .map((e) => (e.data.item.content ?? []).map((part) => ('text' in part ? part.text : '')).join(''));
}

/** What the daemon's checksum covers: each event's JSON text and a newline, in order. */
function eventsSha256(events: readonly UniversalEvent[]): string {
  const hash = createHash('sha256');
  for (const event of events) hash.update(`${JSON.stringify(event)}\n`);
  return hash.digest('hex');
}

function isProblem(status: number, kind: string): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(error instanceof ProblemError, `a ProblemError, not ${String(error)}`);
    assert.equal(error.status, status, error.detail);
    assert.equal(error.kind, kind);
    return true;
  };
}

describe('portable sessions', () => {
  let source: LocalSandboxDaemon;
  let target: LocalSandboxDaemon;
  let workspace: string;
  before(async () => {
    [source, target] = await Promise.all([startDaemon({ validate: true }), startDaemon({ validate: true })]);
    workspace = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-import-')));
  });
  after(async () => {
    await Promise.all([source.close(), target.close()]);
    await rm(workspace, { recursive: true, force: true });
  });

  /** A mock session on `source` after two turns, and its export. */
  async function exported(): Promise<{ id: string; exported: SessionExport; eventCount: number }> {
    const session = await source.startSession(uniqueId('export'), { agent: 'mock' });
    assert.deepEqual(replies(await session.run('hello one')), ['echo: hello one']);
    assert.deepEqual(replies(await session.run('hello two')), ['echo: hello two']);
    const { eventCount } = await session.info();
    return { id: session.id, exported: await session.export(), eventCount };
  }

  it('exportSession answers the bundle text as received and parsed', async () => {
    const { id, exported: bundle, eventCount } = await exported();
    assert.deepEqual(JSON.parse(bundle.text), bundle.bundle);
    assert.equal(bundle.bundle.format, 1);
    assert.equal(bundle.bundle.session.sessionId, id);
    assert.equal(bundle.bundle.session.agent, 'mock');
    assert.equal(bundle.bundle.eventCount, eventCount);
    assert.deepEqual(bundle.bundle.events.map((e) => e.sequence), range(1, eventCount));
    assert.equal(bundle.bundle.eventsSha256, eventsSha256(bundle.bundle.events));
    assert.ok(bundle.bundle.events.every((e) => e.raw === undefined), 'no raw payloads unless asked');

    const withRaw = await source.exportSession(id, { includeRaw: true });
    assert.equal(withRaw.bundle.eventCount, eventCount);
    assert.equal(withRaw.bundle.eventsSha256, eventsSha256(withRaw.bundle.events));
  });

  it('importSession on a second daemon, under another id and cwd, keeps the memory', async () => {
    const { exported: bundle, eventCount } = await exported();
    const copy = target.session(uniqueId('imported'));
    const info = await copy.import(bundle, { cwd: workspace });
    assert.equal(info.sessionId, copy.id);
    assert.equal(info.agent, 'mock');
    assert.equal(info.cwd, workspace);
    assert.equal(info.status, 'idle');
    assert.equal(info.eventCount, eventCount);
    const log = await collect(copy.history());
    assert.deepEqual(log.map((e) => e.sequence), range(1, eventCount));
    assert.deepEqual(
      log.map((e) => e.type),
      bundle.bundle.events.map((e) => e.type),
    );

    const recall = await copy.run('recall');
    assert.equal(recall.turnId, 'turn_3');
    assert.equal(recall.ended.stopReason, 'completed');
    assert.deepEqual(replies(recall), ['recalled: hello one | hello two', 'echo: recall']);
    assert.equal(recall.events[0]?.sequence, eventCount + 1, 'the log continues contiguously');

    // The same bundle as UTF-8 bytes, and as plain text, without a cwd (the bundle's own).
    const bytes = await target.importSession(uniqueId('bytes'), new TextEncoder().encode(bundle.text));
    assert.equal(bytes.cwd, bundle.bundle.session.cwd);
    const text = await target.importSession(uniqueId('text'), bundle.text);
    assert.equal(text.eventCount, eventCount);
  });

  it('refuses a tampered bundle (422 invalid-bundle), a taken id, a bad cwd and a parsed object', async () => {
    const { id, exported: bundle } = await exported();
    const tampered = bundle.text.replace('"delta":"echo:"', '"delta":"ECHO:"');
    assert.notEqual(tampered, bundle.text);
    await assert.rejects(target.importSession(uniqueId('tampered'), tampered), isProblem(422, 'invalid-bundle'));
    const newer = JSON.stringify({ ...bundle.bundle, format: bundle.bundle.format + 1 });
    await assert.rejects(target.importSession(uniqueId('newer'), newer), isProblem(422, 'invalid-bundle'));
    await assert.rejects(source.importSession(id, bundle), isProblem(409, 'session-exists'));
    await assert.rejects(
      target.importSession(uniqueId('cwd'), bundle, { cwd: 'relative/dir' }),
      isProblem(400, 'invalid-session-config'),
    );
    await assert.rejects(
      // @ts-expect-error a parsed bundle is not accepted: serialised again it may not match its checksum
      target.importSession(uniqueId('parsed'), bundle.bundle),
      (error: unknown) => error instanceof TypeError && /its JSON text/.test(error.message),
    );
  });

  it('handoverSession mock -> mock with mock-1 records sessionHandedOver, and the memory stays', async () => {
    const session = await source.startSession(uniqueId('handover'), { agent: 'mock' });
    await session.run('hello one');
    await session.run('hello two');
    const before = (await session.info()).eventCount;

    const info = await session.handover({ agent: 'mock', model: 'mock-1' });
    assert.equal(info.agent, 'mock');
    assert.equal(info.model, 'mock-1');
    assert.equal(info.status, 'idle');
    assert.equal(info.eventCount, before + 1);
    const [handedOver, ...others] = (await collect(session.history({ offset: before }))).filter(
      (e): e is EventOf<'sessionHandedOver'> => e.type === 'sessionHandedOver',
    );
    assert.equal(others.length, 0);
    assert.equal(handedOver?.sequence, before + 1);
    assert.deepEqual(
      { ...handedOver?.data },
      { fromAgent: 'mock', toAgent: 'mock', model: 'mock-1', turns: 2 },
    );

    const recall = await session.run('recall');
    assert.deepEqual(replies(recall), ['recalled: hello one | hello two', 'echo: recall']);

    await assert.rejects(source.handoverSession(session.id, { agent: 'mock', model: 'no-such-model' }), (e: unknown) => {
      assert.ok(e instanceof ProblemError && e.status === 400, String(e));
      return true;
    });
    await session.end();
    await assert.rejects(session.handover({ agent: 'mock' }), isProblem(409, 'session-ended'));
    await assert.rejects(source.handoverSession(uniqueId('missing'), { agent: 'mock' }), isProblem(404, 'session-not-found'));
  });
});
