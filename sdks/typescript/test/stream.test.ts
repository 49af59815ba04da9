// Lossless event streams: dropped connections resumed with Last-Event-ID (no gap, no
// duplicate), stalls, cancellation, giving up, and resuming later from lastSequence.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { ProblemError, ReconnectError, SandboxDaemon, type UniversalEvent } from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { droppingFetch, startProxy } from './faults.js';
import { collect, range, startDaemon, uniqueId } from './helpers.js';

const FAST_RECONNECT = { retries: 5, initialDelayMs: 1, maxDelayMs: 20 };

describe('event streams', () => {
  let daemon: LocalSandboxDaemon;
  before(async () => {
    daemon = await startDaemon();
  });
  after(async () => {
    await daemon.close();
  });

  /** A client of the test daemon through `baseUrl` (default: direct). */
  function client(options: { baseUrl?: string; fetch?: typeof globalThis.fetch; signal?: AbortSignal } = {}): SandboxDaemon {
    return new SandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token, reconnect: FAST_RECONNECT, ...options });
  }

  /** A session whose whole log is written: `message` ran, then the session ended. */
  async function endedSession(message: string): Promise<{ id: string; total: number }> {
    const session = await daemon.startSession(uniqueId('log'), { agent: 'mock' });
    await session.run(message);
    const { eventCount } = await session.end();
    return { id: session.id, total: eventCount };
  }

  it('survives sockets closed mid `flood 10000` (live), delivering exactly 1..N', async () => {
    const proxy = await startProxy(daemon.baseUrl, { cutAfterBytes: 400_000, maxCuts: 3 });
    try {
      const viaProxy = client({ baseUrl: proxy.url });
      const session = await daemon.startSession(uniqueId('flood'), { agent: 'mock' });
      const stream = viaProxy.events(session.id);
      const sequences: number[] = [];
      for await (const event of stream) {
        sequences.push(event.sequence);
        // Start the flood once the stream is live, so the cuts land on live events.
        if (event.type === 'sessionStarted') await session.send('flood 10000');
        if (event.type === 'turnEnded') await session.end();
      }
      assert.equal(proxy.cuts, 3, 'three connections were cut');
      assert.equal(stream.reconnects, 3);
      assert.equal(proxy.sseRequests, 4);
      const total = (await session.info()).eventCount;
      assert.ok(total > 10_000, `flood 10000 logged ${total} events`);
      assert.equal(sequences.length, total, 'no duplicate, no loss');
      assert.deepEqual(sequences, range(1, total));
      assert.equal(stream.lastSequence, total);
    } finally {
      await proxy.close();
    }
  });

  it('reconnects with Last-Event-ID = the last sequence delivered after each broken body', async () => {
    const { id, total } = await endedSession('flood 600');
    const dropping = droppingFetch([100, 150, 37]);
    const events = await collect(client({ fetch: dropping.fetch }).events(id));
    assert.deepEqual(
      dropping.requests.map((r) => [r.offset, r.lastEventId]),
      [
        [null, null],
        [null, '100'],
        [null, '250'],
        [null, '287'],
      ],
    );
    assert.deepEqual(events.map((e) => e.sequence), range(1, total));
    assert.equal(events.at(-1)?.type, 'sessionEnded');
  });

  it('starts at ?offset= and resumes later from lastSequence', async () => {
    const { id, total } = await endedSession('flood 50');
    const dropping = droppingFetch([]);
    const first = client({ fetch: dropping.fetch }).events(id, { offset: 5 });
    const seen: UniversalEvent[] = [];
    for await (const event of first) {
      seen.push(event);
      if (event.sequence === 20) break;
    }
    assert.equal(first.lastSequence, 20);
    const rest = await collect(client({ fetch: dropping.fetch }).events(id, { offset: first.lastSequence }));
    assert.deepEqual([...seen, ...rest].map((e) => e.sequence), range(6, total));
    assert.deepEqual(
      dropping.requests.map((r) => r.offset),
      ['5', '20'],
    );
  });

  it('reconnects when the connection goes silent (idle timeout)', async () => {
    const { id, total } = await endedSession('flood 2000');
    const proxy = await startProxy(daemon.baseUrl, { stallAfterBytes: 50_000, maxStalls: 1 });
    try {
      const stream = client({ baseUrl: proxy.url }).events(id, { reconnect: { ...FAST_RECONNECT, idleTimeoutMs: 300 } });
      const events = await collect(stream);
      assert.equal(proxy.stalls, 1);
      assert.equal(stream.reconnects, 1);
      assert.deepEqual(events.map((e) => e.sequence), range(1, total));
    } finally {
      await proxy.close();
    }
  });

  it('closes its connection when the loop breaks', async () => {
    const proxy = await startProxy(daemon.baseUrl);
    try {
      const session = await daemon.startSession(uniqueId('break'), { agent: 'mock' });
      const closed = once(proxy, 'sse-closed');
      for await (const event of client({ baseUrl: proxy.url }).events(session.id)) {
        assert.equal(event.type, 'sessionStarted');
        break;
      }
      await closed;
    } finally {
      await proxy.close();
    }
  });

  it('is cancelled by the stream signal and by the client signal (AbortError)', async () => {
    const session = await daemon.startSession(uniqueId('abort'), { agent: 'mock' });
    for (const where of ['stream', 'client'] as const) {
      const controller = new AbortController();
      const c = client(where === 'client' ? { signal: controller.signal } : {});
      const stream = c.events(session.id, where === 'stream' ? { signal: controller.signal } : {});
      await assert.rejects(
        (async () => {
          for await (const event of stream) {
            if (event.type === 'sessionStarted') controller.abort();
          }
        })(),
        (error: unknown) => error instanceof DOMException && error.name === 'AbortError',
      );
    }
  });

  it('gives up after the configured retries with ReconnectError (lastSequence kept)', async () => {
    const session = await daemon.startSession(uniqueId('gone'), { agent: 'mock' });
    const proxy = await startProxy(daemon.baseUrl);
    const stream = client({ baseUrl: proxy.url }).events(session.id, { reconnect: { retries: 2, initialDelayMs: 1 } });
    await assert.rejects(
      (async () => {
        for await (const event of stream) {
          if (event.type === 'sessionStarted') await proxy.close(); // the "daemon" disappears
        }
      })(),
      (error: unknown) => {
        assert.ok(error instanceof ReconnectError, String(error));
        assert.equal(error.attempts, 2);
        assert.equal(error.lastSequence, 1);
        return true;
      },
    );
  });

  it('does not retry a problem: an unknown session is a 404 ProblemError', async () => {
    await assert.rejects(collect(client().events('no-such-session')), (error: unknown) => {
      assert.ok(error instanceof ProblemError);
      assert.equal(error.status, 404);
      assert.equal(error.type, 'urn:sandbox-daemon:problem:session-not-found');
      return true;
    });
  });

  it('never reconnects with reconnect: false', async () => {
    const { id } = await endedSession('flood 100');
    const dropping = droppingFetch([10]);
    await assert.rejects(collect(client({ fetch: dropping.fetch }).events(id, { reconnect: false })), ReconnectError);
    assert.equal(dropping.requests.length, 1);
  });
});
