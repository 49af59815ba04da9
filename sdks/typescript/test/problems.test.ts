// Non-2xx answers reject with ProblemError carrying the RFC 7807 members; transport
// failures with ConnectionError / ProtocolError. Never a bare Response.

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import {
  ConnectionError,
  ProblemError,
  ProtocolError,
  SandboxDaemon,
  type AgentId,
  type CreateSessionRequest,
  type PermissionReply,
} from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { startDaemon, uniqueId } from './helpers.js';

const PREFIX = 'urn:sandbox-daemon:problem:';

/** Input the types forbid, to reach the daemon's own checks. */
function unchecked<T>(value: unknown): T {
  return value as T;
}

/** Asserts `promise` rejects with a ProblemError of `status` and `kind`; returns it. */
async function problem(promise: Promise<unknown>, status: number, kind: string): Promise<ProblemError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ProblemError, `expected a ProblemError, got ${String(caught)}`);
  assert.equal(caught.status, status, caught.message);
  assert.equal(caught.type, `${PREFIX}${kind}`);
  assert.equal(caught.kind, kind);
  assert.equal(typeof caught.title, 'string');
  assert.ok(caught.detail.length > 0);
  assert.equal(caught.problem.status, status);
  return caught;
}

describe('problem details', () => {
  let daemon: LocalSandboxDaemon;
  before(async () => {
    daemon = await startDaemon({ validate: true });
  });
  after(async () => {
    await daemon.close();
  });

  it('unknown agent: 404 unknown-agent (createSession, agentModels)', async () => {
    const error = await problem(
      daemon.createSession(uniqueId(), unchecked<CreateSessionRequest>({ agent: 'bogus' })),
      404,
      'unknown-agent',
    );
    assert.match(error.detail, /bogus/);
    assert.match(error.instance ?? '', /^\/sessions\//);
    await problem(daemon.agentModels(unchecked<AgentId>('nope')), 404, 'unknown-agent');
  });

  it('bad bodies: 422 invalid-body for an unknown field or a bad enum value', async () => {
    await problem(
      daemon.createSession(uniqueId(), unchecked<CreateSessionRequest>({ agent: 'mock', agnt: 'x' })),
      422,
      'invalid-body',
    );
    const session = await daemon.startSession(uniqueId(), { agent: 'mock' });
    await problem(session.replyPermission('perm_1', unchecked<PermissionReply>('maybe')), 422, 'invalid-body');
  });

  it('bad parameters: 400 invalid-parameter (limit out of range, bad session id)', async () => {
    await problem(daemon.listSessions({ limit: 0 }), 400, 'invalid-parameter');
    const session = await daemon.startSession(uniqueId(), { agent: 'mock' });
    await problem(session.getEvents({ limit: 5000 }), 400, 'invalid-parameter');
    await problem(daemon.getSession('bad id'), 400, 'invalid-parameter');
  });

  it('conflicts: 409 session-exists, no-active-turn, permission-resolved, session-ended', async () => {
    const session = await daemon.startSession(uniqueId(), { agent: 'mock' });
    await problem(session.create({ agent: 'mock' }), 409, 'session-exists');
    await problem(session.cancel(), 409, 'no-active-turn');
    let permissionId = '';
    await session.run('permission', {
      onPermission: (request) => {
        permissionId = request.permissionId;
        return 'once';
      },
    });
    await problem(session.replyPermission(permissionId, 'once'), 409, 'permission-resolved');
    await session.end();
    await problem(session.send('hello'), 409, 'session-ended');
  });

  it('missing things: 404 session-not-found, question-not-found', async () => {
    await problem(daemon.getSession('never-created'), 404, 'session-not-found');
    await problem(daemon.deleteSession('never-created'), 404, 'session-not-found');
    const session = await daemon.startSession(uniqueId(), { agent: 'mock' });
    await problem(session.rejectQuestion('q_404'), 404, 'question-not-found');
  });

  it('auth: 401 unauthorized with WWW-Authenticate, while /health needs no token', async () => {
    const anonymous = new SandboxDaemon({ baseUrl: daemon.baseUrl });
    assert.equal((await anonymous.health()).status, 'ok');
    const error = await problem(anonymous.listAgents(), 401, 'unauthorized');
    assert.equal(error.headers.get('www-authenticate'), 'Bearer');
    await problem(new SandboxDaemon({ baseUrl: daemon.baseUrl, token: 'wrong' }).listAgents(), 401, 'unauthorized');
  });
});

describe('answers that are not problems', () => {
  /** A client whose fetch answers `response` to everything. */
  function answering(response: () => Response): SandboxDaemon {
    return new SandboxDaemon({ baseUrl: 'http://daemon.invalid/', fetch: async () => response() });
  }

  it('a non-problem error body becomes an about:blank problem quoting it', async () => {
    const client = answering(
      () => new Response('<html>Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway', headers: { 'content-type': 'text/html' } }),
    );
    const error = await client.health().catch((e: unknown) => e);
    assert.ok(error instanceof ProblemError);
    assert.equal(error.type, 'about:blank');
    assert.equal(error.status, 502);
    assert.equal(error.title, 'Bad Gateway');
    assert.match(error.detail, /<html>Bad Gateway<\/html>/);
  });

  it('an empty error body (hyper\'s bare 400) is a problem too', async () => {
    const error = await answering(() => new Response(null, { status: 431 })).health().catch((e: unknown) => e);
    assert.ok(error instanceof ProblemError);
    assert.equal(error.status, 431);
    assert.equal(error.detail, 'the response had no body');
  });

  it('keeps extension members of a problem', async () => {
    const body = { type: `${PREFIX}store-unavailable`, title: 'Store unavailable', status: 503, detail: 'down', retryIn: 3 };
    const client = answering(
      () => new Response(JSON.stringify(body), { status: 503, headers: { 'content-type': 'application/problem+json', 'retry-after': '3' } }),
    );
    const error = await client.listAgents().catch((e: unknown) => e);
    assert.ok(error instanceof ProblemError);
    assert.equal(error.problem.retryIn, 3);
    assert.equal(error.headers.get('retry-after'), '3');
  });

  it('a 2xx body that is not JSON is a ProtocolError', async () => {
    const client = answering(() => new Response('not json', { status: 200, headers: { 'content-type': 'application/json' } }));
    await assert.rejects(client.health(), ProtocolError);
  });

  it('nothing listening is a ConnectionError', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    await new Promise((resolve) => server.close(resolve));
    const client = new SandboxDaemon({ baseUrl: `http://127.0.0.1:${address.port}` });
    await assert.rejects(client.health(), ConnectionError);
  });
});
