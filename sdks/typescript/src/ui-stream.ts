/**
 * A turn as the Vercel AI SDK's UI message stream (`GET /sessions/{id}/ui-stream`): the
 * SSE frames' `data` parsed as chunks, in order, until `data: [DONE]`. Used by the
 * client's `uiMessageStream` and by `SandboxChatTransport`; needs nothing of the `ai`
 * package.
 *
 * @module
 */

import { abortReason, linkSignals } from './abort.js';
import { ConnectionError, ProtocolError } from './errors.js';
import { frameData } from './resumable-stream.js';
import type { SseMessage } from './sse.js';
import { readSse } from './sse-response.js';
import { excerpt, type Call, type Transport } from './transport.js';

/**
 * One chunk of a UI message stream, as the `ai` package's `UIMessageChunk` (7.x) types
 * it: tagged by `type` (`start`, `text-delta`, `tool-approval-request`, `data-question`,
 * `finish`, …), with that type's fields. The daemon's spec lists them
 * (`uiMessageStream`).
 */
export interface UiMessageChunk {
  /** The chunk's kind. */
  readonly type: string;
  /** The fields of that kind. */
  readonly [field: string]: unknown;
}

/** The `data` of the frame that ends a complete stream. */
const DONE = '[DONE]';

/**
 * Sends `call` (a `uiMessageStream` call) and answers its chunks as a stream, or `null`
 * when the daemon has nothing to stream (204: no turn named and none running). A problem
 * rejects with `ProblemError` before any chunk. The stream errors with `ConnectionError`
 * when the connection breaks, or when it ends before `[DONE]` (the daemon stopped: read
 * the turn again, it replays from its start); with `ProtocolError` on a frame that is not
 * a chunk; with the signal's reason when `call.signal` (or the client's) aborts.
 * Cancelling the stream closes the connection.
 */
export async function openUiMessageStream(
  transport: Transport,
  call: Call,
): Promise<ReadableStream<UiMessageChunk> | null> {
  const linked = linkSignals(transport.signal, call.signal);
  const what = `the UI message stream of session ${call.params?.sessionId ?? ''}`;
  let response: Response;
  try {
    response = await transport.send(call, linked.signal);
  } catch (error) {
    linked.dispose();
    throw error;
  }
  if (response.status === 204) {
    await response.body?.cancel().catch(() => undefined);
    linked.dispose();
    return null;
  }
  const type = response.headers.get('content-type') ?? '';
  if (!/^text\/event-stream\b/i.test(type) || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    linked.dispose();
    throw new ProtocolError(`uiMessageStream answered \`${type || 'no content type'}\`, not text/event-stream`);
  }
  const messages = readSse(response, { what });
  const finish = (): void => {
    linked.abort();
    linked.dispose();
  };
  return new ReadableStream<UiMessageChunk>({
    async pull(controller) {
      try {
        const next = await messages.next();
        if (next.done) throw new ConnectionError(`${what} ended before its \`[DONE]\``);
        if (next.value.data === DONE) {
          finish();
          controller.close();
          return;
        }
        controller.enqueue(chunkOf(next.value, what));
      } catch (error) {
        const reason = linked.signal.aborted ? abortReason(linked.signal) : error;
        finish();
        await messages.return(undefined).catch(() => undefined);
        controller.error(reason);
      }
    },
    async cancel() {
      finish();
      await messages.return(undefined).catch(() => undefined);
    },
  });
}

/** A frame's `data` as a chunk. */
function chunkOf(message: SseMessage, what: string): UiMessageChunk {
  const value = frameData(message, what) as UiMessageChunk | null;
  if (typeof value?.type !== 'string') throw new ProtocolError(`${what}: a frame is not a chunk: ${excerpt(message.data)}`);
  return value;
}
