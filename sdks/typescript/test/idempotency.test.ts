// Idempotency keys: createSession and sendMessage sent again with the same key get the first
// answer again (marked `Idempotent-Replayed: true`) instead of acting twice; another request
// with the key, or a bad key, is refused.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SandboxDaemon, type UniversalEvent } from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, isProblem, startDaemon, uniqueId } from './helpers.js';

/** What the recording client saw of one exchange. */
interface Seen {
  readonly op: string;
  readonly status: number;
  /** The `Idempotency-Key` sent. */
  readonly key: string | null;
  /** The `Idempotent-Replayed` answered. */
  readonly replayed: string | null;
}

describe('idempotency keys against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  let client: SandboxDaemon;
  const seen: Seen[] = [];
  /** What was seen of `op` (e.g. `POST /sessions/x`), as `[status, replayed]` pairs. */
  const answers = (op: string): Array<[number, string | null]> => seen.filter((s) => s.op === op).map((s) => [s.status, s.replayed]);

  before(async () => {
    daemon = await startDaemon({ validate: true });
    client = new SandboxDaemon({
      baseUrl: daemon.baseUrl,
      token: daemon.token,
      validate: true,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        const url = new URL(input instanceof Request ? input.url : String(input));
        const headers = new Headers(init?.headers);
        seen.push({
          op: `${init?.method ?? 'GET'} ${url.pathname}`,
          status: response.status,
          key: headers.get('idempotency-key'),
          replayed: response.headers.get('idempotent-replayed'),
        });
        return response;
      },
    });
  });
  after(async () => {
    await daemon.close();
  });

  it('createSession sent again with its key answers the first answer, replayed; another request with it is refused', async () => {
    const id = uniqueId('idem');
    const key = `create ${id}`;
    const first = await client.createSession(id, { agent: 'mock' }, { idempotencyKey: key });
    const again = await client.createSession(id, { agent: 'mock' }, { idempotencyKey: key });
    assert.deepEqual(again, first);
    assert.deepEqual(answers(`POST /sessions/${id}`), [
      [201, null],
      [201, 'true'],
    ]);
    assert.deepEqual(
      seen.filter((s) => s.op === `POST /sessions/${id}`).map((s) => s.key),
      [key, key],
      'sent as Idempotency-Key',
    );
    // The session was created once: its log has one sessionStarted.
    const events = await collect(client.history(id));
    assert.deepEqual(
      events.filter((e) => e.type === 'sessionStarted').map((e) => e.sequence),
      [1],
    );

    // Without the key, it is a second create of a taken id.
    await assert.rejects(client.createSession(id, { agent: 'mock' }), isProblem(409, 'session-exists'));
    // The key with another body, or another session: another request.
    await assert.rejects(
      client.createSession(id, { agent: 'mock', agentMode: 'plan' }, { idempotencyKey: key }),
      isProblem(422, 'idempotency-key-reused'),
    );
    await assert.rejects(client.createSession(uniqueId('idem'), { agent: 'mock' }, { idempotencyKey: key }), isProblem(422, 'idempotency-key-reused'));
    // A key that is not 1 to 255 printable ASCII characters.
    for (const bad of ['k'.repeat(256), '', 'caf\u00e9']) {
      await assert.rejects(client.createSession(uniqueId('idem'), { agent: 'mock' }, { idempotencyKey: bad }), isProblem(400, 'invalid-parameter'));
    }
    // startSession and a handle's create take it too.
    const handleId = uniqueId('idem');
    await client.startSession(handleId, { agent: 'mock' }, { idempotencyKey: `start ${handleId}` });
    assert.deepEqual(await client.session(handleId).create({ agent: 'mock' }, { idempotencyKey: `start ${handleId}` }), first);
    assert.deepEqual(answers(`POST /sessions/${handleId}`), [
      [201, null],
      [201, 'true'],
    ]);
  });

  it('sendMessage sent again with its key answers the same turnId, replayed, and starts one turn', async () => {
    const id = uniqueId('idem');
    const session = await client.startSession(id, { agent: 'mock' });
    const key = `send ${id} 1`;
    const first = await client.sendMessage(id, { message: 'hello' }, { idempotencyKey: key });
    // While the turn runs (a plain send would be a 409 turn-in-progress) and after it ended.
    const again = await session.send('hello', { idempotencyKey: key });
    assert.equal(again.turnId, first.turnId);
    for await (const event of session.events()) if (event.type === 'turnEnded' && event.data.turnId === first.turnId) break;
    const late = await client.sendMessage(id, { message: 'hello' }, { idempotencyKey: key });
    assert.equal(late.turnId, first.turnId);
    assert.deepEqual(answers(`POST /sessions/${id}/messages`), [
      [202, null],
      [202, 'true'],
      [202, 'true'],
    ]);

    const turnStarts = (events: UniversalEvent[]): string[] =>
      events.flatMap((e) => (e.type === 'turnStarted' ? [e.data.turnId] : []));
    assert.deepEqual(turnStarts(await collect(session.history())), [first.turnId], 'one turnStarted');

    // Another message with the key is another request; a new key, a new turn.
    await assert.rejects(session.send('hello!', { idempotencyKey: key }), isProblem(422, 'idempotency-key-reused'));
    const next = await session.send('hello', { idempotencyKey: `send ${id} 2` });
    assert.notEqual(next.turnId, first.turnId);
    for await (const event of session.events()) if (event.type === 'turnEnded' && event.data.turnId === next.turnId) break;
    assert.deepEqual(turnStarts(await collect(session.history())), [first.turnId, next.turnId]);
  });
});
