/**
 * The SSE messages of a `fetch` response body: bytes decoded as UTF-8 (a character split
 * across chunks stays whole) and fed to `SseParser`. Shared by the resumable streams (a
 * session's events, a process's followed log) and the install progress stream; not exported.
 *
 * @module
 */

import { ConnectionError, describe } from './errors.js';
import { SseParser, type SseMessage } from './sse.js';

/** Options of `readSse`. */
export interface ReadSseOptions {
  /** What is read, for messages (e.g. `the event stream`). */
  readonly what: string;
  /** Appended to the message of a read that broke off. */
  readonly brokeOffHint?: string;
  /** Nothing received for this long (ms) fails the read with `onIdle` (0 or absent: no limit). */
  readonly idleMs?: number;
  /** The error an idle connection fails with (`cause`: the read's own failure, once aborted). */
  readonly onIdle?: (cause?: unknown) => Error;
  /** Aborts the connection (called with the idle error, so the pending read fails). */
  readonly abort?: (reason: unknown) => void;
  /** Receives each valid `retry` value. */
  readonly onRetry?: (ms: number) => void;
}

/**
 * The SSE messages of `response` (which must have a body), in order. A read that fails
 * becomes `ConnectionError`; the reader is cancelled when the iteration ends, however it ends.
 */
export async function* readSse(response: Response, options: ReadSseOptions): AsyncGenerator<SseMessage, void, undefined> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const parser = new SseParser();
  const idleMs = options.onIdle ? (options.idleMs ?? 0) : 0;
  let idle = false;
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      if (idleMs > 0) {
        timer = setTimeout(() => {
          idle = true;
          options.abort?.(options.onIdle?.());
        }, idleMs);
      }
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (idle && options.onIdle) throw options.onIdle(error);
        throw new ConnectionError(`${options.what} broke off: ${describe(error)}${options.brokeOffHint ?? ''}`, {
          cause: error,
        });
      } finally {
        clearTimeout(timer);
      }
      const text = chunk.done ? decoder.decode() : decoder.decode(chunk.value, { stream: true });
      const result = parser.push(text);
      if (result.retry !== undefined) options.onRetry?.(result.retry);
      yield* result.messages;
      if (chunk.done) {
        parser.end();
        return;
      }
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}
