// Host tools with the mock agent, which calls them through the daemon's MCP endpoint on a
// message `hosttool <name>` (input `{ text: <the message> }`) and puts the answer in its
// tool-call item's `toolResult`: answered and rejected from `onToolCall` (one handler or
// handlers by name, a throwing handler), answered by hand, the routes' errors, and a
// create that refuses bad `hostTools`.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  ProblemError,
  type EventOf,
  type HostTool,
  type Session,
  type ToolCallRequest,
  type UniversalEvent,
} from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { startDaemon, uniqueId } from './helpers.js';

function ofType<T extends UniversalEvent['type']>(events: UniversalEvent[], type: T): Array<EventOf<T>> {
  return events.filter((e): e is EventOf<T> => e.type === type);
}

function clientTool(name: string): HostTool {
  return {
    name,
    description: `The host's ${name}`,
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    handler: { type: 'client' },
  };
}

/** The output of the turn's (last) tool call item, and whether it is an error. */
function toolOutput(events: UniversalEvent[]): { output: string; isError: boolean } {
  const item = ofType(events, 'itemCompleted')
    .map((e) => e.data.item)
    .filter((i) => i.kind === 'toolCall')
    .at(-1);
  assert.ok(item, 'a tool call item');
  for (const part of item.content ?? []) {
    if (part.type === 'toolResult') return { output: part.output, isError: part.isError };
  }
  assert.fail('the tool call item has no toolResult');
}

function outcomes(events: UniversalEvent[]): string[] {
  return ofType(events, 'toolCallResolved').map((e) => e.data.outcome);
}

async function expectProblem(promise: Promise<unknown>, status: number, kind: string): Promise<ProblemError> {
  const error = await promise.then(
    () => assert.fail(`expected a ${status} ${kind}`),
    (e: unknown) => e,
  );
  assert.ok(error instanceof ProblemError, String(error));
  assert.equal(error.status, status);
  assert.equal(error.kind, kind);
  return error;
}

describe('host tools', () => {
  let daemon: LocalSandboxDaemon;
  before(async () => {
    daemon = await startDaemon({ validate: true });
  });
  after(async () => {
    await daemon.close();
  });

  async function start(...tools: HostTool[]): Promise<Session> {
    return daemon.startSession(uniqueId('host'), { agent: 'mock', hostTools: tools });
  }

  it('answers a client tool from onToolCall: the agent gets the output', async () => {
    const session = await start(clientTool('lookup'));
    const calls: ToolCallRequest[] = [];
    const turn = await session.run('hosttool lookup please', {
      onToolCall: (call, event) => {
        assert.equal(event.type, 'toolCallRequested');
        calls.push(call);
        return `found: ${String(call.input.text)}`;
      },
    });
    assert.equal(turn.ended.stopReason, 'completed');
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.tool, 'lookup');
    assert.deepEqual(calls[0]?.input, { text: 'hosttool lookup please' });
    assert.deepEqual(toolOutput(turn.events), { output: 'found: hosttool lookup please', isError: false });
    assert.deepEqual(outcomes(turn.events), ['answered']);
    // The tool-call item is the one the request named.
    const item = ofType(turn.events, 'itemCompleted').find((e) => e.data.item.kind === 'toolCall');
    assert.equal(item?.data.item.itemId, calls[0]?.itemId);
    assert.deepEqual((await session.info()).pendingToolCalls ?? [], []);
  });

  it('answers by tool name, with { output, isError }', async () => {
    const session = await start(clientTool('lookup'), clientTool('other'));
    const turn = await session.run('hosttool lookup', {
      onToolCall: {
        other: () => assert.fail('not this tool'),
        lookup: () => ({ output: [{ type: 'text', text: 'no such thing' }], isError: true }),
      },
    });
    assert.deepEqual(toolOutput(turn.events), { output: 'no such thing', isError: true });
  });

  it('rejects from onToolCall, with a reason or a thrown error', async () => {
    const session = await start(clientTool('lookup'));
    const rejected = await session.run('hosttool lookup', { onToolCall: () => ({ reject: 'not today' }) });
    assert.deepEqual(outcomes(rejected.events), ['rejected']);
    const { output, isError } = toolOutput(rejected.events);
    assert.ok(isError && output.includes('not today'), output);

    const thrown = await session.run('hosttool lookup', {
      onToolCall: () => {
        throw new Error('the lookup service is down');
      },
    });
    assert.deepEqual(outcomes(thrown.events), ['rejected']);
    const failed = toolOutput(thrown.events);
    assert.ok(failed.isError && failed.output.includes('the lookup service is down'), failed.output);
  });

  it('answers by hand: toolCallResult once, then 409; unknown calls 404', async () => {
    const session = await start(clientTool('lookup'));
    let call: ToolCallRequest | undefined;
    const turn = await session.run('hosttool lookup', {
      // Leave it unanswered from the handler; answer it through the client instead.
      onToolCall: async (request) => {
        call = request;
        assert.deepEqual((await session.info()).pendingToolCalls, [request]);
        await daemon.toolCallResult(session.id, request.callId, { output: 'by hand' });
        return undefined;
      },
    });
    assert.ok(call);
    assert.deepEqual(toolOutput(turn.events), { output: 'by hand', isError: false });
    await expectProblem(
      daemon.toolCallResult(session.id, call.callId, { output: 'again' }),
      409,
      'tool-call-resolved',
    );
    await expectProblem(daemon.toolCallReject(session.id, call.callId, { reason: 'late' }), 409, 'tool-call-resolved');
    await expectProblem(session.toolCallReject('call_999'), 404, 'tool-call-not-found');
    await expectProblem(session.toolCallResult('call_999', { output: 'x' }), 404, 'tool-call-not-found');
  });

  it('rejects an output the daemon refuses (422) instead of leaving the call pending', async () => {
    const session = await start(clientTool('lookup'));
    const turn = await session.run('hosttool lookup', {
      onToolCall: () => [{ type: 'image', mediaType: 'image/png', data: 'bm90IGEgcG5n' }],
    });
    assert.deepEqual(outcomes(turn.events), ['rejected']);
    assert.ok(toolOutput(turn.events).isError);
  });

  it('refuses bad hostTools on create (422 naming the field)', async () => {
    const bad: Array<[unknown, string]> = [
      [[{ name: 'has space', handler: { type: 'client' } }], 'hostTools[0].name'],
      [[clientTool('twice'), clientTool('twice')], 'hostTools[1].name'],
      [[{ name: 't', inputSchema: { type: 'string' }, handler: { type: 'client' } }], 'inputSchema'],
      [[{ name: 't', handler: { type: 'carrier-pigeon' } }], 'handler'],
    ];
    for (const [hostTools, field] of bad) {
      const id = uniqueId('bad');
      const body = { agent: 'mock', hostTools } as Parameters<LocalSandboxDaemon['createSession']>[1];
      const error = await expectProblem(daemon.createSession(id, body), 422, 'invalid-body');
      assert.ok(error.detail?.includes(field), `${JSON.stringify(hostTools)}: ${error.detail}`);
    }
  });
});
