// Installing agents: `installAgent` (the JSON summary) and `installAgentProgress` (its event
// stream) against the real daemon, which can never download anything here (test/helpers.ts:
// the install mirror and npm registry are port 1 of loopback, so an install fails at once);
// then the stream's edge cases through a fetch that answers crafted frames.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ConnectionError,
  InstallAgentFrameSchema,
  ProblemError,
  ProtocolError,
  SandboxDaemon,
  ValidationError,
  streamFrameSchemas,
  type InstallAgentFrame,
  type InstallFrame,
  type InstallRequest,
} from 'sandbox-daemon';
import { SandboxDaemon as InlineSandboxDaemon } from 'sandbox-daemon/inline';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, startDaemon } from './helpers.js';

/** Iterates `frames` until it throws; answers the frames received and the error. */
async function framesUntilError(frames: AsyncIterable<InstallFrame>): Promise<{ frames: InstallFrame[]; error: unknown }> {
  const received: InstallFrame[] = [];
  try {
    for await (const frame of frames) received.push(frame);
  } catch (error) {
    return { frames: received, error };
  }
  assert.fail(`the stream ended without an error after ${JSON.stringify(received)}`);
}

/** A ProblemError of `status` (and `agentErrorType`, when given). */
function problem(status: number, agentErrorType?: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof ProblemError, `expected a ProblemError, got ${String(error)}`);
    assert.equal(error.status, status, error.message);
    if (agentErrorType !== undefined) assert.equal(error.agentError?.type, agentErrorType, error.message);
    return true;
  };
}

/** Standard Schema issues of `value` against `schema` (none: valid). */
async function issues(schema: typeof InstallAgentFrameSchema, value: unknown): Promise<readonly unknown[]> {
  const result = await schema['~standard'].validate(value);
  return result.issues ?? [];
}

describe('installing agents against the daemon', () => {
  let daemon: LocalSandboxDaemon;
  let plain: SandboxDaemon;
  before(async () => {
    daemon = await startDaemon({ validate: true });
    plain = new SandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token });
  });
  after(async () => {
    await daemon.close();
  });

  it('installAgent: the mock is built in, already installed', async () => {
    for (const body of [undefined, {}, { version: 'pinned', reinstall: false }] satisfies Array<InstallRequest | undefined>) {
      const installed = await daemon.installAgent('mock', body);
      assert.equal(installed.agent, 'mock');
      assert.equal(installed.alreadyInstalled, true);
      assert.equal(installed.source, 'builtIn');
      assert.equal(installed.size, 0);
    }
  });

  it('installAgent: a failed download is a 502 ProblemError of type installFailed', async () => {
    await assert.rejects(plain.installAgent('amp', { version: '1.0.0' }), problem(502, 'installFailed'));
    await assert.rejects(daemon.installAgent('amp', { version: '1.0.0', reinstall: true }), problem(502, 'installFailed'));
  });

  it('installAgent: a version that is not one is a 422 (the body breaks its schema), an unknown agent a 404', async () => {
    await assert.rejects(daemon.installAgent('amp', { version: '../x' }), (error: unknown) => {
      problem(422)(error);
      assert.equal((error as ProblemError).kind, 'invalid-body');
      return true;
    });
    await assert.rejects(daemon.installAgent('nope' as 'amp'), (error: unknown) => {
      problem(404)(error);
      assert.equal((error as ProblemError).kind, 'unknown-agent');
      return true;
    });
  });

  it('installAgentProgress: the mock answers a single installed frame, and the stream ends', async () => {
    for (const client of [daemon, plain]) {
      const frames = await collect(client.installAgentProgress('mock'));
      assert.equal(frames.length, 1, JSON.stringify(frames));
      const [frame] = frames;
      assert.equal(frame?.event, 'installed');
      if (frame?.event !== 'installed') return;
      assert.equal(frame.data.agent, 'mock');
      assert.equal(frame.data.alreadyInstalled, true);
      assert.equal(frame.data.source, 'builtIn');
    }
  });

  it('installAgentProgress: a failed install throws its 502 problem after its progress, resolving first', async () => {
    for (const client of [daemon, plain]) {
      const { frames, error } = await framesUntilError(client.installAgentProgress('amp', { version: '1.0.0' }));
      problem(502, 'installFailed')(error);
      assert.match((error as ProblemError).detail, /127\.0\.0\.1:1/, 'the daemon tried the offline mirror only');
      assert.ok(frames.every((f) => f.event === 'progress'), JSON.stringify(frames));
      assert.ok(frames.length >= 1, 'a progress frame came before the error');
      assert.deepEqual(frames[0], { event: 'progress', data: { phase: 'resolving', requested: '1.0.0' } });
    }
  });

  it('installAgentProgress: a refused request throws before any frame (422, 404)', async () => {
    const bad = await framesUntilError(daemon.installAgentProgress('amp', { version: '../x' }));
    assert.deepEqual(bad.frames, []);
    problem(422)(bad.error);
    const unknown = await framesUntilError(daemon.installAgentProgress('nope' as 'amp', {}));
    assert.deepEqual(unknown.frames, []);
    problem(404)(unknown.error);
  });

  it('installAgentProgress with validate: true: every frame the daemon sends validates', async () => {
    assert.ok(daemon.validates);
    const seen: InstallAgentFrame[] = [...(await collect(daemon.installAgentProgress('mock')))];
    const failed = await framesUntilError(daemon.installAgentProgress('amp', { version: '1.0.0' }));
    seen.push(...failed.frames, { event: 'error', data: (failed.error as ProblemError).problem });
    assert.deepEqual(
      seen.map((f) => f.event),
      ['installed', ...failed.frames.map(() => 'progress'), 'error'],
    );
    for (const frame of seen) assert.deepEqual(await issues(streamFrameSchemas.installAgent, frame), [], JSON.stringify(frame));
  });
});

/** One crafted response: SSE `chunks` (then `end`: close, `error`: break off, `hang`: stay open). */
interface Crafted {
  readonly chunks: readonly string[];
  readonly end?: 'close' | 'error' | 'hang';
  readonly contentType?: string;
}

/** A fetch answering `crafted`; records each request. */
function craftedFetch(crafted: Crafted): { fetch: typeof globalThis.fetch; requests: Request[]; closed: Promise<void> } {
  const requests: Request[] = [];
  let markClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    requests.push(request);
    const encoder = new TextEncoder();
    const pending = [...crafted.chunks];
    let ended = false;
    // One chunk per pull, so a break-off (`error`, which drops queued chunks) comes after them.
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        request.signal.addEventListener('abort', () => {
          markClosed();
          if (!ended) controller.error(request.signal.reason);
        });
      },
      pull(controller) {
        const chunk = pending.shift();
        if (chunk !== undefined) {
          controller.enqueue(encoder.encode(chunk));
          return;
        }
        if (crafted.end === 'hang') return new Promise<void>(() => undefined);
        ended = true;
        if (crafted.end === 'error') controller.error(new TypeError('terminated'));
        else controller.close();
        return;
      },
      cancel() {
        markClosed();
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': crafted.contentType ?? 'text/event-stream' } });
  };
  return { fetch, requests, closed };
}

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const resolving = frame('progress', { phase: 'resolving', requested: 'latest' });
const downloading = frame('progress', { phase: 'downloading', version: '2.0.0', url: 'https://x.invalid/a', bytes: 10, total: 20 });
const installed = { agent: 'amp', alreadyInstalled: false, version: '2.0.0', path: '/a', source: 'release', size: 20, durationMs: 5 };

describe('installAgentProgress, frame by frame', () => {
  const client = (crafted: Crafted, validate = false): { daemon: SandboxDaemon; requests: Request[]; closed: Promise<void> } => {
    const { fetch, requests, closed } = craftedFetch(crafted);
    return { daemon: new SandboxDaemon({ baseUrl: 'http://daemon.invalid/', token: 't', fetch, validate }), requests, closed };
  };

  it('asks for text/event-stream with the JSON body, and yields typed frames until installed', async () => {
    const { daemon, requests } = client({ chunks: [resolving, downloading.slice(0, 20), downloading.slice(20), frame('installed', installed), frame('progress', { phase: 'verifying', version: '2.0.0' })] });
    const frames = await collect(daemon.installAgentProgress('amp', { version: 'latest', reinstall: true }));
    assert.deepEqual(frames.map((f) => f.event === 'progress' ? f.data.phase : f.event), ['resolving', 'downloading', 'installed']);
    const last = frames.at(-1);
    assert.ok(last?.event === 'installed' && last.data.size === 20);
    const [request] = requests;
    assert.equal(request?.method, 'POST');
    assert.equal(new URL(request.url).pathname, '/agents/amp/install');
    assert.equal(request.headers.get('accept'), 'text/event-stream');
    assert.equal(request.headers.get('authorization'), 'Bearer t');
    assert.deepEqual(await request.json(), { version: 'latest', reinstall: true });
  });

  it('throws the error frame as a ProblemError, with every member', async () => {
    const data = { type: 'urn:sandbox-daemon:problem:agent-error', title: 'Agent error', status: 502, detail: 'boom', agentError: { type: 'installFailed', message: 'boom' } };
    for (const validate of [false, true]) {
      const { error, frames } = await framesUntilError(client({ chunks: [resolving, frame('error', data)] }, validate).daemon.installAgentProgress('amp'));
      assert.equal(frames.length, 1);
      problem(502, 'installFailed')(error);
      assert.equal((error as ProblemError).kind, 'agent-error');
      assert.deepEqual((error as ProblemError).problem, data);
    }
  });

  it('skips frames of kinds it does not know (a newer daemon)', async () => {
    const frames = await collect(client({ chunks: [': keep-alive\n\n', frame('log', { line: 'x' }), 'data: {}\n\n', resolving, frame('installed', installed)] }).daemon.installAgentProgress('amp'));
    assert.deepEqual(frames.map((f) => f.event), ['progress', 'installed']);
  });

  it('a stream that breaks off, or ends before its outcome, is a ConnectionError: the install may still run', async () => {
    for (const end of ['error', 'close'] as const) {
      const { frames, error } = await framesUntilError(client({ chunks: [resolving], end }).daemon.installAgentProgress('amp'));
      assert.equal(frames.length, 1);
      assert.ok(error instanceof ConnectionError, String(error));
      assert.match(error.message, end === 'error' ? /broke off/ : /ended before its outcome/);
      assert.match(error.message, /may still be running on the daemon/);
    }
  });

  it('a frame that is not JSON is a ProtocolError; a daemon answering JSON gives one installed frame', async () => {
    const { error } = await framesUntilError(client({ chunks: ['event: progress\ndata: {nope\n\n'] }).daemon.installAgentProgress('amp'));
    assert.ok(error instanceof ProtocolError, String(error));
    const frames = await collect(client({ chunks: [JSON.stringify(installed)], contentType: 'application/json' }, true).daemon.installAgentProgress('amp'));
    assert.deepEqual(frames, [{ event: 'installed', data: installed }]);
  });

  it('an AbortSignal stops reading (the connection closes) and rejects with its reason', async () => {
    const controller = new AbortController();
    const { daemon, closed } = client({ chunks: [resolving], end: 'hang' });
    const received: InstallFrame[] = [];
    await assert.rejects(
      (async () => {
        for await (const f of daemon.installAgentProgress('amp', {}, { signal: controller.signal })) {
          received.push(f);
          setTimeout(() => controller.abort(), 10);
        }
      })(),
      (error: unknown) => error instanceof DOMException && error.name === 'AbortError',
    );
    assert.equal(received.length, 1);
    await closed;
  });

  it('breaking out of the loop closes the connection', async () => {
    const { daemon, closed } = client({ chunks: [resolving], end: 'hang' });
    for await (const f of daemon.installAgentProgress('amp')) {
      assert.equal(f.event, 'progress');
      break;
    }
    await closed;
  });

  it('with validate: true, a frame off the spec is a ValidationError naming the field', async () => {
    const bad = frame('progress', { phase: 'downloading', version: '2.0.0', bytes: 10 });
    const lax = await collect(client({ chunks: [bad, frame('installed', installed)] }).daemon.installAgentProgress('amp'));
    assert.equal(lax.length, 2, 'without validate, frames pass as they are');
    const { error } = await framesUntilError(client({ chunks: [bad, frame('installed', installed)] }, true).daemon.installAgentProgress('amp'));
    assert.ok(error instanceof ValidationError, String(error));
    assert.deepEqual(error.paths, ['data.url']);
    assert.match(error.message, /`progress` frame of the install of amp/);
  });

  it('the inline client validates frames with the validators it is given', async () => {
    const { fetch } = craftedFetch({ chunks: [frame('installed', { ...installed, size: -1 })] });
    const inline = new InlineSandboxDaemon({ baseUrl: 'http://daemon.invalid/', fetch, validate: { frames: streamFrameSchemas } });
    const { error } = await framesUntilError(inline.installAgentProgress('amp'));
    assert.ok(error instanceof ValidationError, String(error));
    assert.deepEqual(error.paths, ['data.size']);
  });
});
