// The processes API through the SDK, against the real daemon: programs run to their end
// (exit code, output, truncation, timeout, refused environment), long-running ones followed
// live to their exit (every line exactly once, across an abort and resume and across dropped
// connections), gaps in a bounded log, stop and kill, list, get and delete. Then what the
// client puts on the wire and makes of crafted frames, through a fake fetch.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ProblemError,
  ProcessLogFrameSchema,
  ProtocolError,
  SandboxDaemon,
  ValidationError,
  type LogChunk,
  type ProcessInfo,
  type ProcessLogFrame,
  type Session,
} from 'sandbox-daemon';
import { SandboxDaemon as InlineSandboxDaemon } from 'sandbox-daemon/inline';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { droppingFetch } from './faults.js';
import { collect, type Exchange, isProblem, range, recordingFetch, startDaemon, uniqueId } from './helpers.js';

/** The daemon's limits in these tests: 3 processes a session, 4 KiB of log a process, runs of 3 s. */
const MAX_PROCESSES = 3;
const LOG_BYTES = 4096;
const MAX_RUN_MS = 3000;
const FAST_RECONNECT = { retries: 5, initialDelayMs: 1, maxDelayMs: 20 };

const isAbort = (error: unknown): boolean => error instanceof DOMException && error.name === 'AbortError';

/** A `sh -c` script printing `line 1` … `line <count>` on stdout, `pause` seconds apart, then `done` on stderr. */
function numberedLines(count: number, pause: number): string {
  return `i=1; while [ $i -le ${count} ]; do echo "line $i"; i=$((i+1)); sleep ${pause}; done; echo done >&2`;
}

/** `line 1` … `line <count>`. */
const expectedLines = (count: number): string[] => range(1, count).map((i) => `line ${i}`);

/** The log chunks among `frames`. */
const chunksOf = (frames: readonly ProcessLogFrame[]): LogChunk[] =>
  frames.flatMap((f) => (f.event === 'log' ? [f.data] : []));

/** The lines one stream wrote, from the chunks of `frames` (a chunk may hold several lines, or part of one). */
function linesOf(frames: readonly ProcessLogFrame[], stream: 'stdout' | 'stderr' = 'stdout'): string[] {
  const text = chunksOf(frames)
    .filter((c) => c.stream === stream)
    .map((c) => c.data)
    .join('');
  return text === '' ? [] : text.replace(/\n$/, '').split('\n');
}

/** Follows a process's log to its end; answers its frames and the ended process. */
async function followToExit(session: Session, processId: string): Promise<{ frames: ProcessLogFrame[]; exit: ProcessInfo }> {
  const frames = await collect(session.followProcessLogs(processId));
  const last = frames.at(-1);
  assert.equal(last?.event, 'exit', 'the log ends with its exit frame');
  assert.equal(frames.filter((f) => f.event === 'exit').length, 1);
  return { frames, exit: (last as Extract<ProcessLogFrame, { event: 'exit' }>).data };
}

/** The state of a Linux process: its `/proc/<pid>/stat` state letter, or `gone`. */
function procState(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0] ?? '?';
  } catch {
    return 'gone';
  }
}

describe('processes against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  /** A validating client of the same daemon that records every exchange. */
  let client: SandboxDaemon;
  const exchanges: Exchange[] = [];
  let root: string;

  before(async () => {
    daemon = await startDaemon({
      validate: true,
      args: [
        ...['--max-processes', String(MAX_PROCESSES), '--process-log-bytes', String(LOG_BYTES)],
        ...['--process-timeout', `${MAX_RUN_MS / 1000}s`, '--sse-keep-alive-secs', '1'],
      ],
    });
    root = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-processes-')));
    client = new SandboxDaemon({
      baseUrl: daemon.baseUrl,
      token: daemon.token,
      validate: true,
      reconnect: FAST_RECONNECT,
      fetch: recordingFetch(exchanges),
    });
  });
  after(async () => {
    await daemon.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A mock session (of the recording client) whose working directory is a fresh directory. */
  async function newSession(): Promise<{ session: Session; cwd: string }> {
    const cwd = join(root, uniqueId('ws'));
    await mkdir(cwd);
    return { session: await client.startSession(uniqueId('proc'), { agent: 'mock', cwd }), cwd };
  }

  it('runProcess answers the exit code, stdout and stderr of a program run in the working directory', async () => {
    const { session, cwd } = await newSession();
    const out = await session.runProcess({ command: 'sh', args: ['-c', 'echo out; echo err >&2; pwd; exit 3'] });
    assert.deepEqual(
      { ...out, durationMs: typeof out.durationMs },
      {
        exitCode: 3,
        timedOut: false,
        stdout: `out\n${cwd}\n`,
        stderr: 'err\n',
        stdoutTruncated: false,
        stderrTruncated: false,
        durationMs: 'number',
      },
    );
    assert.equal(out.signal ?? null, null, 'it exited: no signal');

    // Arguments go as they are (no shell), `cwd` is relative to the working directory, `env` is added.
    await mkdir(join(cwd, 'sub', 'dir'), { recursive: true });
    const where = await client.runProcess(session.id, {
      command: 'sh',
      args: ['-c', 'printf "%s|%s|%s" "$1" "$GREETING" "$(pwd)"', 'sh', 'two words; $(not run)'],
      cwd: 'sub/dir',
      env: { GREETING: 'héllo' },
    });
    assert.equal(where.exitCode, 0);
    assert.equal(where.stdout, `two words; $(not run)|héllo|${join(cwd, 'sub', 'dir')}`);
    // HOME is the processes' private one, not the daemon's.
    const home = (await session.runProcess({ command: 'sh', args: ['-c', 'printf %s "$HOME"'] })).stdout;
    assert.match(home, /^\//);
    assert.notEqual(home, process.env.HOME);

    const run = exchanges.filter((e) => e.method === 'POST' && e.path === `/sessions/${session.id}/processes/run`);
    assert.deepEqual(run.map((e) => e.status), [200, 200, 200]);
    assert.equal(run[0]?.requestHeaders.get('content-type'), 'application/json');
    assert.deepEqual((await session.listProcesses()).processes, [], 'a run is not a long-running process');
  });

  it('runProcess keeps maxOutputBytes of each stream and says it truncated the rest', async () => {
    const { session } = await newSession();
    const out = await session.runProcess({
      command: 'sh',
      args: ['-c', "head -c 5000 /dev/zero | tr '\\0' a; printf 'short' >&2"],
      maxOutputBytes: 10,
    });
    assert.equal(out.exitCode, 0);
    assert.equal(out.stdout, 'a'.repeat(10));
    assert.equal(out.stdoutTruncated, true);
    assert.equal(out.stderr, 'short');
    assert.equal(out.stderrTruncated, false);
    const exact = await session.runProcess({ command: 'printf', args: ['0123456789'], maxOutputBytes: 10 });
    assert.deepEqual([exact.stdout, exact.stdoutTruncated], ['0123456789', false], 'exactly the limit is not truncated');
    const none = await session.runProcess({ command: 'printf', args: ['x'], maxOutputBytes: 0 });
    assert.deepEqual([none.stdout, none.stdoutTruncated], ['', true]);
  });

  it('runProcess kills the whole process group past timeoutMs (cut to --process-timeout): timedOut, SIGKILL', async () => {
    const { session } = await newSession();
    const started = Date.now();
    // The shell prints the pid of a child it leaves running, then waits for it.
    const out = await session.runProcess({ command: 'sh', args: ['-c', 'sleep 30 & echo $!; wait'], timeoutMs: 300 });
    assert.equal(out.timedOut, true);
    assert.equal(out.signal, 9);
    assert.equal(out.exitCode ?? null, null);
    assert.ok(out.durationMs >= 300 && out.durationMs < 10_000, `ran ${out.durationMs} ms`);
    assert.ok(Date.now() - started < 10_000);
    const child = Number(out.stdout.trim());
    assert.ok(child > 0, `the child's pid: ${out.stdout}`);
    // Its child was killed with it (gone, or a zombie nobody reaped).
    for (let i = 0; i < 50 && !['gone', 'Z'].includes(procState(child)); i++) await new Promise((r) => setTimeout(r, 40));
    assert.ok(['gone', 'Z'].includes(procState(child)), `the child ${child} is ${procState(child)}`);

    // A timeoutMs past the daemon's --process-timeout is cut to it.
    const capped = await session.runProcess({ command: 'sleep', args: ['30'], timeoutMs: 3_600_000 });
    assert.equal(capped.timedOut, true);
    assert.ok(capped.durationMs >= MAX_RUN_MS && capped.durationMs < MAX_RUN_MS + 5000, `ran ${capped.durationMs} ms`);
  });

  it(
    'runProcess keeps the output of a program that leaves a child holding its pipes',
    async () => {
      const { session } = await newSession();
      const out = await session.runProcess({ command: 'sh', args: ['-c', 'sleep 3 & echo hi'] });
      assert.equal(out.exitCode, 0);
      assert.equal(out.stdout, 'hi\n');
      assert.equal(out.stdoutTruncated, false);
    },
  );

  it('refuses a protected env name (422 invalid-body), an unknown program (422 process-not-started), a bad cwd', async () => {
    const { session, cwd } = await newSession();
    for (const name of ['HOME', 'LD_PRELOAD', 'ANTHROPIC_API_KEY']) {
      for (const call of [session.runProcess.bind(session), session.startProcess.bind(session)]) {
        const error = await call({ command: 'env', env: { [name]: 'x' } }).catch((e: unknown) => e);
        assert.ok(isProblem(422, 'invalid-body')(error));
        assert.match((error as ProblemError).detail, new RegExp(`env\\.${name}`));
      }
    }
    await assert.rejects(session.runProcess({ command: 'no-such-program-here' }), isProblem(422, 'process-not-started'));
    await assert.rejects(session.startProcess({ command: 'no-such-program-here' }), isProblem(422, 'process-not-started'));

    const outside = await mkdtemp(join(root, 'outside-'));
    await symlink(outside, join(cwd, 'out'));
    await writeFile(join(cwd, 'file'), 'x');
    for (const bad of ['../x', '/etc', 'sub/../..']) {
      // The spec says 400 invalid-path; the daemon's body check answers 422 invalid-body first.
      const error = await session.runProcess({ command: 'pwd', cwd: bad }).catch((e: unknown) => e);
      assert.ok(error instanceof ProblemError, String(error));
      assert.ok(
        (error.status === 422 && error.kind === 'invalid-body') || (error.status === 400 && error.kind === 'invalid-path'),
        `${bad}: ${error.message}`,
      );
    }
    await assert.rejects(session.runProcess({ command: 'pwd', cwd: 'out' }), isProblem(403, 'outside-workspace'));
    await assert.rejects(session.startProcess({ command: 'pwd', cwd: 'out' }), isProblem(403, 'outside-workspace'));
    await assert.rejects(session.runProcess({ command: 'pwd', cwd: 'missing' }), isProblem(404, 'file-not-found'));
    await assert.rejects(session.runProcess({ command: 'pwd', cwd: 'file' }), isProblem(409, 'wrong-file-kind'));
    assert.deepEqual((await session.listProcesses()).processes, [], 'nothing was started');
    await assert.rejects(client.runProcess(uniqueId('nobody'), { command: 'true' }), isProblem(404, 'session-not-found'));
  });

  it('startProcess + followProcessLogs: numbered lines printed slowly, followed live to the exit, each exactly once', async () => {
    const { session } = await newSession();
    const info = await session.startProcess({ command: 'sh', args: ['-c', numberedLines(20, 0.05)] });
    assert.deepEqual(
      { status: info.status, command: info.command, args: info.args, cwd: info.cwd },
      { status: 'running', command: 'sh', args: ['-c', numberedLines(20, 0.05)], cwd: '' },
    );
    // (Its first line may have been read by the time the daemon answers.)
    assert.ok(info.pid > 0 && Date.parse(info.startedAt) > 0 && info.lastSequence <= 1);
    assert.deepEqual(
      exchanges.filter((e) => e.method === 'POST' && e.path === `/sessions/${session.id}/processes`).map((e) => e.status),
      [201],
    );

    const stream = session.followProcessLogs(info.processId);
    assert.equal(stream.processId, info.processId);
    assert.equal(stream.sessionId, session.id);
    const frames = await collect(stream);
    assert.equal(frames.at(-1)?.event, 'exit');
    assert.deepEqual(linesOf(frames), expectedLines(20));
    assert.deepEqual(linesOf(frames, 'stderr'), ['done']);
    const sequences = chunksOf(frames).map((c) => c.sequence);
    assert.deepEqual(sequences, range(1, sequences.length), 'every chunk once, in order');
    assert.equal(stream.lastSequence, sequences.length);
    assert.equal(stream.reconnects, 0);
    const exit = (frames.at(-1) as Extract<ProcessLogFrame, { event: 'exit' }>).data;
    assert.deepEqual(
      { status: exit.status, exitCode: exit.exitCode, lastSequence: exit.lastSequence },
      { status: 'exited', exitCode: 0, lastSequence: sequences.length },
    );
    assert.ok(Date.parse(exit.endedAt ?? '') >= Date.parse(info.startedAt));

    const follows = exchanges.filter((e) => e.path === `/sessions/${session.id}/processes/${info.processId}/logs`);
    assert.deepEqual(follows.map((e) => [e.search.toString(), e.requestHeaders.get('accept')]), [['follow=true', 'text/event-stream']]);

    // The same log as pages, and as it stands once exited.
    const page = await session.processLogs(info.processId);
    assert.deepEqual(page.chunks, chunksOf(frames));
    assert.equal(page.firstKept, 1);
    assert.deepEqual(page.process, exit);
    const later = await client.processLogs(session.id, info.processId, { offset: 5 });
    assert.deepEqual(later.chunks, chunksOf(frames).slice(5));
    assert.deepEqual(await session.getProcess(info.processId), exit);
    // Followed again once exited: the kept log, then the exit frame at once.
    assert.deepEqual(await collect(session.followProcessLogs(info.processId)), frames);
    assert.deepEqual(await collect(session.followProcessLogs(info.processId, { offset: sequences.length })), [frames.at(-1)]);
  });

  it('a follow cut midway (abort) and resumed from its lastSequence sees every line exactly once', async () => {
    const { session } = await newSession();
    const info = await session.startProcess({ command: 'sh', args: ['-c', numberedLines(40, 0.05)] });
    const controller = new AbortController();
    const first = session.followProcessLogs(info.processId, { signal: controller.signal });
    const seen: ProcessLogFrame[] = [];
    await assert.rejects(
      (async () => {
        for await (const frame of first) {
          seen.push(frame);
          if (linesOf(seen).length >= 10) controller.abort();
        }
      })(),
      isAbort,
    );
    assert.ok(seen.every((f) => f.event === 'log'), 'cut before its end');
    assert.equal(first.lastSequence, chunksOf(seen).at(-1)?.sequence);
    assert.equal((await session.getProcess(info.processId)).status, 'running', 'aborting a follow leaves the process running');

    const rest = session.followProcessLogs(info.processId, { offset: first.lastSequence });
    const frames = [...seen, ...(await collect(rest))];
    assert.deepEqual(linesOf(frames), expectedLines(40), 'no line lost, none twice');
    const sequences = chunksOf(frames).map((c) => c.sequence);
    assert.deepEqual(sequences, range(1, sequences.length));
    assert.equal(frames.at(-1)?.event, 'exit');
    const follows = exchanges.filter((e) => e.path === `/sessions/${session.id}/processes/${info.processId}/logs`);
    assert.deepEqual(
      follows.map((e) => [e.search.get('offset'), e.requestHeaders.get('last-event-id')]),
      [
        [null, null],
        [String(first.lastSequence), null],
      ],
    );
  });

  it('a dropped connection is resumed with Last-Event-ID: every line once, live and replayed', async () => {
    const { session } = await newSession();
    // Live: the connection breaks twice while the program prints.
    const info = await session.startProcess({ command: 'sh', args: ['-c', numberedLines(30, 0.03)] });
    const live = droppingFetch([4, 3]);
    const viaDropping = new SandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token, validate: true, fetch: live.fetch, reconnect: FAST_RECONNECT });
    const stream = viaDropping.followProcessLogs(session.id, info.processId);
    const delivered: number[] = [];
    const frames: ProcessLogFrame[] = [];
    for await (const frame of stream) {
      frames.push(frame);
      if (frame.event === 'log') delivered.push(frame.data.sequence);
    }
    assert.deepEqual(linesOf(frames), expectedLines(30));
    assert.deepEqual(delivered, range(1, delivered.length));
    assert.equal(stream.reconnects, 2);
    assert.equal(live.requests.length, 3);
    assert.deepEqual(live.requests[0], { offset: null, lastEventId: null });
    for (const request of live.requests.slice(1)) {
      assert.equal(request.offset, null);
      assert.ok(delivered.includes(Number(request.lastEventId)), `resumed after a delivered chunk: ${request.lastEventId}`);
    }
    assert.ok(Number(live.requests[1]?.lastEventId) < Number(live.requests[2]?.lastEventId));

    // Replayed once exited: the frames are the log's chunks, so where each cut lands is known.
    const replay = droppingFetch([3, 2]);
    const again = await collect(
      new SandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token, fetch: replay.fetch, reconnect: FAST_RECONNECT }).followProcessLogs(
        session.id,
        info.processId,
        { offset: 1 },
      ),
    );
    assert.deepEqual(
      replay.requests.map((r) => [r.offset, r.lastEventId]),
      [
        ['1', null],
        [null, '4'],
        [null, '6'],
      ],
    );
    assert.deepEqual(again, frames.slice(1));
  });

  it('a log past --process-log-bytes drops its oldest chunks: a gap frame, firstKept, and a follow from inside the gap', async () => {
    const { session } = await newSession();
    // 150 lines of 64 bytes, each its own chunk: more than twice the 4 KiB the log keeps.
    const script = `i=1; while [ $i -le 150 ]; do printf 'line %03d %s\\n' $i ${'x'.repeat(54)}; i=$((i+1)); sleep 0.005; done`;
    const info = await session.startProcess({ command: 'sh', args: ['-c', script] });
    const { frames, exit } = await followToExit(session, info.processId);
    const page = await session.processLogs(info.processId);
    assert.ok(page.firstKept > 1, `chunks were dropped: firstKept ${page.firstKept}`);
    assert.equal(page.chunks[0]?.sequence, page.firstKept);
    assert.equal(page.chunks.at(-1)?.sequence, exit.lastSequence);
    assert.ok(page.chunks.reduce((n, c) => n + new TextEncoder().encode(c.data).length, 0) <= LOG_BYTES + 200);

    // Followed after the fact: a gap for what was dropped, then what is kept, then the exit.
    const replay = await collect(session.followProcessLogs(info.processId));
    assert.deepEqual(replay[0], { event: 'gap', data: { from: 1, to: page.firstKept - 1 } });
    assert.deepEqual(chunksOf(replay), page.chunks);
    assert.deepEqual(replay.at(-1), { event: 'exit', data: exit });
    const lines = linesOf(replay);
    assert.equal(lines.at(-1), `line 150 ${'x'.repeat(54)}`);
    // From inside the gap: the gap starts after the offset.
    const inside = session.followProcessLogs(info.processId, { offset: 3 });
    const fromThree = await collect(inside);
    assert.deepEqual(fromThree[0], { event: 'gap', data: { from: 4, to: page.firstKept - 1 } });
    assert.equal(inside.lastSequence, exit.lastSequence);
    // Past it: no gap.
    const past = await collect(session.followProcessLogs(info.processId, { offset: page.firstKept + 1 }));
    assert.equal(past[0]?.event === 'log' && past[0].data.sequence, page.firstKept + 2);
    // The live follow saw each line at most once, in order (what it missed is a gap).
    const seen = chunksOf(frames).map((c) => c.sequence);
    assert.deepEqual(seen, [...seen].sort((a, b) => a - b));
    assert.equal(new Set(seen).size, seen.length);
  });

  it('stopProcess sends SIGTERM and killProcess SIGKILL to the group; the end shows in getProcess and the exit frame', async () => {
    const { session } = await newSession();
    const sleeper = await session.startProcess({ command: 'sleep', args: ['30'] });
    const stopped = await session.stopProcess(sleeper.processId);
    assert.equal(stopped.processId, sleeper.processId, 'answers the process as it stands');
    const { exit } = await followToExit(session, sleeper.processId);
    assert.deepEqual({ status: exit.status, signal: exit.signal, exitCode: exit.exitCode ?? null }, { status: 'exited', signal: 15, exitCode: null });
    assert.deepEqual(await session.getProcess(sleeper.processId), exit);

    // A program that ignores SIGTERM outlives stop, not kill.
    const stubborn = await session.startProcess({ command: 'sh', args: ['-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done'] });
    for await (const frame of session.followProcessLogs(stubborn.processId)) if (frame.event === 'log') break;
    await client.stopProcess(session.id, stubborn.processId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal((await session.getProcess(stubborn.processId)).status, 'running', 'SIGTERM ignored');
    await client.killProcess(session.id, stubborn.processId);
    const killed = (await followToExit(session, stubborn.processId)).exit;
    assert.deepEqual({ status: killed.status, signal: killed.signal }, { status: 'exited', signal: 9 });

    // Once exited, stop and kill change nothing.
    assert.deepEqual(await session.stopProcess(sleeper.processId), exit);
    assert.deepEqual(await session.killProcess(stubborn.processId), killed);
    const signals = exchanges.filter((e) => e.method === 'POST' && /\/processes\/p\d+\/(stop|kill)$/.test(e.path) && e.path.includes(session.id));
    assert.deepEqual(signals.map((e) => [e.path.split('/').at(-1), e.status, e.requestHeaders.get('content-type')]), [
      ['stop', 200, 'application/json'],
      ['stop', 200, 'application/json'],
      ['kill', 200, 'application/json'],
      ['stop', 200, 'application/json'],
      ['kill', 200, 'application/json'],
    ]);
    await assert.rejects(session.stopProcess('p999'), isProblem(404, 'process-not-found'));
    await assert.rejects(session.killProcess('p999'), isProblem(404, 'process-not-found'));
  });

  it('listProcesses, getProcess, deleteProcess: oldest first; 409 process-running while it runs; 404 once deleted', async () => {
    const { session } = await newSession();
    const running = await session.startProcess({ command: 'sleep', args: ['30'] });
    const quick = await session.startProcess({ command: 'sh', args: ['-c', 'echo quick'] });
    const quickEnd = (await followToExit(session, quick.processId)).exit;
    assert.equal(quickEnd.exitCode, 0);

    const { processes } = await session.listProcesses();
    assert.deepEqual(processes.map((p) => [p.processId, p.status]), [
      [running.processId, 'running'],
      [quick.processId, 'exited'],
    ]);
    assert.deepEqual(processes[1], quickEnd);
    const got = await client.getProcess(session.id, running.processId);
    assert.deepEqual(got, { ...running, lastSequence: 0 });

    await assert.rejects(session.deleteProcess(running.processId), isProblem(409, 'process-running'));
    assert.equal(await session.deleteProcess(quick.processId), undefined);
    await assert.rejects(session.getProcess(quick.processId), isProblem(404, 'process-not-found'));
    await assert.rejects(session.processLogs(quick.processId), isProblem(404, 'process-not-found'));
    await assert.rejects(collect(session.followProcessLogs(quick.processId)), isProblem(404, 'process-not-found'));
    await assert.rejects(client.deleteProcess(session.id, quick.processId), isProblem(404, 'process-not-found'));

    await session.killProcess(running.processId);
    await followToExit(session, running.processId);
    await session.deleteProcess(running.processId);
    assert.deepEqual((await session.listProcesses()).processes, []);
    const deletes = exchanges.filter((e) => e.method === 'DELETE' && e.path.startsWith(`/sessions/${session.id}/processes/`));
    assert.deepEqual(deletes.map((e) => e.status), [409, 204, 404, 204]);
    await assert.rejects(client.listProcesses(uniqueId('nobody')), isProblem(404, 'session-not-found'));
  });

  it(`at most --max-processes (${MAX_PROCESSES}) run at once: 409 too-many-processes`, async () => {
    const { session } = await newSession();
    const started: ProcessInfo[] = [];
    for (let i = 0; i < MAX_PROCESSES; i++) started.push(await session.startProcess({ command: 'sleep', args: ['30'] }));
    await assert.rejects(session.startProcess({ command: 'sleep', args: ['30'] }), isProblem(409, 'too-many-processes'));
    await assert.rejects(session.runProcess({ command: 'true' }), isProblem(409, 'too-many-processes'));
    const [first, ...others] = started;
    assert.ok(first);
    await session.killProcess(first.processId);
    await followToExit(session, first.processId);
    assert.equal((await session.runProcess({ command: 'true' })).exitCode, 0, 'a slot is free again');
    for (const p of others) await session.killProcess(p.processId);
    for (const p of others) await followToExit(session, p.processId);
  });

  it('an ended session kills its processes (a follow sees the exit) and refuses new ones (409 session-ended)', async () => {
    const { session } = await newSession();
    const sleeper = await session.startProcess({ command: 'sh', args: ['-c', 'echo ready; exec sleep 30'] });
    const following = session.followProcessLogs(sleeper.processId)[Symbol.asyncIterator]();
    assert.equal((await following.next()).value?.event, 'log', 'the follow is connected');
    await session.end();
    const frames: ProcessLogFrame[] = [];
    for (let next = await following.next(); !next.done; next = await following.next()) frames.push(next.value);
    assert.deepEqual(frames.map((f) => f.event), ['exit']);
    const exit = (frames[0] as Extract<ProcessLogFrame, { event: 'exit' }>).data;
    assert.equal(exit.status, 'exited');
    assert.equal(typeof exit.signal, 'number');
    await assert.rejects(session.startProcess({ command: 'true' }), isProblem(409, 'session-ended'));
    await assert.rejects(session.runProcess({ command: 'true' }), isProblem(409, 'session-ended'));
  });
});

describe('processes on the wire (fake fetch)', () => {
  /** An SSE answer of `frames` (each `[event, data, id?]`), then the end of the body. */
  function sse(frames: ReadonlyArray<readonly [string, unknown, number?]>): Response {
    const text = frames
      .map(([event, data, id]) => `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`)
      .join(': keep-alive\n\n');
    return new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }

  const chunk = (sequence: number, data = `c${sequence}`): LogChunk => ({ sequence, stream: 'stdout', data, time: '2026-01-01T00:00:00Z' });
  const info: ProcessInfo = {
    processId: 'p1',
    pid: 42,
    command: 'sh',
    args: [],
    cwd: '',
    status: 'exited',
    exitCode: 0,
    startedAt: '2026-01-01T00:00:00Z',
    endedAt: '2026-01-01T00:00:01Z',
    lastSequence: 6,
    tty: false,
  };

  /** A client whose fetch answers each request with the next of `answers`, and records the requests. */
  function fake(answers: Array<() => Response>, validate = false) {
    const requests: Array<{ method: string; url: string; headers: Headers; body: unknown }> = [];
    const options = {
      baseUrl: 'http://daemon.test/',
      reconnect: FAST_RECONNECT,
      fetch: async (input: string | URL | Request, init?: RequestInit) => {
        requests.push({ method: init?.method ?? 'GET', url: String(input), headers: new Headers(init?.headers), body: init?.body });
        const answer = answers.shift();
        if (!answer) throw new TypeError('no more answers');
        return answer();
      },
    };
    return { client: validate ? new SandboxDaemon({ ...options, validate: true }) : new InlineSandboxDaemon(options), requests };
  }

  it('follows with ?follow=true, resumes after a clean close with Last-Event-ID past a gap, skips kinds it does not know', async () => {
    const { client, requests } = fake([
      () => sse([['log', chunk(1), 1], ['progress', { any: 1 }], ['gap', { from: 2, to: 4 }]]),
      () => sse([['log', chunk(5), 5], ['log', chunk(6), 6], ['exit', info]]),
    ]);
    const stream = client.followProcessLogs('s', 'p1');
    assert.deepEqual(await collect(stream), [
      { event: 'log', data: chunk(1) },
      { event: 'gap', data: { from: 2, to: 4 } },
      { event: 'log', data: chunk(5) },
      { event: 'log', data: chunk(6) },
      { event: 'exit', data: info },
    ]);
    assert.equal(stream.lastSequence, 6);
    assert.equal(stream.reconnects, 1);
    assert.deepEqual(
      requests.map((r) => [r.method, r.url, r.headers.get('accept'), r.headers.get('last-event-id')]),
      [
        ['GET', 'http://daemon.test/sessions/s/processes/p1/logs?follow=true', 'text/event-stream', null],
        ['GET', 'http://daemon.test/sessions/s/processes/p1/logs?follow=true', 'text/event-stream', '4'],
      ],
    );
  });

  it('drops chunks it delivered before a reconnect; a chunk past a missing one is a ProtocolError', async () => {
    const { client, requests } = fake([
      () => sse([['log', chunk(1), 1], ['log', chunk(2), 2]]),
      () => sse([['log', chunk(1), 1], ['log', chunk(2), 2], ['log', chunk(3), 3], ['exit', { ...info, lastSequence: 3 }]]),
    ]);
    const frames = await collect(client.followProcessLogs('s', 'p1', { offset: 0 }));
    assert.deepEqual(chunksOf(frames).map((c) => c.sequence), [1, 2, 3]);
    assert.equal(requests[1]?.headers.get('last-event-id'), '2');

    const gap = fake([() => sse([['log', chunk(3), 3], ['log', chunk(5), 5]])]).client.followProcessLogs('s', 'p1', { offset: 2 });
    const error = await collect(gap).catch((e: unknown) => e);
    assert.ok(error instanceof ProtocolError, String(error));
    assert.match(error.message, /process p1 of session s: 5 follows 3; 4–4 are missing/);
    const unreadable = fake([() => sse([['gap', { from: 'one' }]])]).client.followProcessLogs('s', 'p1');
    await assert.rejects(collect(unreadable), ProtocolError);
  });

  it('starts at ?offset=, and with validate checks each frame (ValidationError naming the field)', async () => {
    const { client, requests } = fake(
      [() => sse([['log', chunk(8), 8], ['exit', { ...info, status: 'finished' }]])],
      true,
    );
    const error = await collect(client.followProcessLogs('s', 'p1', { offset: 7 })).catch((e: unknown) => e);
    assert.ok(error instanceof ValidationError, String(error));
    assert.deepEqual(error.paths, ['data.status']);
    assert.match(error.target, /the `exit` frame of the log of process p1 of session s/);
    assert.equal(requests[0]?.url, 'http://daemon.test/sessions/s/processes/p1/logs?offset=7&follow=true');
    assert.equal((await ProcessLogFrameSchema['~standard'].validate({ event: 'gap', data: { from: 1, to: 2 } })).issues, undefined);
    assert.ok((await ProcessLogFrameSchema['~standard'].validate({ event: 'gap', data: { from: 1 } })).issues);
  });

  it('puts each call on the route of the spec', async () => {
    const json = (body: unknown, status = 200) => () =>
      new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    const { client, requests } = fake([
      json({ exitCode: 0 }),
      json(info, 201),
      json({ processes: [] }),
      json(info),
      json(undefined, 204),
      json(info),
      json(info),
      json({ chunks: [], firstKept: 1, process: info }),
    ]);
    await client.runProcess('s', { command: 'true', timeoutMs: 5 });
    await client.startProcess('s', { command: 'sleep', args: ['1'] });
    await client.listProcesses('s');
    await client.getProcess('s', 'p/1');
    assert.equal(await client.deleteProcess('s', 'p1'), undefined);
    await client.stopProcess('s', 'p1');
    await client.killProcess('s', 'p1');
    await client.processLogs('s', 'p1', { offset: 3 });
    assert.deepEqual(
      requests.map((r) => [r.method, r.url.replace('http://daemon.test', ''), r.body ?? null]),
      [
        ['POST', '/sessions/s/processes/run', '{"command":"true","timeoutMs":5}'],
        ['POST', '/sessions/s/processes', '{"command":"sleep","args":["1"]}'],
        ['GET', '/sessions/s/processes', null],
        ['GET', '/sessions/s/processes/p%2F1', null],
        ['DELETE', '/sessions/s/processes/p1', null],
        ['POST', '/sessions/s/processes/p1/stop', '{}'],
        ['POST', '/sessions/s/processes/p1/kill', '{}'],
        ['GET', '/sessions/s/processes/p1/logs?offset=3', null],
      ],
    );
  });
});
