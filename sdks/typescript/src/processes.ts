/**
 * A session's processes: the frames of a followed log (`processLogs` with `follow=true`), which
 * the OpenAPI document describes only in words (its `text/event-stream` has no `itemSchema`),
 * and the stream that reads them, resumable as the event stream is.
 *
 * @module
 */

import type { ReconnectOptions } from './backoff.js';
import { ProtocolError } from './errors.js';
import type { LogChunk, ProcessInfo } from './generated/openapi.js';
import { routes } from './generated/routes.js';
import { ResumableStream, frameData, isSequence, type Frame, type ResumableStreamOptions } from './resumable-stream.js';
import type { SseMessage } from './sse.js';
import type { StandardSchemaV1 } from './standard-schema.js';
import type { Call, Transport } from './transport.js';

/** Chunks `from` to `to` (inclusive) of a log, dropped to keep it within `--process-log-bytes`. */
export interface LogGap {
  /** The first chunk dropped. */
  from: number;
  /** The last chunk dropped. */
  to: number;
}

/**
 * A frame of a followed process log, its `data` decoded from JSON; tagged by `event`:
 * `log` (a `LogChunk`, in sequence order), `gap` (chunks dropped before they were read: the
 * next `log` is `to + 1`), and `exit` (the `ProcessInfo` of the ended process), which is last.
 */
export type ProcessLogFrame =
  | { event: 'log'; data: LogChunk }
  | { event: 'gap'; data: LogGap }
  | { event: 'exit'; data: ProcessInfo };

/** Options of `followProcessLogs`. */
export interface ProcessLogStreamOptions extends ResumableStreamOptions {
  /** Deliver the chunks with `sequence > offset` (default 0: the whole log still kept). */
  readonly offset?: number;
}

/**
 * The log of one process, live until it ends: each chunk once, in order (a dropped connection
 * is resumed with `Last-Event-ID`), `gap` frames for chunks the daemon no longer keeps, and
 * last the `exit` frame. Iterate it once with `for await`; breaking out of the loop (or
 * aborting `signal`) closes the connection, not the process.
 */
export class ProcessLogStream extends ResumableStream<ProcessLogFrame> {
  readonly #sessionId: string;
  readonly #processId: string;

  /** Prefer `client.followProcessLogs(sessionId, processId, options)`. */
  constructor(
    transport: Transport,
    sessionId: string,
    processId: string,
    options?: ProcessLogStreamOptions,
    defaults?: ReconnectOptions | false,
  ) {
    super(transport, options, defaults);
    this.#sessionId = sessionId;
    this.#processId = processId;
  }

  /** The session of the process. */
  get sessionId(): string {
    return this.#sessionId;
  }

  /** The process this stream reads. */
  get processId(): string {
    return this.#processId;
  }

  protected get what(): string {
    return `the log of process ${this.#processId} of session ${this.#sessionId}`;
  }

  protected request(offset: number | undefined): Omit<Call, 'accept' | 'headers' | 'signal'> {
    return {
      op: 'processLogs',
      route: routes.processLogs,
      params: { sessionId: this.#sessionId, processId: this.#processId },
      query: { offset, follow: true },
    };
  }

  protected read(message: SseMessage): Frame<ProcessLogFrame> | undefined {
    const event = message.event;
    if (event !== 'log' && event !== 'gap' && event !== 'exit') return undefined; // A newer daemon's kind.
    const data = frameData(message, this.what) as { sequence?: unknown; from?: unknown; to?: unknown } | null;
    const value = { event, data } as ProcessLogFrame;
    if (event === 'exit') return { value, end: true };
    // A chunk is one sequence; a gap the ones dropped, `from` to `to`.
    const [from, to] = event === 'log' ? [data?.sequence, data?.sequence] : [data?.from, data?.to];
    if (!isSequence(from) || !isSequence(to) || to < from) {
      throw new ProtocolError(`${this.what}: a \`${event}\` frame without its sequences: ${message.data}`);
    }
    return { value, span: [from, to] };
  }

  protected check(frame: ProcessLogFrame): [StandardSchemaV1 | null | undefined, string] {
    return [this.transport.validators?.frames?.processLogs, `the \`${frame.event}\` frame of ${this.what}`];
  }
}
