// Terminals through the SDK, against the real daemon: a bash on a pseudo-terminal typed into,
// resized and exited over the WebSocket (the `ws` package's: Node 20 has no global one), its
// output replayed to a later connection; tickets that open one connection each, refusals as
// problem details, a closed connection that leaves the process running; a --no-token daemon.
// Then what the client makes of the socket, through a fake WebSocket.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ConnectionError,
  ProblemError,
  type ProcessRequest,
  ProtocolError,
  SandboxDaemon,
  type Session,
  type SocketEvent,
  type Terminal,
  type WebSocketLike,
} from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { WebSocket } from 'ws';
import { type Exchange, isProblem, type NoTokenDaemon, recordingFetch, startDaemon, startNoTokenDaemon, uniqueId } from './helpers.js';

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

const isAbort = (error: unknown): boolean => error instanceof DOMException && error.name === 'AbortError';

/** bash on a terminal, without rc files (a prompt of its own, no history). */
const BASH: ProcessRequest = { command: 'bash', args: ['--norc', '--noprofile'], tty: true };

/**
 * Reads a terminal's output until the text read since the last call matches `pattern`;
 * answers that text. Fails after `ms`.
 */
function reader(terminal: Terminal, ms = 10_000): (pattern: RegExp) => Promise<string> {
  const output = terminal[Symbol.asyncIterator]();
  let seen = '';
  return async (pattern) => {
    const deadline = Date.now() + ms;
    while (!pattern.test(seen)) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no ${pattern} in ${JSON.stringify(seen)}`)), deadline - Date.now());
      });
      const next = await Promise.race([output.next(), late]).finally(() => clearTimeout(timer));
      if (next.done) assert.fail(`the output ended without ${pattern}: ${JSON.stringify(seen)}`);
      seen += text(next.value);
    }
    const read = seen;
    seen = '';
    return read;
  };
}

/** Waits until `done()` holds; fails after `ms`. */
async function until(done: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !done(); ) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Every piece of a terminal's output until it closes, as text. */
async function rest(terminal: Terminal): Promise<string> {
  let out = '';
  for await (const bytes of terminal) out += text(bytes);
  return out;
}

describe('terminals against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  /** A validating client of the same daemon that records every exchange. */
  let client: SandboxDaemon;
  const exchanges: Exchange[] = [];
  let root: string;

  before(async () => {
    daemon = await startDaemon({ validate: true });
    root = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-terminal-')));
    client = new SandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token, validate: true, fetch: recordingFetch(exchanges) });
  });
  after(async () => {
    await daemon.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A mock session (of the recording client) whose working directory is a fresh directory. */
  async function newSession(): Promise<Session> {
    const cwd = join(root, uniqueId('ws'));
    await mkdir(cwd);
    return await client.startSession(uniqueId('term'), { agent: 'mock', cwd });
  }

  it('openTerminal: bash on a pseudo-terminal answers 42, reports its size as resized, and exits with code 3', async () => {
    const session = await newSession();
    const info = await session.startProcess({ ...BASH, size: { cols: 100, rows: 30 } });
    assert.equal(info.tty, true);
    const terminal = await session.openTerminal(info.processId, { WebSocket });
    assert.equal(terminal.closed, false);
    const read = reader(terminal);

    terminal.write('echo $((6*7))\r');
    assert.match(await read(/\r42\r\n/), /echo \$\(\(6\*7\)\)\r\n/, 'the terminal echoes what was typed');
    terminal.write('stty size\r');
    await read(/\r30 100\r\n/);
    terminal.resize(120, 40);
    // Bytes are input as well as text.
    terminal.write(new TextEncoder().encode('stty size\r'));
    await read(/\r40 120\r\n/);
    terminal.write('exit 3\r');
    assert.deepEqual(await terminal.exit, { exitCode: 3 });
    await read(/exit\r\n$/);
    assert.equal(terminal.closed, true);

    const exited = await session.getProcess(info.processId);
    assert.deepEqual({ status: exited.status, exitCode: exited.exitCode, tty: exited.tty }, { status: 'exited', exitCode: 3, tty: true });
    // Its output is logged too, as stdout.
    const { chunks } = await session.processLogs(info.processId);
    assert.deepEqual([...new Set(chunks.map((c) => c.stream))], ['stdout']);
    const logged = chunks.map((c) => c.data).join('');
    assert.match(logged, /\r42\r\n[^]*\r30 100\r\n[^]*\r40 120\r\n/);

    // A connection after the end: the output the log keeps, then the exit.
    const again = await client.openTerminal(session.id, info.processId, { WebSocket });
    assert.equal(await rest(again), logged);
    assert.deepEqual(await again.exit, { exitCode: 3 });

    const tickets = exchanges.filter((e) => e.path === `/sessions/${session.id}/processes/${info.processId}/terminal-ticket`);
    assert.deepEqual(tickets.map((e) => [e.method, e.status, e.requestHeaders.get('content-type')]), [
      ['POST', 201, 'application/json'],
      ['POST', 201, 'application/json'],
    ]);
  });

  it('a ticket opens one connection: a used one is refused (401 terminal-ticket-refused); closing leaves the process running', async () => {
    const session = await newSession();
    const info = await session.startProcess({ command: 'cat', tty: true });
    const minted = await session.createTerminalTicket(info.processId);
    assert.match(minted.ticket, /^[0-9a-f]{64}$/);
    assert.equal(minted.path, `/sessions/${session.id}/processes/${info.processId}/terminal?ticket=${minted.ticket}`);
    const ttl = Date.parse(minted.expiresAt) - Date.now();
    assert.ok(ttl > 20_000 && ttl <= 30_000, `expires in ${ttl} ms`);
    const url = session.terminalUrl(info.processId, minted.ticket);
    assert.equal(url, new URL(minted.path, daemon.baseUrl.replace(/^http/, 'ws')).href);

    const errors: string[] = [];
    const output: string[] = [];
    const terminal = await session.openTerminal(info.processId, {
      WebSocket,
      ticket: minted,
      onOutput: (bytes) => output.push(text(bytes)),
      onError: (message) => errors.push(message),
    });
    assert.throws(() => terminal[Symbol.asyncIterator](), /onOutput/);
    terminal.resize(0, 24);
    terminal.write('hello\r');
    await until(() => errors.length > 0 && output.join('').includes('hello\r\n'));
    assert.deepEqual(errors, ['`cols` and `rows` are whole numbers from 1 to 1000'], 'a size out of range is an error message');
    assert.match(output.join(''), /hello\r\n/);
    terminal.close();
    await assert.rejects(terminal.exit, isAbort);
    assert.equal(terminal.closed, true);
    terminal.write('dropped once closed');

    await assert.rejects(session.openTerminal(info.processId, { WebSocket, ticket: minted }), isProblem(401, 'terminal-ticket-refused'));
    await assert.rejects(session.openTerminal(info.processId, { WebSocket, ticket: 'made-up' }), isProblem(401, 'terminal-ticket-refused'));
    const other = await session.startProcess({ command: 'cat', tty: true });
    const theirs = await session.createTerminalTicket(other.processId);
    await assert.rejects(session.openTerminal(info.processId, { WebSocket, ticket: theirs }), isProblem(401, 'terminal-ticket-refused'));
    assert.equal((await session.getProcess(info.processId)).status, 'running', 'closing the terminal left the process running');

    // A new ticket each time: the process's output so far, and typing goes on.
    const next = await session.openTerminal(info.processId, { WebSocket });
    const read = reader(next);
    await read(/hello\r\n/);
    next.write('again\r');
    await read(/again\r\n/);
    // Stopping a terminal's process hangs it up first (SIGHUP).
    await session.stopProcess(info.processId);
    assert.deepEqual(await next.exit, { signal: 1 });
    await session.killProcess(other.processId);
  });

  it('aborting the signal closes the terminal: the loop throws its reason, exit rejects with it', async () => {
    const session = await newSession();
    const info = await session.startProcess({ command: 'cat', tty: true });
    const controller = new AbortController();
    const terminal = await session.openTerminal(info.processId, { WebSocket, signal: controller.signal });
    const reason = new Error('enough');
    setTimeout(() => controller.abort(reason), 50);
    await assert.rejects(rest(terminal), (e: unknown) => e === reason);
    await assert.rejects(terminal.exit, (e: unknown) => e === reason);
    await assert.rejects(session.openTerminal(info.processId, { WebSocket, signal: controller.signal }), (e: unknown) => e === reason);
    assert.equal((await session.getProcess(info.processId)).status, 'running');
    await session.killProcess(info.processId);
  });

  it('refuses a process without a terminal (409 not-a-terminal), an unknown one (404 process-not-found), a terminal for a run', async () => {
    const session = await newSession();
    await assert.rejects(session.runProcess({ command: 'true', tty: true }), isProblem(422, 'invalid-body'));
    await assert.rejects(session.startProcess({ command: 'true', size: { cols: 80, rows: 24 } }), isProblem(422, 'invalid-body'));
    await assert.rejects(session.startProcess({ command: 'true', tty: true, size: { cols: 1001, rows: 24 } }), isProblem(422, 'invalid-body'));
    const plain = await session.startProcess({ command: 'sleep', args: ['30'] });
    assert.equal(plain.tty, false);
    await assert.rejects(session.createTerminalTicket(plain.processId), isProblem(409, 'not-a-terminal'));
    await assert.rejects(session.openTerminal(plain.processId, { WebSocket }), isProblem(409, 'not-a-terminal'));
    await assert.rejects(session.openTerminal('p999', { WebSocket }), isProblem(404, 'process-not-found'));
    await assert.rejects(client.createTerminalTicket(uniqueId('nobody'), 'p1'), isProblem(404, 'session-not-found'));
    // Without an upgrade the terminal's route answers a problem.
    const cat = await session.startProcess({ command: 'cat', tty: true });
    const { path } = await session.createTerminalTicket(cat.processId);
    const response = await fetch(new URL(path.slice(1), daemon.baseUrl));
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { type: string }).type, /websocket-required$/);
    await session.killProcess(plain.processId);
    await session.killProcess(cat.processId);
  });
});

describe('terminals on a --no-token daemon', () => {
  let daemon: NoTokenDaemon;
  let cwd: string;

  before(async () => {
    daemon = await startNoTokenDaemon();
    cwd = await realpath(await mkdtemp(join(tmpdir(), 'sandbox-sdk-notoken-term-')));
  });
  after(async () => {
    await daemon.close();
    await rm(cwd, { recursive: true, force: true });
  });

  it('a WebSocket needs no ticket; a refusal still comes back as a problem', async () => {
    const client = new SandboxDaemon({ baseUrl: daemon.baseUrl, validate: true });
    const session = await client.startSession(uniqueId('notoken'), { agent: 'mock', cwd });
    const info = await session.startProcess({ command: 'sh', args: ['-c', 'echo hi; exit 4'], tty: true });
    // A WebSocket of its own, on the URL without a ticket.
    const socket = new WebSocket(session.terminalUrl(info.processId));
    const frames: string[] = [];
    socket.on('message', (data, binary) => frames.push(binary ? `bytes ${String(data)}` : String(data)));
    await new Promise((resolve) => socket.on('close', resolve));
    assert.deepEqual(frames, ['bytes hi\r\n', '{"type":"exit","exitCode":4}']);
    // Through the client (which still mints a ticket; the daemon ignores it).
    const terminal = await session.openTerminal(info.processId, { WebSocket });
    assert.equal(await rest(terminal), 'hi\r\n');
    assert.deepEqual(await terminal.exit, { exitCode: 4 });
    const plain = await session.startProcess({ command: 'sleep', args: ['30'] });
    await assert.rejects(session.openTerminal(plain.processId, { WebSocket, ticket: 'any' }), isProblem(409, 'not-a-terminal'));
    await session.killProcess(plain.processId);
  });
});

describe('terminals on the wire (fake WebSocket)', () => {
  /** A WebSocket the test drives: `emit` fires its events; it records what is sent. */
  class FakeSocket implements WebSocketLike {
    static last: FakeSocket | undefined;
    binaryType = 'blob';
    readyState = 0;
    readonly sent: Array<string | Uint8Array> = [];
    readonly closes: Array<number | undefined> = [];
    readonly #listeners: Array<[string, (event: SocketEvent) => void]> = [];

    constructor(readonly url: string) {
      FakeSocket.last = this;
    }
    send(data: string | Uint8Array): void {
      this.sent.push(data);
    }
    close(code?: number): void {
      this.closes.push(code);
      this.readyState = 2;
    }
    addEventListener(type: string, listener: (event: SocketEvent) => void): void {
      this.#listeners.push([type, listener]);
    }
    emit(type: 'open' | 'message' | 'error' | 'close', event: Omit<SocketEvent, 'type'> = {}): void {
      if (type === 'open') this.readyState = 1;
      if (type === 'close') this.readyState = 3;
      for (const [t, listener] of this.#listeners) if (t === type) listener({ type, ...event });
    }
  }

  /** A client whose fetch answers the ticket, then `probe` (the request made after a refused handshake). */
  function fake(probe?: () => Response, baseUrl = 'http://daemon.test/prefix/') {
    const requests: Array<{ method: string; url: string }> = [];
    const client = new SandboxDaemon({
      baseUrl,
      token: 'secret',
      fetch: async (input, init) => {
        requests.push({ method: init?.method ?? 'GET', url: String(input) });
        if (init?.method === 'POST') {
          return Response.json({ ticket: 't1', expiresAt: '2026-01-01T00:00:30Z', path: '/sessions/s/processes/p1/terminal?ticket=t1' }, { status: 201 });
        }
        if (!probe) throw new TypeError('no probe expected');
        return probe();
      },
    });
    return { client, requests };
  }

  /** Opens a terminal on a FakeSocket, opened as soon as it exists. */
  async function opened(client: SandboxDaemon): Promise<{ terminal: Terminal; socket: FakeSocket }> {
    const pending = client.openTerminal('s', 'p1', { WebSocket: FakeSocket });
    await new Promise((resolve) => setTimeout(resolve, 0));
    const socket = FakeSocket.last;
    assert.ok(socket);
    socket.emit('open');
    return { terminal: await pending, socket };
  }

  it('connects to ws:// (wss:// for https) under the base path with a fresh ticket; the global WebSocket is the default', async () => {
    const { client, requests } = fake();
    const { socket } = await opened(client);
    assert.equal(socket.url, 'ws://daemon.test/prefix/sessions/s/processes/p1/terminal?ticket=t1');
    assert.equal(socket.binaryType, 'arraybuffer');
    assert.deepEqual(requests, [{ method: 'POST', url: 'http://daemon.test/prefix/sessions/s/processes/p1/terminal-ticket' }]);
    assert.equal(fake(undefined, 'https://daemon.test').client.terminalUrl('a b', 'p/1', 'x&y'), 'wss://daemon.test/sessions/a%20b/processes/p%2F1/terminal?ticket=x%26y');
    assert.equal(client.terminalUrl('s', 'p1'), 'ws://daemon.test/prefix/sessions/s/processes/p1/terminal');

    const global = globalThis as { WebSocket?: unknown };
    const saved = global.WebSocket;
    try {
      global.WebSocket = undefined;
      await assert.rejects(client.openTerminal('s', 'p1'), (e: unknown) => e instanceof TypeError && /no global WebSocket/.test(e.message));
      global.WebSocket = FakeSocket;
      const pending = client.openTerminal('s', 'p1');
      await new Promise((resolve) => setTimeout(resolve, 0));
      FakeSocket.last?.emit('open');
      assert.equal((await pending).closed, false);
    } finally {
      global.WebSocket = saved;
    }
  });

  it('queues output until iterated, sends input, resizes and skips messages it does not know; exit ends it', async () => {
    const { terminal, socket } = await opened(fake().client);
    socket.emit('message', { data: new TextEncoder().encode('one ').buffer });
    socket.emit('message', { data: '{"type":"progress","any":1}' });
    socket.emit('message', { data: new TextEncoder().encode('two') });
    terminal.write('ls\r');
    terminal.write(Uint8Array.of(3));
    terminal.resize(100, 30);
    socket.emit('message', { data: '{"type":"exit","signal":15}' });
    socket.emit('close', { code: 1005 });
    assert.equal(await rest(terminal), 'one two');
    assert.deepEqual(await terminal.exit, { signal: 15 });
    assert.deepEqual(socket.sent, ['{"type":"input","data":"ls\\r"}', Uint8Array.of(3), '{"type":"resize","cols":100,"rows":30}']);
    assert.throws(() => terminal[Symbol.asyncIterator](), /iterated once/);
  });

  it('a dropped connection is a ConnectionError; a text frame that is not JSON a ProtocolError', async () => {
    const dropped = await opened(fake().client);
    dropped.socket.emit('message', { data: new TextEncoder().encode('partial').buffer });
    dropped.socket.emit('close', { code: 1006 });
    const error = await rest(dropped.terminal).catch((e: unknown) => e);
    assert.ok(error instanceof ConnectionError, String(error));
    assert.match(error.message, /the terminal of process p1 of session s: the connection closed \(1006\) before the process ended/);
    await assert.rejects(dropped.terminal.exit, ConnectionError);

    const garbled = await opened(fake().client);
    garbled.socket.emit('message', { data: 'not json' });
    await assert.rejects(garbled.terminal.exit, ProtocolError);
    assert.deepEqual(garbled.socket.closes, [1000]);
  });

  it('a refused handshake is asked again over fetch: its problem is thrown, else a ConnectionError', async () => {
    const problem = { type: 'urn:sandbox-daemon:problem:terminal-ticket-refused', title: 'The terminal ticket is not accepted', status: 401, detail: 'used' };
    const refused = fake(() => Response.json(problem, { status: 401, headers: { 'content-type': 'application/problem+json' } }));
    const pending = refused.client.openTerminal('s', 'p1', { WebSocket: FakeSocket });
    await new Promise((resolve) => setTimeout(resolve, 0));
    FakeSocket.last?.emit('error');
    FakeSocket.last?.emit('close', { code: 1006 });
    const error = await pending.catch((e: unknown) => e);
    assert.ok(error instanceof ProblemError && error.kind === 'terminal-ticket-refused', String(error));
    assert.deepEqual(refused.requests.at(-1), { method: 'GET', url: 'http://daemon.test/prefix/sessions/s/processes/p1/terminal?ticket=t1' });

    // The daemon would have taken it (the request without an upgrade is 400 websocket-required): something between.
    const between = fake(() =>
      Response.json({ ...problem, type: 'urn:sandbox-daemon:problem:websocket-required', status: 400 }, { status: 400 }),
    );
    const failing = between.client.openTerminal('s', 'p1', { WebSocket: FakeSocket });
    await new Promise((resolve) => setTimeout(resolve, 0));
    FakeSocket.last?.emit('error', { message: 'Unexpected server response: 502' });
    FakeSocket.last?.emit('close', { code: 1006 });
    const lost = await failing.catch((e: unknown) => e);
    assert.ok(lost instanceof ConnectionError, String(lost));
    assert.match(lost.message, /the WebSocket did not open: Unexpected server response: 502/);
  });
});
