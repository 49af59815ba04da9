/**
 * The machinery of a resumable SSE stream whose frames carry sequences (a session's events,
 * a process's followed log): it remembers the last sequence it delivered, reconnects with
 * `Last-Event-ID` set to it (backoff with jitter, bounded retries), drops any frame it
 * already delivered, refuses a gap in sequences, and ends after its last frame. Subclasses
 * say which route to ask and how to read a frame; not exported from the entries.
 *
 * @module
 */

import { abortReason, linkSignals, sleep } from './abort.js';
import { backoffDelay, reconnectPolicy, type ReconnectOptions } from './backoff.js';
import { ConnectionError, ProblemError, ProtocolError, ReconnectError, describe } from './errors.js';
import type { SseMessage } from './sse.js';
import { readSse } from './sse-response.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import { excerpt, validate, type Call, type RequestOptions, type Transport } from './transport.js';

/** Options every resumable stream takes. */
export interface ResumableStreamOptions extends RequestOptions {
  /** Deliver what has a sequence above this (default 0: from the start). */
  readonly offset?: number;
  /** How to reconnect after a dropped connection; `false` never reconnects. */
  readonly reconnect?: ReconnectOptions | false;
}

/** One frame as a subclass read it. */
export interface Frame<T> {
  /** What the iteration yields. */
  readonly value: T;
  /**
   * The sequences it accounts for, first and last (an event, a log chunk: one; a gap: the
   * chunks dropped). Absent for a frame outside the sequence (the last frame of a log).
   */
  readonly span?: readonly [number, number];
  /** The stream ends after this frame. */
  readonly end?: boolean;
}

/** The stream closed (or went silent) before its last frame: reconnect. */
class Interrupted extends ConnectionError {
  override name = 'Interrupted';
}

/**
 * A stream of frames, in order, each exactly once. Iterate it once with `for await`;
 * breaking out of the loop (or aborting `signal`) closes the connection.
 */
export abstract class ResumableStream<T> implements AsyncIterable<T> {
  /** The transport of the client that opened it. */
  protected readonly transport: Transport;
  readonly #options: ResumableStreamOptions;
  readonly #defaults: ReconnectOptions | false | undefined;
  #lastSequence: number;
  #reconnects = 0;
  #started = false;

  constructor(transport: Transport, options: ResumableStreamOptions = {}, defaults?: ReconnectOptions | false) {
    const offset = options.offset ?? 0;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`offset must be a whole number ≥ 0, got ${offset}`);
    this.transport = transport;
    this.#options = options;
    this.#defaults = defaults;
    this.#lastSequence = offset;
  }

  /** The last sequence delivered (the offset to resume from later). */
  get lastSequence(): number {
    return this.#lastSequence;
  }

  /** How many times the stream reconnected so far. */
  get reconnects(): number {
    return this.#reconnects;
  }

  /** What is streamed, for messages (e.g. `the event stream of session demo`). */
  protected abstract readonly what: string;

  /** The request of one connection (without `Accept` and headers): `offset` on the first only. */
  protected abstract request(offset: number | undefined): Omit<Call, 'accept' | 'headers' | 'signal'>;

  /** Reads one frame; `undefined` skips it (a kind this SDK does not know). */
  protected abstract read(message: SseMessage): Frame<T> | undefined;

  /** The validator of a value to deliver, and what to call it in a `ValidationError`. */
  protected abstract check(value: T): [StandardSchemaV1 | null | undefined, string];

  /** After a clean close before the last frame: whether everything was delivered already. */
  protected ended(_signal: AbortSignal): Promise<boolean> {
    return Promise.resolve(false);
  }

  /** Iterates the frames; a stream can be iterated once. */
  [Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    if (this.#started) throw new TypeError(`${this.what} can be iterated once; open another stream`);
    this.#started = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<T, void, undefined> {
    const policy = reconnectPolicy(this.#defaults, this.#options.reconnect);
    const outer = linkSignals(this.transport.signal, this.#options.signal);
    let baseDelay = policy.initialDelayMs;
    let failures = 0;
    let first = true;
    try {
      for (;;) {
        if (outer.signal.aborted) throw abortReason(outer.signal);
        const connection = linkSignals(outer.signal);
        let failure: unknown;
        try {
          const response = await this.#connect(first, connection.signal);
          first = false;
          const idleMs = policy.idleTimeoutMs;
          const messages = readSse(response, {
            what: this.what,
            idleMs,
            onIdle: (cause) => new Interrupted(`nothing received for ${idleMs} ms`, cause === undefined ? {} : { cause }),
            abort: (reason) => connection.abort(reason),
            onRetry: (retry) => {
              baseDelay = retry;
            },
          });
          for await (const message of messages) {
            const frame = this.read(message);
            if (frame === undefined) continue;
            if (frame.span) {
              const [from, to] = frame.span;
              const last = this.#lastSequence;
              if (to <= last) continue; // Delivered before the connection dropped.
              if (from > last + 1) {
                throw new ProtocolError(`${this.what}: ${from} follows ${last}; ${last + 1}–${from - 1} are missing`);
              }
            }
            const [schema, target] = this.check(frame.value);
            const value = schema ? ((await validate(schema, frame.value, target)) as T) : frame.value;
            failures = 0;
            if (frame.span) this.#lastSequence = frame.span[1];
            yield value;
            if (frame.end) return;
          }
          // A clean close before the last frame: the daemon stopped, or (events) this stream
          // started past the end of a session that is over (the daemon then closes at once).
          if (await this.ended(connection.signal)) return;
          failure = new Interrupted(`${this.what} closed before its end`);
        } catch (error) {
          if (outer.signal.aborted) throw abortReason(outer.signal);
          if (!retryable(error)) throw error;
          failure = error;
        } finally {
          connection.abort();
          connection.dispose();
        }
        failures += 1;
        if (failures > policy.retries) throw new ReconnectError(failures - 1, this.#lastSequence, failure);
        this.#reconnects += 1;
        await sleep(backoffDelay(failures, { ...policy, initialDelayMs: baseDelay }), outer.signal);
      }
    } finally {
      outer.dispose();
    }
  }

  /** Opens one connection: `?offset=` the first time, `Last-Event-ID` after that. */
  async #connect(first: boolean, signal: AbortSignal): Promise<Response> {
    const last = this.#lastSequence;
    const resume = !first && last > 0;
    const call = this.request(resume || last === 0 ? undefined : last);
    const response = await this.transport.send(
      {
        ...call,
        accept: 'text/event-stream',
        headers: { ...this.#options.headers, ...(resume ? { 'last-event-id': String(last) } : {}) },
      },
      signal,
    );
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('text/event-stream') || !response.body) {
      await response.body?.cancel();
      throw new ProtocolError(`${call.op} answered \`${type}\`, not text/event-stream`);
    }
    return response;
  }
}

/** A frame's `data` parsed; a `ProtocolError` naming the frame when it is not JSON. */
export function frameData(message: SseMessage, what: string): unknown {
  try {
    return JSON.parse(message.data);
  } catch (error) {
    throw new ProtocolError(
      `${what}: its \`${message.event}\` frame is not JSON (${describe(error)}): ${excerpt(message.data)}`,
      { cause: error },
    );
  }
}

/** Whether a value is a sequence (a safe whole number). */
export const isSequence = (value: unknown): value is number => Number.isSafeInteger(value);

/** Whether a failed connection is worth another try. */
function retryable(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  if (error instanceof ProblemError) return error.status >= 500 || error.status === 408 || error.status === 429;
  return false;
}
