/**
 * A process's terminal (a long-running process started with `tty: true`) over a WebSocket
 * (`GET .../terminal`): the `Terminal` that carries its output, input, resizes and exit.
 *
 * @module
 */

import { abortReason, linkSignals } from './abort.js';
import { ConnectionError, ProblemError, ProtocolError, describe } from './errors.js';
import type { TerminalMessage, TerminalTicket } from './generated/openapi.js';
import type { Call, RequestOptions, Transport } from './transport.js';

/**
 * How a terminal's process ended, as its `exit` message says: its `exitCode`, or the
 * `signal` that ended it. (`TerminalMessage`, generated, is every text frame: `input` and
 * `resize` to the daemon, `exit` and `error` from it.)
 */
export type TerminalExit = Omit<Extract<TerminalMessage, { type: 'exit' }>, 'type'>;

/**
 * What a terminal needs of a WebSocket: the web platform's (browsers, Deno, Bun, Node ≥ 22),
 * or one that behaves as it does, such as the `ws` package's `WebSocket` on Node 20.
 */
export interface WebSocketLike {
  /** Set to `arraybuffer`: binary frames arrive as an `ArrayBuffer`. */
  binaryType: string;
  /** 1 while open. */
  readonly readyState: number;
  /** Sends a text frame (a string) or a binary frame (bytes). */
  send(data: string | Uint8Array): void;
  /** Closes the connection. */
  close(code?: number): void;
  /** Listens to `open`, `message` (`data`: a string or bytes), `error` and `close` (`code`). */
  addEventListener(type: 'open' | 'message' | 'error' | 'close', listener: (event: SocketEvent) => void): void;
}

/** What the terminal reads of a WebSocket's events. */
export interface SocketEvent {
  /** `open`, `message`, `error` or `close`. */
  readonly type: string;
  /** A `message`'s data. */
  readonly data?: unknown;
  /** A `close`'s code. */
  readonly code?: number;
  /** An `error`'s message, where the WebSocket gives one (browsers do not). */
  readonly message?: string;
}

/** A WebSocket class: the global `WebSocket`, or one that behaves as it does (`ws`'s). */
export type WebSocketConstructor = new (url: string) => WebSocketLike;

/** Options of `openTerminal`. */
export interface TerminalOptions extends RequestOptions {
  /**
   * The WebSocket class (default: the global `WebSocket`). Node 20 has none: pass the `ws`
   * package's (`import { WebSocket } from 'ws'`).
   */
  readonly WebSocket?: WebSocketConstructor | undefined;
  /**
   * A ticket minted already (`createTerminalTicket`: e.g. by a server holding the daemon's
   * token, for a browser that must not see it); it opens one connection, within 30 s.
   * Default: a new one is minted (with this client's token).
   */
  readonly ticket?: string | Pick<TerminalTicket, 'ticket'> | undefined;
  /** Called with each piece of output as it arrives, instead of queueing it for `for await`. */
  readonly onOutput?: ((bytes: Uint8Array) => void) | undefined;
  /** Called with each `error` message: a frame the daemon could not act on (a size out of range). */
  readonly onError?: ((message: string) => void) | undefined;
}

/**
 * A process's terminal, open: its output (first what the daemon's log still keeps, then
 * live) as bytes, to iterate once with `for await` (queued from the moment it opened, so
 * nothing is missed) or to receive through `onOutput`; `write` and `resize`; `exit`. It ends
 * when the process does (after `exit`); `close()`, breaking out of the loop or aborting
 * `signal` closes the connection, never the process. A dropped connection is not resumed:
 * open another (the daemon replays what it keeps, which redraws the screen).
 */
export class Terminal implements AsyncIterable<Uint8Array> {
  /**
   * How the process ended (`exitCode` or `signal`), once the daemon says so. Rejects when
   * the connection closes before: `ConnectionError` when it dropped, the signal's reason
   * when aborted, an `AbortError` after `close()`.
   */
  readonly exit: Promise<TerminalExit>;
  readonly #socket: WebSocketLike;
  readonly #what: string;
  readonly #options: TerminalOptions;
  readonly #output: Uint8Array[] = [];
  #wake = (): void => {};
  #exited: (exit: TerminalExit) => void = () => {};
  #failed: (error: unknown) => void = () => {};
  /** Set once the connection is over, with what the loop throws (`null`: nothing, after `exit` or `close()`). */
  #end: { error: unknown } | undefined;
  #iterated = false;

  /** Prefer `client.openTerminal(sessionId, processId, options)`. */
  constructor(socket: WebSocketLike, what: string, options: TerminalOptions = {}) {
    this.#socket = socket;
    this.#what = what;
    this.#options = options;
    this.exit = new Promise((resolve, reject) => {
      this.#exited = resolve;
      this.#failed = reject;
    });
    // An exit nobody waits for is not an unhandled rejection.
    this.exit.catch(() => {});
    const signal = options.signal;
    const onAbort = (): void => this.#finish(abortReason(signal as AbortSignal));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    socket.binaryType = 'arraybuffer';
    socket.addEventListener('message', ({ data }) => this.#message(data));
    socket.addEventListener('close', ({ code }) =>
      this.#finish(new ConnectionError(`${what}: the connection closed (${code}) before the process ended`)),
    );
  }

  /** Whether the connection is over (the process ended, or it was closed). */
  get closed(): boolean {
    return this.#end !== undefined;
  }

  /**
   * Types into the terminal: text (sent as an `input` message, UTF-8) or bytes (a binary
   * frame). Once closed, input is dropped, as the daemon drops input to an ended process.
   */
  write(data: string | Uint8Array): void {
    this.#send(typeof data === 'string' ? JSON.stringify({ type: 'input', data }) : data);
  }

  /**
   * Sets the terminal's size in character cells (1 to 1,000 each; the process gets
   * SIGWINCH). A size out of range comes back as an `error` message (`onError`).
   */
  resize(cols: number, rows: number): void {
    this.#send(JSON.stringify({ type: 'resize', cols, rows }));
  }

  /** Closes the connection; the process goes on (stop or kill it to end it). */
  close(): void {
    this.#finish(new DOMException(`${this.#what} was closed before the process ended`, 'AbortError'), true);
  }

  /** The output, piece by piece, until the connection closes; iterate once. */
  [Symbol.asyncIterator](): AsyncGenerator<Uint8Array, void, undefined> {
    if (this.#options.onOutput) throw new TypeError('the output goes to `onOutput`');
    if (this.#iterated) throw new TypeError('a Terminal can be iterated once');
    this.#iterated = true;
    return this.#read();
  }

  async *#read(): AsyncGenerator<Uint8Array, void, undefined> {
    try {
      for (;;) {
        const bytes = this.#output.shift();
        if (bytes) yield bytes;
        else if (this.#end) {
          if (this.#end.error !== null) throw this.#end.error;
          return;
        } else await new Promise<void>((resolve) => (this.#wake = resolve));
      }
    } finally {
      this.close();
    }
  }

  /** Ends the connection (once): settles `exit` and the loop, and closes the socket. */
  #finish(error: unknown, quiet = false): void {
    if (this.#end) return;
    this.#end = { error: quiet ? null : error };
    this.#failed(error);
    this.#wake();
    if (this.#socket.readyState < 2) this.#socket.close(1000);
  }

  /** Sends a frame while open. */
  #send(data: string | Uint8Array): void {
    if (!this.#end && this.#socket.readyState === 1) this.#socket.send(data);
  }

  #message(data: unknown): void {
    if (typeof data !== 'string') {
      const bytes = ArrayBuffer.isView(data)
        ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
        : new Uint8Array(data as ArrayBuffer);
      if (this.#options.onOutput) this.#options.onOutput(bytes);
      else this.#output.push(bytes);
      this.#wake();
      return;
    }
    let message: TerminalMessage;
    try {
      message = JSON.parse(data) as TerminalMessage;
    } catch (error) {
      this.#finish(new ProtocolError(`${this.#what}: a text frame that is not JSON (${describe(error)})`, { cause: error }));
      return;
    }
    if (message.type === 'exit') {
      const { type: _, ...exit } = message;
      this.#exited(exit);
      this.#finish(null, true);
    } else if (message.type === 'error') {
      this.#options.onError?.(message.message);
    } // Another type is a newer daemon's.
  }
}

/**
 * Opens the WebSocket `url` of `call` (`openTerminal` with its ticket) and answers the terminal
 * once it is open. A browser's WebSocket never shows why a handshake was refused, so the
 * same request is then made over `fetch` (its ticket is used up already, or never reached
 * the daemon): a problem it answers (401 `terminal-ticket-refused`, 404, 409
 * `not-a-terminal`) is thrown as `ProblemError`, anything else as `ConnectionError`.
 */
export async function openTerminal(
  transport: Transport,
  call: Call,
  url: string,
  Socket: WebSocketConstructor,
  options: TerminalOptions,
): Promise<Terminal> {
  const what = `the terminal of process ${call.params?.processId} of session ${call.params?.sessionId}`;
  const socket = new Socket(url);
  const linked = linkSignals(transport.signal, call.signal);
  const terminal = new Terminal(socket, what, { ...options, signal: linked.signal });
  terminal.exit.then(linked.dispose, linked.dispose);
  let failure = '';
  socket.addEventListener('error', ({ message }) => (failure = message ? `: ${message}` : ''));
  try {
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve());
      terminal.exit.catch(reject);
    });
  } catch (error) {
    if (linked.signal.aborted) throw abortReason(linked.signal);
    if (!(error instanceof ConnectionError)) throw error;
    try {
      await (await transport.send(call, linked.signal)).body?.cancel();
    } catch (error) {
      if (error instanceof ProblemError && error.kind !== 'websocket-required') throw error;
    }
    throw new ConnectionError(`${what}: the WebSocket did not open${failure}`);
  }
  return terminal;
}
