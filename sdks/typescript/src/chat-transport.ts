/**
 * `SandboxChatTransport`: the Vercel AI SDK's `ChatTransport` (the `ai` package, 7.x) on a
 * daemon session, so `useChat` / `Chat` drive an agent: the chat's id is the session's id,
 * a user message starts a turn, and the answer is the turn's UI message stream
 * (`uiMessageStream`). Only types come from `ai` (an optional peer dependency): nothing of
 * it is loaded at run time.
 *
 * @module
 */

import type { ChatTransport, UIMessage, UIMessageChunk } from 'ai';
import { linkSignals } from './abort.js';
import type { SandboxDaemon } from './client.js';
import { ConnectionError, ProblemError } from './errors.js';
import type { MessagePart } from './generated/openapi.js';
import type { RequestBody } from './types.js';
import type { UiMessageChunk } from './ui-stream.js';

/** How an approved tool call is allowed: this once, or for the rest of the session. */
export type ApprovalReply = 'once' | 'always';

/** Options of `new SandboxChatTransport(...)`. */
export interface SandboxChatTransportOptions {
  /** The client of the daemon whose sessions the chats are. */
  readonly client: SandboxDaemon;
  /**
   * Cancel the turn (`cancelTurn`) when `sendMessages`' `abortSignal` aborts (`Chat.stop()`,
   * `useChat`'s `stop`), not only stop reading it. Default `true`. A reconnected stream
   * (`reconnectToStream`) never cancels: the AI SDK also aborts one it replaces.
   */
  readonly cancelOnAbort?: boolean;
  /**
   * End the stream at a `tool-approval-request` that waits for the user (the AI SDK's
   * approval flow: `Chat` is then ready for `addToolApprovalResponse`, and with
   * `sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses` sends the
   * answer, which this transport forwards to the daemon). Default `true`. With `false` the
   * stream goes on through approvals: answer them with `client.replyPermission`.
   */
  readonly pauseOnApproval?: boolean;
  /** The reply an approved tool call is given (`replyPermission`). Default `'once'`. */
  readonly approveWith?: ApprovalReply;
  /**
   * Send a user message's id as its `Idempotency-Key`, so a message sent twice (a retry
   * after a dropped connection) starts one turn. Default `true`.
   */
  readonly idempotent?: boolean;
}

type SendOptions = Parameters<ChatTransport<UIMessage>['sendMessages']>[0];
type ReconnectOptions = Parameters<ChatTransport<UIMessage>['reconnectToStream']>[0];
type Part = UIMessage['parts'][number];

/** What a stream of a turn does on the way (see `#stream`). */
interface Plan {
  /** The assistant message the chat has of this turn, rebuilt from the replay. */
  readonly rebuild?: UIMessage | undefined;
  /** Cancel the turn when the signal aborts. */
  readonly cancelOnAbort: boolean;
}

/**
 * A `ChatTransport` of `useChat` / `Chat` over a sandbox-daemon: `chatId` is the session
 * id (create the session first, e.g. `client.createSession(id, { agent })`).
 *
 * - A new user message is sent with `sendMessage` (its text; its `file` parts that are
 *   images as `data:` URLs, as image parts), with its id as `Idempotency-Key`; the answer is
 *   its turn's UI message stream: text, reasoning, tool calls (dynamic tools the agent ran,
 *   `providerExecuted`), approvals, questions (`data-question` parts), `finish` or `abort`.
 * - A permission request arrives as `tool-approval-request` (`approvalId` = the permission
 *   id) and, by default, ends the stream; the approval responses of the last assistant
 *   message (`addToolApprovalResponse`) are sent with `replyPermission`, and the turn's
 *   stream is read again from its start: the message is rebuilt under its id.
 * - `reconnectToStream` reads the running turn again from its start (`null` when none
 *   runs): a dropped connection loses nothing (`resumeStreamIsReplay`).
 * - `regenerate` is refused: a session's turns cannot be taken back.
 */
export class SandboxChatTransport<UI_MESSAGE extends UIMessage = UIMessage> implements ChatTransport<UI_MESSAGE> {
  /** A reconnected stream replays the turn from its start, under the same message id. */
  readonly resumeStreamIsReplay = true;
  readonly #client: SandboxDaemon;
  readonly #cancelOnAbort: boolean;
  readonly #pause: boolean;
  readonly #approveWith: ApprovalReply;
  readonly #idempotent: boolean;

  constructor(options: SandboxChatTransportOptions) {
    this.#client = options.client;
    this.#cancelOnAbort = options.cancelOnAbort ?? true;
    this.#pause = options.pauseOnApproval ?? true;
    this.#approveWith = options.approveWith ?? 'once';
    this.#idempotent = options.idempotent ?? true;
  }

  /**
   * Sends the last message and answers the stream of its turn: a user message starts a
   * turn; an assistant message's approval responses are sent to the daemon and its turn
   * is streamed again from its start (rebuilding the message).
   */
  async sendMessages(options: SendOptions): Promise<ReadableStream<UIMessageChunk>> {
    const { chatId, messages, trigger, abortSignal } = options;
    if (trigger === 'regenerate-message') {
      throw new Error('a sandbox-daemon session cannot regenerate a message (its turns cannot be taken back): send a new one');
    }
    const last = messages[messages.length - 1];
    if (last === undefined) throw new TypeError('sendMessages needs a message to send');
    const headers = headersOf(options.headers);
    if (last.role === 'user') {
      const { turnId } = await this.#client.sendMessage(chatId, messageOf(last), {
        signal: abortSignal,
        ...(headers ? { headers } : {}),
        ...(this.#idempotent ? { idempotencyKey: last.id } : {}),
      });
      return this.#stream(chatId, turnId, abortSignal, headers, { cancelOnAbort: this.#cancelOnAbort });
    }
    for (const part of last.parts) {
      if (!isTool(part) || part.state !== 'approval-responded') continue;
      const reply = part.approval.approved ? this.#approveWith : 'reject';
      try {
        await this.#client.replyPermission(chatId, part.approval.id, { reply }, {
          signal: abortSignal,
          ...(headers ? { headers } : {}),
        });
      } catch (error) {
        // Answered already (by another client, or the turn ended): its resolution is in
        // the stream.
        if (!(error instanceof ProblemError && error.status === 409)) throw error;
      }
    }
    return this.#stream(chatId, turnOf(last), abortSignal, headers, {
      rebuild: last,
      cancelOnAbort: this.#cancelOnAbort,
    });
  }

  /** The running turn's stream from its start, or `null` when no turn runs. */
  async reconnectToStream(options: ReconnectOptions): Promise<ReadableStream<UIMessageChunk> | null> {
    const headers = headersOf(options.headers);
    const stream = await this.#client.uiMessageStream(
      options.chatId,
      {},
      { signal: options.abortSignal, ...(headers ? { headers } : {}) },
    );
    return stream && this.#shape(options.chatId, stream, options.abortSignal, headers, { cancelOnAbort: false });
  }

  /** Turn `turnId`'s stream (the running turn's when unknown), shaped by `plan`. */
  async #stream(
    chatId: string,
    turnId: string | undefined,
    signal: AbortSignal | undefined,
    headers: Record<string, string> | undefined,
    plan: Plan,
  ): Promise<ReadableStream<UIMessageChunk>> {
    const stream = await this.#client.uiMessageStream(chatId, turnId === undefined ? {} : { turnId }, {
      signal,
      ...(headers ? { headers } : {}),
    });
    if (stream === null) return new ReadableStream({ start: (controller) => controller.close() });
    return this.#shape(chatId, stream, signal, headers, plan);
  }

  /**
   * The daemon's chunks as the chat reads them: after `start`, a replay that rebuilds a
   * message the chat has clears it (`reset-step`, keeping its step boundary); the stream
   * ends after a `tool-approval-request` still waiting for the user (`pauseOnApproval`);
   * an abort of `signal` closes it and, with `cancelOnAbort`, cancels the turn.
   */
  #shape(
    chatId: string,
    source: ReadableStream<UiMessageChunk>,
    signal: AbortSignal | undefined,
    headers: Record<string, string> | undefined,
    plan: Plan,
  ): ReadableStream<UIMessageChunk> {
    const reader = source.getReader();
    const linked = linkSignals(signal);
    const keepStep = plan.rebuild?.parts.some((part) => part.type === 'step-start') ?? false;
    let started = false;
    let stepSkipped = false;
    let over = false;
    const end = (): void => {
      over = true;
      linked.dispose();
    };
    const onAbort = (): void => {
      if (over) return;
      end();
      reader.cancel(linked.signal.reason).catch(() => undefined);
      if (plan.cancelOnAbort) {
        this.#client.cancelTurn(chatId, headers ? { headers } : {}).catch(() => undefined);
      }
    };
    linked.signal.addEventListener('abort', onAbort, { once: true });
    return new ReadableStream<UIMessageChunk>({
      pull: async (controller) => {
        try {
          for (;;) {
            const next = await reader.read();
            if (next.done) {
              end();
              if (linked.signal.aborted) controller.error(linked.signal.reason);
              else controller.close();
              return;
            }
            const chunk = next.value;
            if (plan.rebuild && chunk.type === 'start-step' && keepStep && !stepSkipped) {
              stepSkipped = true;
              continue;
            }
            controller.enqueue(chunk as UIMessageChunk);
            if (plan.rebuild && chunk.type === 'start' && !started) {
              controller.enqueue({ type: 'reset-step' });
            }
            started = true;
            if (this.#pause && chunk.type === 'tool-approval-request' && (await this.#waits(chatId, chunk))) {
              end();
              await reader.cancel().catch(() => undefined);
              controller.close();
              return;
            }
            return;
          }
        } catch (error) {
          end();
          controller.error(linked.signal.aborted ? linked.signal.reason : disconnected(error));
        }
      },
      cancel: async (reason) => {
        end();
        await reader.cancel(reason).catch(() => undefined);
      },
    });
  }

  /**
   * Whether an approval request waits for the user: not automatic, and still pending in
   * the session (a replay also carries requests answered since).
   */
  async #waits(chatId: string, chunk: UiMessageChunk): Promise<boolean> {
    const id = chunk['approvalId'];
    if (typeof id !== 'string' || chunk['isAutomatic'] === true) return false;
    const session = await this.#client.getSession(chatId);
    return session.pendingPermissions.some((request) => request.permissionId === id);
  }
}

/**
 * A broken connection as `Chat` recognises one (a `TypeError` saying `network`, as
 * `fetch` fails): it then keeps the message for `resumeStream`, which replays the turn.
 */
function disconnected(error: unknown): unknown {
  if (!(error instanceof ConnectionError)) return error;
  return new TypeError(`network error: ${error.message}`, { cause: error });
}

/** A tool part (static or dynamic) of a UI message. */
type ToolPart = Extract<Part, { toolCallId: string }>;

function isTool(part: Part): part is ToolPart {
  return part.type === 'dynamic-tool' || part.type.startsWith('tool-');
}

/** The turn of an assistant message: its metadata's `turnId`, or its id's (`msg_<turnId>`). */
function turnOf(message: UIMessage): string | undefined {
  const metadata = message.metadata as { turnId?: unknown } | undefined;
  if (typeof metadata?.turnId === 'string') return metadata.turnId;
  return message.id.startsWith('msg_') ? message.id.slice('msg_'.length) : undefined;
}

/**
 * `sendMessage`'s body for a user message: its text parts, and its image `file` parts
 * given as base64 `data:` URLs (anything else cannot be sent to an agent: a `TypeError`).
 */
function messageOf(message: UIMessage): RequestBody<'sendMessage'> {
  const content: MessagePart[] = [];
  for (const part of message.parts) {
    if (part.type === 'text') {
      content.push({ type: 'text', text: part.text });
    } else if (part.type === 'file') {
      const match = /^data:(image\/[a-z+.-]+);base64,(.*)$/is.exec(part.url);
      if (!match?.[1] || match[2] === undefined) {
        throw new TypeError(`cannot send the file part ${JSON.stringify(part.filename ?? part.mediaType)}: only images as base64 data: URLs are`);
      }
      content.push({ type: 'image', mediaType: match[1].toLowerCase() as ImageType, data: match[2] });
    }
  }
  if (content.length === 0) throw new TypeError('the message has no text or image to send');
  const [first] = content;
  return content.length === 1 && first?.type === 'text' ? { message: first.text } : { content };
}

type ImageType = Extract<MessagePart, { type: 'image' }>['mediaType'];

/** The chat's request headers as a record. */
function headersOf(headers: Record<string, string> | Headers | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  if (!(headers instanceof Headers)) return headers;
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}
