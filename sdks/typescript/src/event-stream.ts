/**
 * A session's event log over SSE, lossless across dropped connections: it remembers the
 * last sequence it delivered, reconnects with `Last-Event-ID` set to it (backoff with
 * jitter, bounded retries), drops any event it already delivered, refuses a gap, and ends
 * after `sessionEnded` (the machinery is `ResumableStream`'s).
 *
 * @module
 */

import type { ReconnectOptions } from './backoff.js';
import { ProtocolError } from './errors.js';
import type { SessionInfo, UniversalEvent } from './generated/openapi.js';
import { routes } from './generated/routes.js';
import { ResumableStream, frameData, isSequence, type Frame, type ResumableStreamOptions } from './resumable-stream.js';
import type { SseMessage } from './sse.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import type { Call, Transport } from './transport.js';

/** Options of an event stream. */
export interface EventStreamOptions extends ResumableStreamOptions {
  /** Deliver events with `sequence > offset` (default 0: the whole log). */
  readonly offset?: number;
  /** Include each event's native JSON as `raw`. */
  readonly includeRaw?: boolean;
}

/**
 * The events of one session, in order, each exactly once. Iterate it once with
 * `for await`; breaking out of the loop (or aborting `signal`) closes the connection.
 */
export class EventStream extends ResumableStream<UniversalEvent> {
  readonly #sessionId: string;
  readonly #includeRaw: boolean | undefined;

  /** Prefer `client.events(sessionId, options)`. */
  constructor(
    transport: Transport,
    sessionId: string,
    options: EventStreamOptions = {},
    defaults?: ReconnectOptions | false,
  ) {
    super(transport, options, defaults);
    this.#sessionId = sessionId;
    this.#includeRaw = options.includeRaw;
  }

  /** The session this stream reads. */
  get sessionId(): string {
    return this.#sessionId;
  }

  protected get what(): string {
    return `the event stream of session ${this.#sessionId}`;
  }

  protected request(offset: number | undefined): Omit<Call, 'accept' | 'headers' | 'signal'> {
    return {
      op: 'streamEvents',
      route: routes.streamEvents,
      params: { sessionId: this.#sessionId },
      query: { offset, includeRaw: this.#includeRaw },
    };
  }

  protected read(message: SseMessage): Frame<UniversalEvent> {
    const event = frameData(message, this.what) as UniversalEvent;
    const sequence = (event as { sequence?: unknown } | null)?.sequence;
    if (!isSequence(sequence)) throw new ProtocolError(`SSE frame ${message.id || '(no id)'} carries no event sequence`);
    if (message.id !== '' && message.id !== String(sequence)) {
      throw new ProtocolError(`SSE frame id ${message.id} differs from its event's sequence ${sequence}`);
    }
    return { value: event, span: [sequence, sequence], end: event.type === 'sessionEnded' };
  }

  protected check(event: UniversalEvent): [StandardSchemaV1 | undefined, string] {
    return [this.transport.validators?.event, `event ${event.sequence} of session ${this.#sessionId}`];
  }

  /** Whether the session is over and every one of its events was delivered already. */
  protected override async ended(signal: AbortSignal): Promise<boolean> {
    try {
      const session = await this.transport.json<SessionInfo>({
        op: 'getSession',
        route: routes.getSession,
        params: { sessionId: this.#sessionId },
        signal,
      });
      return session.status === 'ended' && session.eventCount <= this.lastSequence;
    } catch {
      return false; // Unreachable or failing: reconnecting will tell.
    }
  }
}
