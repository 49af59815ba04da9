// What a turn changed in the workspace, through the SDK, against the real daemon: the mock's
// `write` turn adds a file (listed with its diff, counted in its `turnEnded`), a later one
// overwrites a file changed between the turns (counted as an update of what it found, not
// of what the turn before left), a turn that writes nothing changes nothing; unknown turns,
// running turns and a daemon that does not track changes.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SandboxDaemon, type Session } from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { type Exchange, isProblem, recordingFetch, startDaemon, uniqueId } from './helpers.js';

/** The file the mock's `write` turn writes, and what it writes. */
const WRITTEN = 'mock_written.txt';
const CONTENT = 'written by the mock\n';

describe('turn changes against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  /** A validating client of the same daemon that records every exchange. */
  let client: SandboxDaemon;
  const exchanges: Exchange[] = [];
  let root: string;

  before(async () => {
    daemon = await startDaemon({ validate: true });
    root = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-changes-')));
    client = new SandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token, validate: true, fetch: recordingFetch(exchanges) });
  });
  after(async () => {
    await daemon.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A mock session (of the recording client) whose working directory is a fresh directory. */
  async function newSession(): Promise<{ session: Session; cwd: string }> {
    const cwd = join(root, uniqueId('ws'));
    await mkdir(cwd);
    return { session: await client.startSession(uniqueId('changes'), { agent: 'mock', cwd }), cwd };
  }

  it('turnChanges lists the file the mock wrote with its diff; turnEnded carries the same counts', async () => {
    const { session, cwd } = await newSession();
    await writeFile(join(cwd, 'kept.txt'), 'untouched\n');
    const { turnId, ended } = await session.run('write a file', { onPermission: () => 'once' });
    assert.equal(await readFile(join(cwd, WRITTEN), 'utf8'), CONTENT, 'the mock wrote its file');
    assert.deepEqual(ended.changes, { added: 1, modified: 0, deleted: 0 });

    const changes = await session.turnChanges(turnId);
    assert.equal(changes.turnId, turnId);
    assert.deepEqual(changes.counts, ended.changes);
    assert.deepEqual(changes.files, [
      {
        path: WRITTEN,
        change: 'add',
        sizeAfter: CONTENT.length,
        diff: `--- /dev/null\n+++ b/${WRITTEN}\n@@ -0,0 +1 @@\n+${CONTENT}`,
      },
    ]);
    assert.ok(Date.parse(changes.takenAt) > 0);
    assert.deepEqual(await client.turnChanges(session.id, turnId), changes, 'asked again: the same');
    const asked = exchanges.filter((e) => e.path === `/sessions/${session.id}/turns/${turnId}/changes`);
    assert.deepEqual(asked.map((e) => [e.method, e.status]), [
      ['GET', 200],
      ['GET', 200],
    ]);
  });

  it('a change made between turns is no turn\'s: the next turn that writes counts an update of what it found', async () => {
    const { session, cwd } = await newSession();
    await session.run('write a file', { onPermission: () => 'once' });
    // Changed outside any turn (through the files API; a process would be the same).
    await session.writeFile(WRITTEN, 'mine\n');
    const quiet = await session.run('hello');
    assert.deepEqual(quiet.ended.changes, { added: 0, modified: 0, deleted: 0 });
    assert.deepEqual((await session.turnChanges(quiet.turnId)).files, []);

    const again = await session.run('write a file', { onPermission: () => 'once' });
    assert.deepEqual(again.ended.changes, { added: 0, modified: 1, deleted: 0 });
    const changes = await session.turnChanges(again.turnId);
    assert.deepEqual(changes.files, [
      {
        path: WRITTEN,
        change: 'update',
        sizeBefore: 'mine\n'.length,
        sizeAfter: CONTENT.length,
        diff: `--- a/${WRITTEN}\n+++ b/${WRITTEN}\n@@ -1 +1 @@\n-mine\n+${CONTENT}`,
      },
    ]);
    assert.equal(await readFile(join(cwd, WRITTEN), 'utf8'), CONTENT);
  });

  it('an unknown turn is 404 changes-not-found, a running one 409 turn-in-progress, an unknown session 404', async () => {
    const { session } = await newSession();
    await assert.rejects(session.turnChanges('turn_99'), isProblem(404, 'changes-not-found'));
    const turn = session.turn('slow');
    let asked = false;
    for await (const event of turn) {
      if (event.type !== 'itemDelta' || asked) continue;
      asked = true;
      await assert.rejects(session.turnChanges(turn.turnId ?? ''), isProblem(409, 'turn-in-progress'));
      await session.cancel();
    }
    assert.ok(asked);
    assert.equal(turn.ended?.stopReason, 'cancelled');
    assert.ok(turn.ended?.changes, 'a cancelled turn has its changes too');
    assert.deepEqual((await session.turnChanges(turn.turnId ?? '')).counts, turn.ended.changes);
    await assert.rejects(client.turnChanges(uniqueId('nobody'), 'turn_1'), isProblem(404, 'session-not-found'));
  });
});

describe('turn changes on a daemon started with --no-turn-changes', () => {
  let daemon: LocalSandboxDaemon;
  let cwd: string;

  before(async () => {
    daemon = await startDaemon({ validate: true, args: ['--no-turn-changes'] });
    cwd = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-nochanges-')));
  });
  after(async () => {
    await daemon.close();
    await rm(cwd, { recursive: true, force: true });
  });

  it('turnEnded carries no counts, and turnChanges is 404 changes-not-found', async () => {
    const session = await daemon.startSession(uniqueId('untracked'), { agent: 'mock', cwd });
    const { turnId, ended } = await session.run('write a file', { onPermission: () => 'once' });
    assert.equal(await readFile(join(cwd, WRITTEN), 'utf8'), CONTENT);
    assert.equal(ended.changes ?? null, null);
    await assert.rejects(session.turnChanges(turnId), isProblem(404, 'changes-not-found'));
  });
});

describe('turn changes on the wire (fake fetch)', () => {
  it('asks GET /sessions/{sessionId}/turns/{turnId}/changes', async () => {
    const urls: string[] = [];
    const body = { turnId: 'turn/1', counts: { added: 0, modified: 0, deleted: 0 }, files: [], takenAt: '2026-01-01T00:00:00Z' };
    const client = new SandboxDaemon({
      baseUrl: 'http://daemon.test/',
      validate: true,
      fetch: async (input, init) => {
        urls.push(`${init?.method ?? 'GET'} ${String(input)}`);
        return Response.json(body);
      },
    });
    assert.deepEqual(await client.session('s').turnChanges('turn/1'), body);
    assert.deepEqual(urls, ['GET http://daemon.test/sessions/s/turns/turn%2F1/changes']);
  });
});
