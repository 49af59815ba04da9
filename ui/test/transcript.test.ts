// The transcript model without a browser: each event applied exactly once (a replay is
// ignored, a gap refused), deltas streamed into their item, results nested under their
// call, and what waits for the user.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UniversalEvent } from '../src/api.js';
import { GapError, Transcript, itemText } from '../src/session/transcript.js';

let sequence = 0;
function event(payload: Pick<UniversalEvent, 'type' | 'data'>): UniversalEvent {
  sequence += 1;
  return { ...payload, sequence, time: new Date(0).toISOString(), sessionId: 's', source: 'agent', synthetic: false } as UniversalEvent;
}

test('applies each event once, refuses a gap, and streams deltas into their item', () => {
  sequence = 0;
  const t = new Transcript();
  const events = [
    event({ type: 'turnStarted', data: { turnId: 'turn_1' } }),
    event({ type: 'itemStarted', data: { item: { itemId: 'i1', kind: 'message', status: 'inProgress', role: 'assistant', content: [] } } }),
    event({ type: 'itemDelta', data: { itemId: 'i1', delta: 'Hel' } }),
    event({ type: 'itemDelta', data: { itemId: 'i1', delta: 'lo' } }),
  ];
  for (const e of events) assert.equal(t.apply(e), true);
  assert.equal(itemText(t.items.get('i1')!), 'Hello');
  for (const e of events) assert.equal(t.apply(e), false, 'a replayed event changes nothing');
  assert.equal(itemText(t.items.get('i1')!), 'Hello');
  const skipped = event({ type: 'itemDelta', data: { itemId: 'i1', delta: '!' } });
  sequence += 1;
  assert.throws(() => t.apply(event({ type: 'itemDelta', data: { itemId: 'i1', delta: '?' } })), GapError);
  assert.equal(t.apply(skipped), true);
  sequence = t.lastSequence;
  assert.equal(t.currentTurn, 'turn_1');
  t.apply(event({ type: 'itemCompleted', data: { item: { itemId: 'i1', kind: 'message', status: 'completed', role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] } } }));
  assert.equal(itemText(t.items.get('i1')!), 'Hello!');
  t.apply(event({ type: 'turnEnded', data: { turnId: 'turn_1', stopReason: 'completed' } }));
  assert.equal(t.currentTurn, undefined);
  assert.equal(t.lastSequence, t.events.length);
});

test('nests results under their call and tracks what waits', () => {
  sequence = 0;
  const t = new Transcript();
  t.apply(event({ type: 'turnStarted', data: { turnId: 'turn_1' } }));
  t.apply(event({ type: 'itemStarted', data: { item: { itemId: 'call', kind: 'toolCall', status: 'inProgress', content: [{ type: 'toolCall', callId: 'c', name: 'ls', arguments: {} }] } } }));
  t.apply(event({ type: 'permissionAsked', data: { permissionId: 'perm_1', kind: 'command', title: 'Run ls' } }));
  t.apply(event({ type: 'questionAsked', data: { questionId: 'q_1', questions: [{ question: 'Why?', multiSelect: true, allowCustom: false }] } }));
  assert.deepEqual(t.pendingPermissions().map((p) => p.permissionId), ['perm_1']);
  assert.deepEqual(t.pendingQuestions().map((q) => q.questionId), ['q_1']);
  t.apply(event({ type: 'permissionResolved', data: { permissionId: 'perm_1', outcome: 'once', automatic: false } }));
  t.apply(event({ type: 'itemCompleted', data: { item: { itemId: 'result', kind: 'toolResult', status: 'completed', parentId: 'call', content: [{ type: 'toolResult', callId: 'c', output: 'a b', isError: false }] } } }));
  assert.deepEqual(t.pendingPermissions(), []);
  assert.deepEqual(t.items.get('call')!.children, ['result']);
  assert.ok(!t.entries.some((e) => e.kind === 'item' && e.itemId === 'result'), 'a result is shown inside its call');
  t.apply(event({ type: 'sessionEnded', data: { reason: 'ended' } as never }));
  assert.deepEqual(t.pendingQuestions(), [], 'nothing waits in an ended session');
});
