/**
 * A session's event log over SSE, lossless across dropped connections: it remembers the
 * last sequence it delivered, reconnects with `Last-Event-ID` set to it (backoff with
 * jitter, bounded retries), drops any event it already delivered, refuses a gap, and ends
 * after `sessionEnded`.
 *
 * @module
 */

import { abortReason, linkSignals, sleep } from './abort.js';
import { backoffDelay, reconnectPolicy, type ReconnectOptions } from './backoff.js';
import { ConnectionError, ProblemError, ProtocolError, ReconnectError, describe } from './errors.js';
import type { SessionInfo, UniversalEvent } from './generated/openapi.js';
import { routes } from './generated/routes.js';
import type { SseMessage } from './sse.js';
import { readSse } from './sse-response.js';
import { validate, type RequestOptions, type Transport } from './transport.js';

/** Options of an event stream. */
export interface EventStreamOptions extends RequestOptions {
  /** Deliver events with `sequence > offset` (default 0: the whole log). */
  readonly offset?: number;
  /** Include each event's native JSON as `raw`. */
  readonly includeRaw?: boolean;
  /** How to reconnect after a dropped connection; `false` never reconnects. */
  readonly reconnect?: ReconnectOptions | false;
}

/** The stream closed (or went silent) without `sessionEnded`: reconnect. */
class Interrupted extends ConnectionError {
  override name = 'Interrupted';
}

/**
 * The events of one session, in order, each exactly once. Iterate it once with
 * `for await`; breaking out of the loop (or aborting `signal`) closes the connection.
 */
export class EventStream implements AsyncIterable<UniversalEvent> {
  readonly #transport: Transport;
  readonly #sessionId: string;
  readonly #options: EventStreamOptions;
  readonly #defaults: ReconnectOptions | false | undefined;
  #lastSequence: number;
  #reconnects = 0;
  #started = false;

  /** Prefer `client.events(sessionId, options)`. */
  constructor(
    transport: Transport,
    sessionId: string,
    options: EventStreamOptions = {},
    defaults?: ReconnectOptions | false,
  ) {
    const offset = options.offset ?? 0;
    if (!Number.isSafeInteger(offset) || offset < 0) throw new RangeError(`offset must be a whole number ≥ 0, got ${offset}`);
    this.#transport = transport;
    this.#sessionId = sessionId;
    this.#options = options;
    this.#defaults = defaults;
    this.#lastSequence = offset;
  }

  /** The session this stream reads. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The sequence of the last event delivered (the offset to resume from later). */
  get lastSequence(): number {
    return this.#lastSequence;
  }

  /** How many times the stream reconnected so far. */
  get reconnects(): number {
    return this.#reconnects;
  }

  /** Iterates the events; a stream can be iterated once. */
  [Symbol.asyncIterator](): AsyncGenerator<UniversalEvent, void, undefined> {
    if (this.#started) throw new TypeError('an EventStream can be iterated once; open another with client.events()');
    this.#started = true;
    return this.#run();
  }

  async *#run(): AsyncGenerator<UniversalEvent, void, undefined> {
    const policy = reconnectPolicy(this.#defaults, this.#options.reconnect);
    const outer = linkSignals(this.#transport.signal, this.#options.signal);
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
            what: 'the event stream',
            idleMs,
            onIdle: (cause) => new Interrupted(`nothing received for ${idleMs} ms`, cause === undefined ? {} : { cause }),
            abort: (reason) => connection.abort(reason),
            onRetry: (retry) => {
              baseDelay = retry;
            },
          });
          for await (const message of messages) {
            const event = await this.#decode(message);
            if (event === undefined) continue;
            failures = 0;
            this.#lastSequence = event.sequence;
            yield event;
            if (event.type === 'sessionEnded') return;
          }
          // A clean close without `sessionEnded`: the daemon stopped, or this stream started
          // past the `sessionEnded` of a session that is over (the daemon then closes at once).
          if (await this.#endedBefore(connection.signal)) return;
          failure = new Interrupted('the stream closed before `sessionEnded`');
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
    const resume = !first && this.#lastSequence > 0;
    const response = await this.#transport.send({
      op: 'streamEvents',
      route: routes.streamEvents,
      params: { sessionId: this.#sessionId },
      query: {
        offset: resume || this.#lastSequence === 0 ? undefined : this.#lastSequence,
        includeRaw: this.#options.includeRaw,
      },
      accept: 'text/event-stream',
      headers: { ...this.#options.headers, ...(resume ? { 'last-event-id': String(this.#lastSequence) } : {}) },
    }, signal);
    const type = response.headers.get('content-type') ?? '';
    if (!type.startsWith('text/event-stream')) {
      await response.body?.cancel();
      throw new ProtocolError(`streamEvents answered \`${type}\`, not text/event-stream`);
    }
    if (!response.body) throw new ProtocolError('streamEvents answered without a body');
    return response;
  }

  /** Whether the session is over and every one of its events was delivered already. */
  async #endedBefore(signal: AbortSignal): Promise<boolean> {
    try {
      const session = await this.#transport.json<SessionInfo>({
        op: 'getSession',
        route: routes.getSession,
        params: { sessionId: this.#sessionId },
        signal,
      });
      return session.status === 'ended' && session.eventCount <= this.#lastSequence;
    } catch {
      return false; // Unreachable or failing: reconnecting will tell.
    }
  }

  /** Parses one frame; `undefined` for an event already delivered. */
  async #decode(message: SseMessage): Promise<UniversalEvent | undefined> {
    let event: unknown;
    try {
      event = JSON.parse(message.data);
    } catch (error) {
      throw new ProtocolError(`SSE frame ${message.id || '(no id)'} is not JSON: ${describe(error)}`, { cause: error });
    }
    const sequence = (event as { sequence?: unknown } | null)?.sequence;
    if (typeof sequence !== 'number' || !Number.isSafeInteger(sequence)) {
      throw new ProtocolError(`SSE frame ${message.id || '(no id)'} carries no event sequence`);
    }
    if (message.id !== '' && message.id !== String(sequence)) {
      throw new ProtocolError(`SSE frame id ${message.id} differs from its event's sequence ${sequence}`);
    }
    if (sequence <= this.#lastSequence) return undefined;
    if (sequence !== this.#lastSequence + 1) {
      throw new ProtocolError(
        `session ${this.#sessionId}: event ${sequence} follows ${this.#lastSequence}; events ${this.#lastSequence + 1}–${sequence - 1} are missing`,
      );
    }
    const schema = this.#transport.validators?.event;
    if (!schema) return event as UniversalEvent;
    return (await validate(schema, event, `event ${sequence} of session ${this.#sessionId}`)) as UniversalEvent;
  }
}

/** Whether a failed connection is worth another try. */
function retryable(error: unknown): boolean {
  if (error instanceof ConnectionError) return true;
  if (error instanceof ProblemError) return error.status >= 500 || error.status === 408 || error.status === 429;
  return false;
}
