// What the client puts on the wire, seen through a recording fetch (no daemon needed).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SandboxDaemon } from 'sandbox-daemon/inline';

interface Recorded {
  method: string;
  url: string;
  headers: Headers;
  body: string | undefined;
}

/** A client whose fetch records each request and answers `status` with `body`. */
function recording(options: { baseUrl?: string; token?: string } = {}, status = 200, body: unknown = {}) {
  const requests: Recorded[] = [];
  const client = new SandboxDaemon({
    baseUrl: options.baseUrl ?? 'http://daemon.test:2468',
    ...(options.token === undefined ? {} : { token: options.token }),
    fetch: async (input, init) => {
      requests.push({
        method: init?.method ?? 'GET',
        url: String(input),
        headers: new Headers(init?.headers),
        body: typeof init?.body === 'string' ? init.body : undefined,
      });
      return status === 204
        ? new Response(null, { status })
        : new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, requests };
}

describe('requests', () => {
  it('keep a base path, encode path parameters and send the bearer token', async () => {
    const { client, requests } = recording({ baseUrl: 'http://proxy.test/daemon/', token: 't0k' });
    await client.getSession('a b/c');
    assert.equal(requests[0]?.url, 'http://proxy.test/daemon/sessions/a%20b%2Fc');
    assert.equal(requests[0]?.method, 'GET');
    assert.equal(requests[0]?.headers.get('authorization'), 'Bearer t0k');
    assert.equal(requests[0]?.headers.get('accept'), 'application/json, application/problem+json');
    assert.equal(requests[0]?.body, undefined);
  });

  it('send no authorization without a token', async () => {
    const { client, requests } = recording();
    await client.health();
    assert.equal(requests[0]?.headers.get('authorization'), null);
    assert.equal(requests[0]?.url, 'http://daemon.test:2468/health');
  });

  it('send query parameters only when given', async () => {
    const { client, requests } = recording({}, 200, { events: [], hasMore: false });
    await client.getEvents('s', { offset: 5, limit: 10, includeRaw: true });
    await client.getEvents('s');
    await client.listSessions({ status: 'ended', limit: 2, cursor: '7' });
    assert.equal(requests[0]?.url, 'http://daemon.test:2468/sessions/s/events?offset=5&limit=10&includeRaw=true');
    assert.equal(requests[1]?.url, 'http://daemon.test:2468/sessions/s/events');
    assert.equal(requests[2]?.url, 'http://daemon.test:2468/sessions?status=ended&limit=2&cursor=7');
  });

  it('POST JSON with content-type, `{}` for operations without a body', async () => {
    const { client, requests } = recording({}, 204);
    await client.rejectQuestion('s', 'q_1');
    await client.replyQuestion('s', 'q_2', { answers: [['Red']] });
    await client.replyPermission('s', 'perm_1', { reply: 'always' });
    assert.deepEqual(
      requests.map((r) => [r.method, new URL(r.url).pathname, r.body, r.headers.get('content-type')]),
      [
        ['POST', '/sessions/s/questions/q_1/reject', '{}', 'application/json'],
        ['POST', '/sessions/s/questions/q_2/reply', '{"answers":[["Red"]]}', 'application/json'],
        ['POST', '/sessions/s/permissions/perm_1/reply', '{"reply":"always"}', 'application/json'],
      ],
    );
  });

  it('ask installAgent for the JSON summary, not the progress stream', async () => {
    const { client, requests } = recording({}, 200, { agent: 'mock', alreadyInstalled: true });
    await client.installAgent('mock');
    assert.equal(requests[0]?.headers.get('accept'), 'application/json');
    assert.equal(requests[0]?.body, '{}');
  });

  it('DELETE without a body, resolving to undefined on 204', async () => {
    const { client, requests } = recording({}, 204);
    assert.equal(await client.deleteSession('s'), undefined);
    assert.equal(requests[0]?.method, 'DELETE');
    assert.equal(requests[0]?.body, undefined);
  });

  it('abort a call with its signal', async () => {
    const client = new SandboxDaemon({
      baseUrl: 'http://daemon.test',
      fetch: (_input, init) =>
        new Promise((_, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason))),
    });
    const controller = new AbortController();
    const pending = client.health({ signal: controller.signal });
    controller.abort();
    await assert.rejects(pending, (error: unknown) => error instanceof DOMException && error.name === 'AbortError');
  });
});
