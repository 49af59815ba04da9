// The generated Standard Schema validators: they accept everything a real session
// produces, reject tampered data naming the field, and `validate: true` applies them.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  SandboxDaemon,
  UniversalEventSchema,
  ValidationError,
  responseSchemas,
  schemas,
  validators,
  type StandardSchemaV1,
  type UniversalEvent,
} from 'sandbox-daemon';
import { SandboxDaemon as InlineSandboxDaemon } from 'sandbox-daemon/inline';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, range, startDaemon, uniqueId } from './helpers.js';

/** Validates through the Standard Schema interface only. */
async function standardValidate(schema: StandardSchemaV1, value: unknown): Promise<Array<{ message: string; path: string }>> {
  const result = await schema['~standard'].validate(value);
  if (!result.issues) return [];
  return result.issues.map((issue) => ({
    message: issue.message,
    path: (issue.path ?? []).map((s) => String(typeof s === 'object' ? s.key : s)).join('.'),
  }));
}

/** A fetch that rewrites JSON bodies and SSE `data:` lines with `tamper`. */
function tamperingFetch(tamper: (value: Record<string, unknown>) => void): typeof globalThis.fetch {
  return async (input, init) => {
    const response = await globalThis.fetch(input, init);
    const type = response.headers.get('content-type') ?? '';
    const text = await response.text();
    const rewrite = (json: string): string => {
      const value = JSON.parse(json) as Record<string, unknown>;
      tamper(value);
      return JSON.stringify(value);
    };
    let body = text;
    if (type.startsWith('application/json')) body = rewrite(text);
    if (type.startsWith('text/event-stream')) {
      body = text.replace(/^data: (.*)$/gm, (_, json: string) => `data: ${rewrite(json)}`);
    }
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

describe('generated validators', () => {
  let daemon: LocalSandboxDaemon;
  let events: UniversalEvent[];
  before(async () => {
    daemon = await startDaemon();
    // One session that produces every kind of event the mock can: items of each kind, a
    // delta stream, a permission, a question, an unparsed item, a cancelled turn, an agent
    // crash (error, turn ended with error, session ended with error).
    const session = await daemon.startSession(uniqueId('all'), { agent: 'mock' });
    await session.run('use a tool, ask permission, then a question', {
      onPermission: () => 'once',
      onQuestion: () => [['Green'], ['Mushrooms']],
    });
    await session.run('unparsed');
    await session.run('question', { onQuestion: () => 'reject' });
    for await (const event of session.turn('slow')) {
      if (event.type === 'itemDelta') {
        await session.cancel().catch(() => undefined); // several deltas: cancel once
      }
    }
    await session.run('crash');
    events = await collect(session.events({ includeRaw: true }));
  });
  after(async () => {
    await daemon.close();
  });

  it('implement Standard Schema v1 (zod)', () => {
    assert.ok(Object.keys(schemas).length > 40);
    for (const [name, schema] of Object.entries(schemas)) {
      assert.equal(schema['~standard'].version, 1, name);
      assert.equal(schema['~standard'].vendor, 'zod', name);
      assert.equal(typeof schema['~standard'].validate, 'function', name);
    }
  });

  it('accept every event of a real session, raw included', async () => {
    const types = new Set(events.map((e) => e.type));
    for (const type of ['sessionStarted', 'turnStarted', 'itemStarted', 'itemDelta', 'itemCompleted', 'permissionAsked', 'permissionResolved', 'questionAsked', 'questionResolved', 'error', 'turnEnded', 'sessionEnded']) {
      assert.ok(types.has(type as UniversalEvent['type']), `the session produced ${type}`);
    }
    assert.ok(events.some((e) => e.type === 'turnEnded' && e.data.stopReason === 'cancelled'));
    assert.deepEqual(events.map((e) => e.sequence), range(1, events.length));
    for (const event of events) {
      assert.deepEqual(await standardValidate(UniversalEventSchema, event), [], `event ${event.sequence} (${event.type})`);
    }
  });

  it('accept the paged log and session list of that session', async () => {
    const id = events[0]?.sessionId ?? '';
    const page = await daemon.getEvents(id, { limit: 1000, includeRaw: true });
    assert.deepEqual(await standardValidate(responseSchemas.getEvents, page), []);
    assert.deepEqual(await standardValidate(responseSchemas.listSessions, await daemon.listSessions()), []);
    assert.deepEqual(await standardValidate(responseSchemas.getSession, await daemon.getSession(id)), []);
  });

  it('reject a tampered event, naming the field', async () => {
    const asked = events.find((e) => e.type === 'permissionAsked');
    assert.ok(asked);
    const tampered = structuredClone(asked) as Record<string, unknown> & { data: Record<string, unknown> };
    tampered.data.kind = 'teleport';
    tampered.sequence = -1;
    const issues = await standardValidate(UniversalEventSchema, tampered);
    assert.deepEqual(issues.map((i) => i.path).sort(), ['data.kind', 'sequence']);

    const wrongType = { ...asked, type: 'permissionGranted' };
    assert.deepEqual((await standardValidate(UniversalEventSchema, wrongType)).map((i) => i.path), ['type']);

    const missing = structuredClone(asked) as { data: Partial<Record<string, unknown>> };
    delete missing.data.permissionId;
    assert.deepEqual((await standardValidate(UniversalEventSchema, missing)).map((i) => i.path), ['data.permissionId']);
  });

  it('validate: true checks events and throws ValidationError with the path', async () => {
    const session = await daemon.startSession(uniqueId('tamper'), { agent: 'mock' });
    await session.end(); // the tampering fetch reads whole bodies: the stream must end
    const client = new SandboxDaemon({
      baseUrl: daemon.baseUrl,
      token: daemon.token,
      validate: true,
      fetch: tamperingFetch((value) => {
        const data = value.data as Record<string, unknown> | undefined;
        if (value.type === 'sessionStarted' && data) data.agent = 'robot';
      }),
    });
    assert.equal(client.validates, true);
    const error = await collect(client.events(session.id)).catch((e: unknown) => e);
    assert.ok(error instanceof ValidationError, String(error));
    assert.deepEqual(error.paths, ['data.agent']);
    assert.match(error.message, /event 1 of session .*: data\.agent: /);
    assert.equal(error.target, `event 1 of session ${session.id}`);
  });

  it('validate: true checks response bodies', async () => {
    const session = await daemon.startSession(uniqueId('tamper-body'), { agent: 'mock' });
    const client = new SandboxDaemon({
      baseUrl: daemon.baseUrl,
      token: daemon.token,
      validate: true,
      fetch: tamperingFetch((value) => {
        if ('pendingPermissions' in value) value.status = 'sleeping';
      }),
    });
    const error = await client.getSession(session.id).catch((e: unknown) => e);
    assert.ok(error instanceof ValidationError);
    assert.deepEqual(error.paths, ['status']);
    assert.equal(error.target, 'getSession response');
    // Without validation the same body goes through untouched.
    const lax = new SandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token, fetch: tamperingFetch((v) => void ('pendingPermissions' in v && (v.status = 'sleeping'))) });
    assert.equal((await lax.getSession(session.id)).status, 'sleeping');
  });

  it('the inline client has no validators of its own, but takes them', async () => {
    assert.throws(() => new InlineSandboxDaemon({ baseUrl: daemon.baseUrl, validate: true }), TypeError);
    const inline = new InlineSandboxDaemon({ baseUrl: daemon.baseUrl, token: daemon.token, validate: validators });
    assert.equal(inline.validates, true);
    assert.equal((await inline.health()).status, 'ok');
  });
});
