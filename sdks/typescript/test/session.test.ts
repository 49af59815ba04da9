// Whole sessions through `session.turn` / `session.run`: permissions answered once, always
// and reject, questions answered and rejected, all from handlers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ProblemError, type EventOf, type UniversalEvent } from 'sandbox-daemon';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, range, startDaemon, uniqueId } from './helpers.js';

function ofType<T extends UniversalEvent['type']>(events: UniversalEvent[], type: T): Array<EventOf<T>> {
  return events.filter((e): e is EventOf<T> => e.type === type);
}

describe('a full session', () => {
  let daemon: LocalSandboxDaemon;
  before(async () => {
    daemon = await startDaemon({ validate: true });
  });
  after(async () => {
    await daemon.close();
  });

  it('answers a permission once, then always (remembered), from onPermission', async () => {
    const session = await daemon.startSession(uniqueId('perm'), { agent: 'mock' });
    const asked: string[] = [];
    const onPermission = (request: { permissionId: string; title: string }, reply: 'once' | 'always') => {
      asked.push(request.title);
      return reply;
    };

    const once = await session.run('permission', { onPermission: (r) => onPermission(r, 'once') });
    assert.equal(once.ended.stopReason, 'completed');
    assert.equal(once.events[0]?.type, 'turnStarted');
    assert.equal(once.events.at(-1)?.type, 'turnEnded');
    const [resolvedOnce] = ofType(once.events, 'permissionResolved');
    assert.equal(resolvedOnce?.data.outcome, 'once');
    assert.equal(resolvedOnce?.data.automatic, false);
    const command = ofType(once.events, 'itemCompleted').find((e) => e.data.item.kind === 'commandExecution');
    assert.equal(command?.data.item.status, 'completed');

    const always = await session.run('permission', { onPermission: (r) => onPermission(r, 'always') });
    assert.equal(ofType(always.events, 'permissionResolved')[0]?.data.outcome, 'always');

    // `always` is remembered: the third request is approved by the daemon without asking.
    const third = await session.run('permission', {
      onPermission: () => assert.fail('an always-approved scope must not ask again'),
    });
    assert.equal(ofType(third.events, 'permissionAsked').length, 0);
    const [automatic] = ofType(third.events, 'permissionResolved');
    assert.equal(automatic?.data.automatic, true);
    assert.equal(automatic?.data.outcome, 'always');
    assert.equal(automatic?.data.request?.title, 'Run `echo permitted`');

    assert.deepEqual(asked, ['Run `echo permitted`', 'Run `echo permitted`']);
    assert.deepEqual(
      [once, always, third].map((t) => t.turnId),
      ['turn_1', 'turn_2', 'turn_3'],
    );
  });

  it('rejects a permission: the command fails', async () => {
    const session = await daemon.startSession(uniqueId('reject'), { agent: 'mock' });
    const turn = await session.run('permission', { onPermission: () => 'reject' });
    assert.equal(ofType(turn.events, 'permissionResolved')[0]?.data.outcome, 'reject');
    const command = ofType(turn.events, 'itemCompleted').find((e) => e.data.item.kind === 'commandExecution');
    assert.equal(command?.data.item.status, 'failed');
    assert.equal(turn.ended.stopReason, 'completed');
  });

  it('answers a question, and rejects another, from onQuestion', async () => {
    const session = await daemon.startSession(uniqueId('question'), { agent: 'mock' });
    const answered = await session.run('question', {
      onQuestion: (request) => {
        assert.deepEqual(
          request.questions.map((q) => [q.header, q.multiSelect]),
          [
            ['Color', false],
            ['Toppings', true],
          ],
        );
        return [['Red'], ['Cheese', 'Olives']];
      },
    });
    const [resolved] = ofType(answered.events, 'questionResolved');
    assert.equal(resolved?.data.outcome, 'answered');
    assert.deepEqual(resolved?.data.answers, [['Red'], ['Cheese', 'Olives']]);
    const text = ofType(answered.events, 'itemDelta').map((e) => e.data.delta).join('');
    assert.match(text, /You answered: Color = Red; Toppings = Cheese, Olives/);

    const rejected = await session.run('question', { onQuestion: () => 'reject' });
    assert.equal(ofType(rejected.events, 'questionResolved')[0]?.data.outcome, 'rejected');
    assert.doesNotMatch(ofType(rejected.events, 'itemDelta').map((e) => e.data.delta).join(''), /You answered/);
  });

  it('runs one turn with a tool, a permission and a question, iterated with for await', async () => {
    const session = await daemon.startSession(uniqueId('full'), { agent: 'mock' });
    const seen: string[] = [];
    const turn = session.turn('use a tool, ask permission, then a question', {
      onPermission: () => 'once',
      onQuestion: (q) => q.questions.map((question) => [question.options?.[0]?.label ?? '']),
    });
    for await (const event of turn) {
      switch (event.type) {
        case 'permissionAsked':
          seen.push(`permission ${event.data.kind}`);
          break;
        case 'questionAsked':
          seen.push(`question x${event.data.questions.length}`);
          break;
        case 'itemCompleted':
          seen.push(`item ${event.data.item.kind}`);
          break;
        default:
          break;
      }
    }
    assert.equal(turn.ended?.stopReason, 'completed');
    assert.ok(turn.turnId);
    assert.deepEqual(seen, [
      'item message',
      'item toolCall',
      'item toolResult',
      'item commandExecution',
      'item fileChange',
      'permission command',
      'item commandExecution',
      'item toolCall',
      'question x2',
      'item toolResult',
      'item message',
      'item message',
    ]);

    // The log holds the whole session, contiguous from 1, and ends after sessionEnded.
    await session.end();
    const log = await collect(session.events());
    assert.deepEqual(log.map((e) => e.sequence), range(1, log.length));
    assert.equal(log[0]?.type, 'sessionStarted');
    assert.equal(log.at(-1)?.type, 'sessionEnded');
  });

  it('leaves requests to the loop body when no handler is given', async () => {
    const session = await daemon.startSession(uniqueId('manual'), { agent: 'mock' });
    for await (const event of session.turn('permission')) {
      if (event.type === 'permissionAsked') await session.replyPermission(event.data.permissionId, 'once');
    }
    const info = await session.info();
    assert.equal(info.status, 'idle');
    assert.deepEqual(info.pendingPermissions, []);
  });

  it('lets another client answer first: the handler\'s late reply is not an error', async () => {
    const session = await daemon.startSession(uniqueId('race'), { agent: 'mock' });
    const turn = await session.run('permission', {
      onPermission: async (request) => {
        await daemon.replyPermission(session.id, request.permissionId, { reply: 'once' }); // someone else
        return 'reject' as const; // arrives second: 409 permission-resolved, ignored
      },
    });
    assert.equal(ofType(turn.events, 'permissionResolved')[0]?.data.outcome, 'once');
    assert.equal(turn.ended.stopReason, 'completed');
  });

  it('refuses a second message while a turn runs (409 turn-in-progress)', async () => {
    const session = await daemon.startSession(uniqueId('busy'), { agent: 'mock' });
    for await (const event of session.turn('permission')) {
      if (event.type === 'permissionAsked') {
        await assert.rejects(session.send('again'), (error: unknown) => {
          assert.ok(error instanceof ProblemError);
          assert.equal(error.status, 409);
          assert.equal(error.type, 'urn:sandbox-daemon:problem:turn-in-progress');
          assert.equal(error.kind, 'turn-in-progress');
          return true;
        });
        await session.replyPermission(event.data.permissionId, 'once');
      }
    }
  });
});
