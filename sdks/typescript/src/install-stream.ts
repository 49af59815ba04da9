/**
 * The progress of an agent install: `POST /agents/{agent}/install` with
 * `Accept: text/event-stream`, read as typed frames. Not resumable: the daemon streams one
 * install and its frames carry no ids, so a dropped connection is an error (the install
 * itself goes on in the daemon).
 *
 * @module
 */

import { abortReason, linkSignals } from './abort.js';
import { ConnectionError, ProblemError, ProtocolError } from './errors.js';
import { routes } from './generated/routes.js';
import type { InstallAgentFrame } from './generated/streams.js';
import { frameData } from './resumable-stream.js';
import type { SseMessage } from './sse.js';
import { readSse } from './sse-response.js';
import { asProblem, excerpt, readJson, validate, type RequestOptions, type Transport } from './transport.js';
import type { InstallFrame, PathParams, RequestBody } from './types.js';

/** Told with every failure after the install started: it may outlive the connection. */
const STILL_RUNNING =
  '; the install may still be running on the daemon (`installAgent` waits for a running install and answers its outcome)';

/**
 * The frames of one install: `progress` frames, then the `installed` frame, after which it
 * ends. An `error` frame rejects with `ProblemError`; a stream that breaks off or ends
 * before its outcome, with `ConnectionError`. Frames of kinds this SDK does not know (a
 * newer daemon's) are skipped.
 */
export async function* installFrames(
  transport: Transport,
  agent: PathParams<'installAgent'>['agent'],
  body: RequestBody<'installAgent'>,
  options: RequestOptions = {},
): AsyncGenerator<InstallFrame, void, undefined> {
  const linked = linkSignals(transport.signal, options.signal);
  const what = `the install stream of ${agent}`;
  const check = async (frame: InstallAgentFrame): Promise<InstallAgentFrame> => {
    const schema = transport.validators?.frames?.installAgent;
    if (!schema) return frame;
    return (await validate(schema, frame, `the \`${frame.event}\` frame of the install of ${agent}`)) as InstallAgentFrame;
  };
  try {
    const response = await transport.send(
      {
        op: 'installAgent',
        route: routes.installAgent,
        params: { agent },
        body,
        accept: 'text/event-stream',
        ...(options.headers ? { headers: options.headers } : {}),
      },
      linked.signal,
    );
    const type = response.headers.get('content-type') ?? '';
    if (/^application\/json\b/i.test(type)) {
      // A daemon that cannot stream an install answers its summary: one `installed` frame.
      const data = await readJson(response, 'installAgent response', linked.signal);
      yield (await check({ event: 'installed', data } as InstallAgentFrame)) as InstallFrame;
      return;
    }
    if (!/^text\/event-stream\b/i.test(type) || !response.body) {
      await response.body?.cancel();
      throw new ProtocolError(`installAgent answered \`${type || 'no content type'}\`, not text/event-stream`);
    }
    for await (const message of readSse(response, { what, brokeOffHint: STILL_RUNNING })) {
      const frame = decode(message, what);
      if (frame === undefined) continue;
      const checked = await check(frame);
      if (checked.event === 'error') {
        throw new ProblemError(
          asProblem(checked.data, 502, 'Install failed', `the error frame was not a problem: ${excerpt(message.data)}`),
          response.headers,
        );
      }
      yield checked;
      if (checked.event === 'installed') return;
    }
    throw new ConnectionError(`${what} ended before its outcome (an \`installed\` or \`error\` frame)${STILL_RUNNING}`);
  } catch (error) {
    if (linked.signal.aborted) throw abortReason(linked.signal);
    throw error;
  } finally {
    linked.abort();
    linked.dispose();
  }
}

/** One frame with its `data` parsed; `undefined` for a kind this SDK does not know. */
function decode(message: SseMessage, what: string): InstallAgentFrame | undefined {
  const event = message.event;
  if (event !== 'progress' && event !== 'installed' && event !== 'error') return undefined;
  return { event, data: frameData(message, what) } as InstallAgentFrame;
}
