// Local mode: a private daemon on a free port, its token only in its environment, a
// temporary data dir, stopped (and cleaned) by close() / Symbol.asyncDispose.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConnectionError } from 'sandbox-daemon';
import { SandboxDaemon, startLocal } from 'sandbox-daemon/local';
import { daemonBinary } from './helpers.js';

describe('local mode', () => {
  it('starts SANDBOX_DAEMON_BIN on a free port with a private token and data dir, and stops it', async () => {
    assert.ok(process.env.SANDBOX_DAEMON_BIN, 'the default binary comes from SANDBOX_DAEMON_BIN');
    const lines: string[] = [];
    const daemon = await SandboxDaemon.start({ validate: true, onLog: (line) => lines.push(line) });
    let closed = false;
    try {
      assert.match(daemon.baseUrl, /^http:\/\/127\.0\.0\.1:[0-9]+\/$/);
      assert.notEqual(new URL(daemon.baseUrl).port, '2468');
      assert.match(daemon.token, /^[0-9a-f]{64}$/);
      assert.ok(daemon.running);
      assert.ok(existsSync(daemon.dataDir));
      assert.equal((await daemon.health()).status, 'ok');
      assert.ok((await daemon.listAgents()).agents.length > 0, 'the token is accepted');

      const cmdline = readFileSync(`/proc/${daemon.pid}/cmdline`, 'utf8').split('\0');
      assert.ok(!cmdline.some((arg) => arg.includes(daemon.token)), 'the token is not on the command line');
      assert.deepEqual(cmdline.slice(1, 5), ['--host', '127.0.0.1', '--port', '0']);
      assert.ok(cmdline.includes('--data-dir') && cmdline.includes(daemon.dataDir));
      const announcement = `listening on ${daemon.baseUrl.slice(0, -1)}`;
      assert.ok(daemon.logs.some((line) => line.includes(announcement)), 'logs keeps the output');
      assert.ok(lines.some((line) => line.includes(announcement)), 'onLog saw the output');

      const { dataDir } = daemon;
      await daemon[Symbol.asyncDispose]();
      closed = true;
      assert.equal(daemon.running, false);
      assert.equal(existsSync(dataDir), false, 'the temporary data dir is removed');
      await assert.rejects(daemon.health(), ConnectionError);
      await daemon.close(); // idempotent
    } finally {
      if (!closed) await daemon.close();
    }
  });

  it('keeps a given data dir, and sessions survive a restart on it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sdk-local-'));
    try {
      const first = await startLocal({ dataDir });
      await first.startSession('kept', { agent: 'mock' });
      await first.close();
      assert.ok(existsSync(join(dataDir, 'store.db')));
      const second = await startLocal({ dataDir });
      try {
        assert.equal((await second.getSession('kept')).agent, 'mock');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('ignores an inherited SANDBOX_DAEMON_TOKEN_FILE: the token travels in SANDBOX_DAEMON_TOKEN', async () => {
    const daemon = await startLocal({ env: { SANDBOX_DAEMON_TOKEN_FILE: '/nonexistent/token' }, token: 'chosen-token' });
    try {
      assert.equal(daemon.token, 'chosen-token');
      assert.ok((await daemon.listAgents()).agents.length > 0);
    } finally {
      await daemon.close();
    }
  });

  it('explains a binary that cannot start, or exits before it is ready', async () => {
    await assert.rejects(startLocal({ binary: '/nonexistent/sandbox-daemon' }), /could not start .*SANDBOX_DAEMON_BIN/s);
    await assert.rejects(
      startLocal({ binary: daemonBinary(), args: ['--no-such-flag'] }),
      /exited before it was ready .*no-such-flag/s,
    );
  });
});
