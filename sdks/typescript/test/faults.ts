// Fault injection for the stream tests: a loopback TCP proxy that cuts or stalls SSE
// connections, and a fetch wrapper that breaks a response body after K frames. SSE means a
// session's event stream or a followed process log (`?follow=true`).

import { EventEmitter, once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';

/** What the proxy does to SSE connections (other requests pass untouched). */
export interface ProxyPolicy {
  /** Cut the connection (both sockets destroyed) once this many response bytes went through. */
  readonly cutAfterBytes?: number;
  /** How many SSE connections to cut (default: every one). */
  readonly maxCuts?: number;
  /** Stop forwarding (socket kept open) once this many response bytes went through. */
  readonly stallAfterBytes?: number;
  /** How many SSE connections to stall (default 1). */
  readonly maxStalls?: number;
}

/** A running proxy. Emits `sse-closed` when a client closes an SSE connection. */
export interface Proxy extends EventEmitter {
  /** Base URL to give the client. */
  readonly url: string;
  /** SSE requests seen so far. */
  readonly sseRequests: number;
  /** SSE connections cut so far. */
  readonly cuts: number;
  /** SSE connections stalled so far. */
  readonly stalls: number;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 in front of `target`. */
export async function startProxy(target: string, policy: ProxyPolicy = {}): Promise<Proxy> {
  const upstreamUrl = new URL(target);
  const sockets = new Set<Socket>();
  const emitter = new EventEmitter();
  let sseRequests = 0;
  let cuts = 0;
  let stalls = 0;

  const server: Server = createServer((client) => {
    const upstream = connect(Number(upstreamUrl.port), upstreamUrl.hostname);
    sockets.add(client).add(upstream);
    let sse = false;
    let stalled = false;
    let bytes = 0;
    let cutAt: number | undefined;
    let stallAt: number | undefined;
    const destroyBoth = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      const head = chunk.toString('latin1');
      if (head.includes('/events/sse') || /^GET \S*[?&]follow=true/.test(head)) {
        sse = true;
        sseRequests += 1;
        bytes = 0;
        cutAt = policy.cutAfterBytes !== undefined && cuts < (policy.maxCuts ?? Infinity) ? policy.cutAfterBytes : undefined;
        stallAt =
          policy.stallAfterBytes !== undefined && stalls < (policy.maxStalls ?? 1) ? policy.stallAfterBytes : undefined;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (stalled) return;
      if (sse) {
        const before = bytes;
        bytes += chunk.length;
        if (cutAt !== undefined && bytes >= cutAt) {
          cuts += 1;
          client.write(chunk.subarray(0, cutAt - before), () => destroyBoth());
          cutAt = undefined;
          sse = false;
          return;
        }
        if (stallAt !== undefined && bytes >= stallAt) {
          stalls += 1;
          stalled = true;
          client.write(chunk.subarray(0, stallAt - before));
          return;
        }
      }
      client.write(chunk);
    });
    client.on('close', () => {
      sockets.delete(client);
      upstream.destroy();
      if (sse || stalled) emitter.emit('sse-closed');
    });
    upstream.on('close', () => {
      sockets.delete(upstream);
      if (!stalled) client.end();
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');

  // Getters, not values: the counters move after this returns.
  return Object.defineProperties(emitter, {
    url: { value: `http://127.0.0.1:${address.port}/` },
    sseRequests: { get: () => sseRequests },
    cuts: { get: () => cuts },
    stalls: { get: () => stalls },
    close: {
      value: async (): Promise<void> => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
        await closed;
      },
    },
  }) as Proxy;
}

/** One SSE request the wrapper saw. */
export interface SeenRequest {
  /** Its `Last-Event-ID` header, or null. */
  readonly lastEventId: string | null;
  /** Its `offset` query parameter, or null. */
  readonly offset: string | null;
}

/**
 * A fetch that breaks the body of SSE response number `i` after `dropAfterFrames[i]`
 * complete frames (plus a few bytes of the next one), and records every SSE request.
 */
export function droppingFetch(dropAfterFrames: ReadonlyArray<number | undefined>): {
  fetch: typeof globalThis.fetch;
  requests: SeenRequest[];
} {
  const requests: SeenRequest[] = [];
  const wrapped: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const response = await globalThis.fetch(input, init);
    if (!url.pathname.endsWith('/events/sse') && url.searchParams.get('follow') !== 'true') return response;
    const headers = new Headers(init?.headers);
    requests.push({ lastEventId: headers.get('last-event-id'), offset: url.searchParams.get('offset') });
    const limit = dropAfterFrames[requests.length - 1];
    if (limit === undefined || !response.body) return response;
    return new Response(cutAfterFrames(response.body, limit), { status: response.status, headers: response.headers });
  };
  return { fetch: wrapped, requests };
}

/** Passes `limit` frames (ending with a blank line) and 5 more bytes, then errors. */
function cutAfterFrames(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let frames = 0;
  let previous = -1;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) {
        controller.close();
        return;
      }
      for (let i = 0; i < value.length; i++) {
        if (value[i] === 0x0a && previous === 0x0a) {
          frames += 1;
          if (frames === limit) {
            controller.enqueue(value.subarray(0, Math.min(value.length, i + 1 + 5)));
            await reader.cancel();
            controller.error(new TypeError('simulated connection drop'));
            return;
          }
        }
        previous = value[i] ?? -1;
      }
      controller.enqueue(value);
    },
    async cancel(reason) {
      await reader.cancel(reason);
    },
  });
}
