// SandboxChatTransport against the real daemon, read by the real `ai` package:
// readUIMessageStream, its own chunk schema, and AbstractChat (what useChat runs).

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  AbstractChat,
  isToolUIPart,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
  uiMessageChunkSchema,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';
import { SandboxDaemon, type UniversalEvent } from 'sandbox-daemon';
import { SandboxChatTransport } from 'sandbox-daemon/ai-sdk';
import type { LocalSandboxDaemon } from 'sandbox-daemon/local';
import { collect, startDaemon, uniqueId } from './helpers.js';

/** The last value of an async iterable. */
async function last<T>(iterable: AsyncIterable<T>): Promise<T> {
  let value: T | undefined;
  for await (const item of iterable) value = item;
  assert.ok(value !== undefined, 'nothing was read');
  return value;
}

/** Every chunk of a stream. */
async function chunksOf<T>(stream: ReadableStream<T>): Promise<T[]> {
  const reader = stream.getReader();
  const out: T[] = [];
  for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(next.value);
  return out;
}

/** The text of a message's text parts. */
function textOf(message: UIMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** A user message. */
function user(text: string): UIMessage {
  return { id: uniqueId('u'), role: 'user', parts: [{ type: 'text', text }] };
}

/** `stream`, each chunk checked against the `ai` package's chunk schema and kept in `seen`. */
function checked(stream: ReadableStream<UIMessageChunk>, seen: UIMessageChunk[]): ReadableStream<UIMessageChunk> {
  const schema = uiMessageChunkSchema();
  return stream.pipeThrough(
    new TransformStream<UIMessageChunk, UIMessageChunk>({
      async transform(chunk, controller) {
        const result = await schema.validate?.(chunk);
        assert.ok(result?.success, `not a UI message chunk: ${JSON.stringify(chunk)}`);
        seen.push(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
}

/** The message a fresh read of turn `turnId` builds. */
async function replayed(daemon: SandboxDaemon, chatId: string, turnId: string): Promise<UIMessage> {
  const stream = await daemon.uiMessageStream(chatId, { turnId });
  assert.ok(stream);
  return last(readUIMessageStream({ stream: stream as ReadableStream<UIMessageChunk>, terminateOnError: true }));
}

/** Waits until `condition` holds (10 s at most). */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The turn's `turnEnded`, once the session's log has it. */
async function turnEnded(daemon: SandboxDaemon, chatId: string): Promise<Extract<UniversalEvent, { type: 'turnEnded' }>> {
  let ended: UniversalEvent | undefined;
  await until(async () => {
    ended = (await collect(daemon.history(chatId))).reverse().find((e) => e.type === 'turnEnded');
    return ended !== undefined;
  }, 'the turn to end');
  return ended as Extract<UniversalEvent, { type: 'turnEnded' }>;
}

/** The completed assistant messages' text of the session's log. */
function loggedText(events: UniversalEvent[]): string {
  return events
    .flatMap((e) =>
      e.type === 'itemCompleted' && e.data.item.kind === 'message' && e.data.item.role === 'assistant'
        ? (e.data.item.content ?? []).map((p) => (p.type === 'text' ? p.text : ''))
        : [],
    )
    .join('');
}

/**
 * A client of `daemon` whose first UI message stream `drop()` cuts, as a network failure
 * would (its body errors with a `TypeError`).
 */
function flakyClient(daemon: LocalSandboxDaemon): { client: SandboxDaemon; drop: () => void } {
  let cutter: (() => void) | undefined;
  const client = new SandboxDaemon({
    baseUrl: daemon.baseUrl,
    token: daemon.token,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (!url.pathname.endsWith('/ui-stream') || !response.body || cutter) return response;
      const upstream = response.body.getReader();
      let cut = false;
      let body: ReadableStreamDefaultController<Uint8Array> | undefined;
      const cuttable = new ReadableStream<Uint8Array>({
        start(controller) {
          body = controller;
        },
        async pull(controller) {
          const next = await upstream.read().catch(() => ({ done: true as const, value: undefined }));
          if (cut) return;
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        cancel: () => upstream.cancel(),
      });
      cutter = () => {
        cut = true;
        body?.error(new TypeError('network error'));
        upstream.cancel().catch(() => undefined);
      };
      return new Response(cuttable, { status: response.status, headers: response.headers });
    },
  });
  return { client, drop: () => cutter?.() };
}

/** A chat state in plain arrays (what `useChat` keeps in React state). */
class ArrayState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's chat with a plain state: what `useChat` runs. */
class TestChat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    super({ ...init, state: new ArrayState() });
  }
}

describe('SandboxChatTransport', { timeout: 60_000 }, () => {
  let daemon: LocalSandboxDaemon;
  const workspaces: string[] = [];
  before(async () => {
    daemon = await startDaemon({ validate: true });
  });
  after(async () => {
    await daemon.close();
    await Promise.all(workspaces.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  /** A new mock session (the chat, working in a directory of its own) and a transport. */
  async function chat(options: Partial<ConstructorParameters<typeof SandboxChatTransport>[0]> = {}) {
    const chatId = uniqueId('chat');
    const cwd = await mkdtemp(join(tmpdir(), 'sandbox-chat-'));
    workspaces.push(cwd);
    await daemon.createSession(chatId, { agent: 'mock', cwd });
    return { chatId, transport: new SandboxChatTransport({ client: daemon, ...options }) };
  }

  it('streams a turn with tools, pauses at an approval, rebuilds the message after it, and ends with abort on a cancel', async () => {
    const { chatId, transport } = await chat();
    const question = user('tool permission slow 200');
    const firstChunks: UIMessageChunk[] = [];
    const first = await transport.sendMessages({
      chatId,
      messages: [question],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const asked = await last(readUIMessageStream({ stream: checked(first, firstChunks), terminateOnError: true }));
    const turnId = (asked.metadata as { turnId: string }).turnId;
    assert.equal(asked.id, `msg_${turnId}`);
    assert.equal(firstChunks.at(-1)?.type, 'tool-approval-request', 'the stream ends at the approval');
    const tools = asked.parts.filter(isToolUIPart);
    assert.deepEqual(
      tools.map((p) => [p.type === 'dynamic-tool' ? p.toolName : p.type, p.state]),
      [
        ['mock_search', 'output-available'],
        ['commandExecution', 'output-available'],
        ['fileChange', 'output-available'],
        ['commandExecution', 'approval-requested'],
      ],
    );
    const pending = (await daemon.getSession(chatId)).pendingPermissions;
    const waiting = tools[3];
    assert.ok(waiting && waiting.state === 'approval-requested');
    assert.equal(waiting.approval.id, pending[0]?.permissionId);
    assert.equal((waiting.input as { command: string }).command, 'echo permitted');

    // The user approves, as `addToolApprovalResponse` records it; the next request sends it.
    const answered: UIMessage = {
      ...asked,
      parts: asked.parts.map((part) =>
        isToolUIPart(part) && part.state === 'approval-requested'
          ? { ...part, state: 'approval-responded' as const, approval: { ...part.approval, approved: true as const } }
          : part,
      ),
    };
    const secondChunks: UIMessageChunk[] = [];
    const second = await transport.sendMessages({
      chatId,
      messages: [question, answered],
      trigger: 'submit-message',
      messageId: answered.id,
      abortSignal: undefined,
    });
    let cancelled = false;
    let final: UIMessage | undefined;
    for await (const message of readUIMessageStream({
      message: structuredClone(answered),
      stream: checked(second, secondChunks),
      terminateOnError: true,
    })) {
      final = message;
      if (!cancelled && textOf(message).includes('slow 3 ')) {
        cancelled = true;
        await daemon.cancelTurn(chatId);
      }
    }
    assert.ok(final && cancelled);
    assert.deepEqual(
      secondChunks.slice(0, 2).map((c) => c.type),
      ['start', 'reset-step'],
      'the replay clears what the chat had of the message',
    );
    assert.equal(secondChunks.at(-1)?.type, 'abort');
    assert.ok(!secondChunks.some((c) => c.type === 'finish'));
    assert.equal((final.metadata as { stopReason: string }).stopReason, 'cancelled');
    assert.ok(textOf(final).startsWith('slow 0 slow 1 slow 2 slow 3 '), textOf(final));
    const command = final.parts.filter(isToolUIPart)[3];
    assert.equal(command?.state, 'output-available');
    assert.deepEqual(command?.approval, { ...waiting.approval, approved: true, reason: 'once' });
    assert.equal(final.parts.filter((p) => p.type === 'step-start').length, 1, 'no part twice');
    assert.deepEqual(final, await replayed(daemon, chatId, turnId), 'the rebuilt message is the turn as read afresh');
    assert.equal((await turnEnded(daemon, chatId)).data.stopReason, 'cancelled');
  });

  it('aborting sendMessages closes the stream and cancels the turn (unless told not to)', async () => {
    const { chatId, transport } = await chat();
    const controller = new AbortController();
    const stream = await transport.sendMessages({
      chatId,
      messages: [user('slow 300')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: controller.signal,
    });
    const reader = stream.getReader();
    while ((await reader.read()).value?.type !== 'text-delta');
    controller.abort();
    await assert.rejects(reader.read(), (error: Error) => error.name === 'AbortError');
    assert.equal((await turnEnded(daemon, chatId)).data.stopReason, 'cancelled');

    const kept = await chat({ cancelOnAbort: false });
    const stop = new AbortController();
    const running = await kept.transport.sendMessages({
      chatId: kept.chatId,
      messages: [user('slow 300')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: stop.signal,
    });
    const runningReader = running.getReader();
    while ((await runningReader.read()).value?.type !== 'text-delta');
    stop.abort();
    await assert.rejects(runningReader.read());
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.ok((await daemon.getSession(kept.chatId)).currentTurnId, 'the turn goes on');
    const resumed = await kept.transport.reconnectToStream({ chatId: kept.chatId });
    assert.ok(resumed);
    await daemon.cancelTurn(kept.chatId);
    const chunks = await chunksOf(resumed);
    assert.equal(chunks.at(-1)?.type, 'abort');
  });

  it('resumes after a dropped connection: reconnectToStream rebuilds the whole message', async () => {
    const { client: flaky, drop } = flakyClient(daemon);
    const chatId = uniqueId('chat');
    await daemon.createSession(chatId, { agent: 'mock' });
    const transport = new SandboxChatTransport({ client: flaky });
    const stream = await transport.sendMessages({
      chatId,
      messages: [user('slow 100')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    let partial: UIMessage | undefined;
    await assert.rejects(async () => {
      for await (const message of readUIMessageStream({ stream, terminateOnError: true })) {
        partial = message;
        if (textOf(message).includes('slow 5 ')) drop();
      }
    }, /network error|broke off/);
    assert.ok(partial && !textOf(partial).includes('slow 99 '), 'cut mid-turn');

    const resumed = await transport.reconnectToStream({ chatId });
    assert.ok(resumed, 'the turn still runs');
    const whole = await last(readUIMessageStream({ stream: resumed, terminateOnError: true }));
    assert.equal(whole.id, partial.id, 'the same message');
    await turnEnded(daemon, chatId);
    assert.equal(textOf(whole), loggedText(await collect(daemon.history(chatId))));
    assert.ok(textOf(whole).includes('slow 99 '));
    assert.equal(await transport.reconnectToStream({ chatId }), null, 'nothing runs any more');
  });

  it("drives the AI SDK's Chat through an approval and a question", async () => {
    const { chatId, transport } = await chat();
    const errors: Error[] = [];
    const chatUi = new TestChat({
      id: chatId,
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onError: (error) => errors.push(error),
      onData: (part) => {
        const data = part.data as { questionId: string; status: string };
        if (part.type === 'data-question' && data.status === 'pending') {
          void daemon.replyQuestion(chatId, data.questionId, { answers: [['Red'], ['Cheese']] });
        }
      },
    });
    // Text first (`recall`), then two approvals (a file write, a command), then a question.
    await chatUi.sendMessage({ text: 'recall write permission question' });
    const approved: string[] = [];
    const answered = new Set<string>();
    const completed = (): boolean =>
      (chatUi.lastMessage?.metadata as { stopReason?: string } | undefined)?.stopReason === 'completed';
    const waiting = () =>
      chatUi.lastMessage?.parts
        .filter(isToolUIPart)
        .find((p) => p.state === 'approval-requested' && !answered.has(p.approval.id));
    for (;;) {
      await until(() => {
        assert.notEqual(chatUi.status, 'error', String(chatUi.error));
        return chatUi.status === 'ready' && (completed() || waiting() !== undefined);
      }, 'a pause at an approval, or the end');
      const part = waiting();
      if (completed() || part?.state !== 'approval-requested') break;
      answered.add(part.approval.id);
      approved.push(part.type === 'dynamic-tool' ? part.toolName : part.type);
      await chatUi.addToolApprovalResponse({ id: part.approval.id, approved: true });
    }
    assert.deepEqual(approved, ['fileChange', 'commandExecution']);
    assert.deepEqual(errors, []);
    assert.equal(chatUi.messages.length, 2);
    const message = chatUi.lastMessage as UIMessage;
    const question = message.parts.find((p) => p.type === 'data-question');
    assert.equal((question as { data: { status: string } } | undefined)?.data.status, 'answered');
    assert.ok(textOf(message).startsWith('recalled: '), textOf(message));
    assert.ok(textOf(message).includes('You answered: Color = Red; Toppings = Cheese'));
    assert.equal(message.parts.filter((p) => p.type === 'text').length, 3, 'no text part twice');
    const turnId = (message.metadata as { turnId: string }).turnId;
    assert.deepEqual(message, await replayed(daemon, chatId, turnId), 'the chat holds the turn as read afresh');
  });

  it("the AI SDK's Chat resumes after a dropped connection, rebuilding the message", async () => {
    const { client: flaky, drop } = flakyClient(daemon);
    const chatId = uniqueId('chat');
    await daemon.createSession(chatId, { agent: 'mock' });
    const finishes: Array<{ isDisconnect: boolean; isError: boolean }> = [];
    const chatUi = new TestChat({
      id: chatId,
      transport: new SandboxChatTransport({ client: flaky }),
      onFinish: ({ isDisconnect, isError }) => finishes.push({ isDisconnect, isError }),
    });
    const sending = chatUi.sendMessage({ text: 'recall slow 100' });
    await until(() => textOf(chatUi.lastMessage ?? user('')).includes('slow 5 '), 'some text');
    drop();
    await sending;
    assert.equal(chatUi.status, 'error');
    assert.deepEqual(finishes, [{ isDisconnect: true, isError: true }], 'a disconnect, as Chat tells one');
    await chatUi.resumeStream();
    assert.equal(chatUi.status, 'ready', String(chatUi.error));
    const message = chatUi.lastMessage as UIMessage;
    assert.equal(message.parts.filter((p) => p.type === 'text').length, 3, 'recalled, slow, echo: none twice');
    await turnEnded(daemon, chatId);
    assert.equal(textOf(message), loggedText(await collect(daemon.history(chatId))));
    const turnId = (message.metadata as { turnId: string }).turnId;
    assert.deepEqual(message, await replayed(daemon, chatId, turnId));
  });

  it('a user message sent twice (a retry) starts one turn: its id is the Idempotency-Key', async () => {
    const { chatId, transport } = await chat();
    const message = user('hello');
    const send = (trigger: 'submit-message' | 'regenerate-message') =>
      transport.sendMessages({ chatId, messages: [message], trigger, messageId: undefined, abortSignal: undefined });
    const first = await last(readUIMessageStream({ stream: await send('submit-message'), terminateOnError: true }));
    const again = await last(readUIMessageStream({ stream: await send('submit-message'), terminateOnError: true }));
    assert.deepEqual(again, first, 'the same turn, read again');
    assert.equal(textOf(first), 'echo: hello');
    const started = (await collect(daemon.history(chatId))).filter((e) => e.type === 'turnStarted');
    assert.equal(started.length, 1);
    await assert.rejects(send('regenerate-message'), /cannot regenerate/);
  });
});
