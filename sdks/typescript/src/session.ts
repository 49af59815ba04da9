/**
 * A handle on one session, and turns: send a message and iterate that turn's events until
 * its `turnEnded`, answering permissions, questions and host tool calls from handlers on
 * the way.
 *
 * @module
 */

import type { ReconnectOptions } from './backoff.js';
import type {
  ArchiveFilesQuery,
  BundleInput,
  DeleteFileQuery,
  ExportSessionQuery,
  GetEventsQuery,
  HistoryOptions,
  IdempotentRequestOptions,
  ImportSessionQuery,
  ListFilesQuery,
  ProcessLogsQuery,
  ReadFileOptions,
  SandboxDaemon,
  SessionExport,
  UploadFilesQuery,
} from './client.js';
import { messageBody } from './content.js';
import { ProblemError, ProtocolError, SandboxDaemonError } from './errors.js';
import type { EventStream, EventStreamOptions } from './event-stream.js';
import type { ArchiveInput, FileContent, WorkspaceArchive } from './files.js';
import type { ProcessLogStream, ProcessLogStreamOptions } from './processes.js';
import type { Terminal, TerminalOptions } from './terminal.js';
import type {
  PermissionReply,
  PermissionRequest,
  QuestionRequest,
  ToolCallRejectRequest,
  ToolCallRequest,
  ToolCallResultRequest,
  ToolOutput,
  TurnEnded,
  UniversalEvent,
} from './generated/openapi.js';
import type { RequestOptions } from './transport.js';
import type { EventOf, MessageInput, QuestionAnswers, RequestBody, ResponseBody } from './types.js';

/**
 * What a tool handler answers for one host tool call: the tool's output (text, or parts:
 * text and images), `{ output, isError? }` (`isError`: the tool failed, the model sees the
 * output as an error), `{ reject: reason }` or `{ reject: true }` to reject the call, or
 * `undefined` to leave it unanswered (for another client, or `toolCallResult` later).
 */
export type ToolCallAnswer = ToolOutput | ToolCallResultRequest | { readonly reject: string | true } | undefined;

/** A handler of host tool calls (see `TurnHandlers.onToolCall`). */
export type ToolCallHandler = (
  call: ToolCallRequest,
  event: EventOf<'toolCallRequested'>,
) => ToolCallAnswer | Promise<ToolCallAnswer>;

/** Handlers that answer a turn's requests while its events are iterated. */
export interface TurnHandlers {
  /**
   * Called for each `permissionAsked` of the turn, before the event is yielded. Return
   * `once`, `always` or `reject` to answer it, or `undefined` to leave it unanswered. (If
   * another client answered first, the daemon's 409 is ignored: `permissionResolved` says
   * how it ended.)
   */
  readonly onPermission?: (
    request: PermissionRequest,
    event: EventOf<'permissionAsked'>,
  ) => PermissionReply | undefined | Promise<PermissionReply | undefined>;
  /**
   * Called for each `questionAsked` of the turn, before the event is yielded. Return one
   * array of option labels per question to answer, `'reject'` to decline, or `undefined`
   * to leave it unanswered.
   */
  readonly onQuestion?: (
    request: QuestionRequest,
    event: EventOf<'questionAsked'>,
  ) => QuestionAnswers | 'reject' | undefined | Promise<QuestionAnswers | 'reject' | undefined>;
  /**
   * Answers each `toolCallRequested` of the turn (a call of a client host tool), before the
   * event is yielded: one handler for every tool, or handlers by tool name (`{ lookup:
   * (call) => ... }`; a tool without one is left unanswered). See `ToolCallAnswer` for what
   * it returns. A handler that throws rejects the call with the error's message, and so
   * does an output the daemon refuses (422: an unusable image); the turn goes on. (If
   * another client answered first, the daemon's 409 is ignored: `toolCallResolved` says
   * how it ended.)
   */
  readonly onToolCall?: ToolCallHandler | Readonly<Record<string, ToolCallHandler>>;
}

/** Options of a turn. */
export interface TurnOptions extends TurnHandlers, RequestOptions {
  /** Include each event's native JSON as `raw`. */
  readonly includeRaw?: boolean;
  /** Reconnect policy of the turn's event stream. */
  readonly reconnect?: ReconnectOptions | false;
}

/** A finished turn. */
export interface TurnResult {
  /** The turn's id. */
  readonly turnId: string;
  /** The `turnEnded` payload: `stopReason`, `usage`. */
  readonly ended: TurnEnded;
  /** Every event of the turn, `turnStarted` to `turnEnded`. */
  readonly events: UniversalEvent[];
}

/**
 * One turn: sending its message happens when iteration starts. Yields the turn's events
 * from its `turnStarted` to its `turnEnded` (inclusive), then ends.
 */
export class Turn implements AsyncIterable<UniversalEvent> {
  readonly #session: Session;
  readonly #message: MessageInput;
  readonly #options: TurnOptions;
  #turnId: string | undefined;
  #ended: TurnEnded | undefined;
  #started = false;

  /** Prefer `session.turn(message, options)`. */
  constructor(session: Session, message: MessageInput, options: TurnOptions = {}) {
    this.#session = session;
    this.#message = message;
    this.#options = options;
  }

  /** The turn's id, once its message was accepted. */
  get turnId(): string | undefined {
    return this.#turnId;
  }

  /** The `turnEnded` payload, once the turn ended. */
  get ended(): TurnEnded | undefined {
    return this.#ended;
  }

  /** Sends the message and iterates the turn's events; a turn can be iterated once. */
  [Symbol.asyncIterator](): AsyncGenerator<UniversalEvent, void, undefined> {
    if (this.#started) throw new TypeError('a Turn can be iterated once');
    this.#started = true;
    return this.#run();
  }

  /** Runs the turn to its end and returns its events and `turnEnded` payload. */
  async done(): Promise<TurnResult> {
    const events: UniversalEvent[] = [];
    for await (const event of this) events.push(event);
    if (this.#turnId === undefined || this.#ended === undefined) {
      throw new ProtocolError('the turn finished without `turnEnded`');
    }
    return { turnId: this.#turnId, ended: this.#ended, events };
  }

  async *#run(): AsyncGenerator<UniversalEvent, void, undefined> {
    const session = this.#session;
    const request: RequestOptions = this.#options.signal ? { signal: this.#options.signal } : {};
    // Read from the log's current end, so the turn's first event cannot be missed.
    const { eventCount } = await session.info(request);
    const { turnId } = await session.send(this.#message, request);
    this.#turnId = turnId;
    const stream = session.events({
      ...request,
      offset: eventCount,
      ...(this.#options.includeRaw === undefined ? {} : { includeRaw: this.#options.includeRaw }),
      ...(this.#options.reconnect === undefined ? {} : { reconnect: this.#options.reconnect }),
    });
    let inTurn = false;
    for await (const event of stream) {
      if (!inTurn) {
        if (event.type === 'turnStarted' && event.data.turnId === turnId) inTurn = true;
        else if (event.type === 'sessionEnded') throw new SandboxDaemonError(`session ${session.id} ended before turn ${turnId} started`);
        else continue;
      }
      await this.#answer(event, request);
      yield event;
      if (event.type === 'turnEnded' && event.data.turnId === turnId) {
        this.#ended = event.data;
        return;
      }
      if (event.type === 'sessionEnded') {
        throw new ProtocolError(`session ${session.id} ended inside turn ${turnId} without its \`turnEnded\``);
      }
    }
    throw new ProtocolError(`the event stream of session ${session.id} ended inside turn ${turnId}`);
  }

  async #answer(event: UniversalEvent, request: RequestOptions): Promise<void> {
    const { onPermission, onQuestion, onToolCall } = this.#options;
    if (event.type === 'permissionAsked' && onPermission) {
      const reply = await onPermission(event.data, event);
      if (reply !== undefined) {
        await settled(this.#session.replyPermission(event.data.permissionId, reply, request), 'permission-resolved');
      }
    } else if (event.type === 'questionAsked' && onQuestion) {
      const answer = await onQuestion(event.data, event);
      if (answer === 'reject') {
        await settled(this.#session.rejectQuestion(event.data.questionId, request), 'question-resolved');
      } else if (answer !== undefined) {
        await settled(this.#session.replyQuestion(event.data.questionId, answer, request), 'question-resolved');
      }
    } else if (event.type === 'toolCallRequested' && onToolCall) {
      await this.#answerToolCall(event, onToolCall, request);
    }
  }

  async #answerToolCall(
    event: EventOf<'toolCallRequested'>,
    onToolCall: NonNullable<TurnHandlers['onToolCall']>,
    request: RequestOptions,
  ): Promise<void> {
    const call = event.data;
    const handler =
      typeof onToolCall === 'function'
        ? onToolCall
        : Object.hasOwn(onToolCall, call.tool)
          ? onToolCall[call.tool]
          : undefined;
    if (!handler) return;
    const session = this.#session;
    const reject = (reason: string | undefined) =>
      settled(
        session.toolCallReject(call.callId, reason === undefined ? {} : { reason: reason.slice(0, 4096) }, request),
        'tool-call-resolved',
      );
    let answer: ToolCallAnswer;
    try {
      answer = await handler(call, event);
    } catch (error) {
      await reject(errorMessage(error));
      return;
    }
    if (answer === undefined) return;
    if (typeof answer === 'object' && !Array.isArray(answer) && 'reject' in answer) {
      await reject(answer.reject === true ? undefined : answer.reject);
      return;
    }
    const body: ToolCallResultRequest =
      typeof answer === 'string' || Array.isArray(answer) ? { output: answer } : (answer as ToolCallResultRequest);
    try {
      await settled(session.toolCallResult(call.callId, body, request), 'tool-call-resolved');
    } catch (error) {
      if (!(error instanceof ProblemError && error.status === 422)) throw error;
      await reject(`the tool's output was refused: ${error.detail}`);
    }
  }
}

/** An error's message, or the thrown value as text. */
function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Waits for a reply; a request someone else already answered (409 `kind`) is not an error
 * for the turn: its resolution event follows in the stream.
 */
async function settled(reply: Promise<void>, kind: string): Promise<void> {
  try {
    await reply;
  } catch (error) {
    if (!(error instanceof ProblemError && error.kind === kind)) throw error;
  }
}

/** A handle on one session of a daemon. Methods map to the client's, with the id filled in. */
export class Session {
  /** The client this handle uses. */
  readonly client: SandboxDaemon;
  /** The session id. */
  readonly id: string;

  /** Prefer `client.session(id)`. */
  constructor(client: SandboxDaemon, id: string) {
    this.client = client;
    this.id = id;
  }

  /** Creates this session (`createSession`). */
  create(body: RequestBody<'createSession'>, options?: IdempotentRequestOptions): Promise<ResponseBody<'createSession'>> {
    return this.client.createSession(this.id, body, options);
  }

  /** The session's state (`getSession`). */
  info(options?: RequestOptions): Promise<ResponseBody<'getSession'>> {
    return this.client.getSession(this.id, options);
  }

  /**
   * Sends a message, starting a turn (`sendMessage`); see `turn` to follow it. The message
   * is text (sent as `message`) or parts (sent as `content`: `[textPart('…'),
   * imagePart(bytes)]`); an agent that takes no images refuses them with a 422
   * `policy-unsupported` naming the part. `options.idempotencyKey` makes a retry safe: the
   * same key answers the first `turnId` again instead of starting another turn.
   */
  send(message: MessageInput, options?: IdempotentRequestOptions): Promise<ResponseBody<'sendMessage'>> {
    return this.client.sendMessage(this.id, messageBody(message), options);
  }

  /** A turn: sends `message` (text or parts) when iterated, yields its events until `turnEnded`. */
  turn(message: MessageInput, options?: TurnOptions): Turn {
    return new Turn(this, message, options);
  }

  /** Runs a turn to its end (see `turn`). */
  run(message: MessageInput, options?: TurnOptions): Promise<TurnResult> {
    return this.turn(message, options).done();
  }

  /** The event log over SSE, resumable and lossless (`streamEvents`). */
  events(options?: EventStreamOptions): EventStream {
    return this.client.events(this.id, options);
  }

  /** One page of events (`getEvents`). */
  getEvents(query?: GetEventsQuery, options?: RequestOptions): Promise<ResponseBody<'getEvents'>> {
    return this.client.getEvents(this.id, query, options);
  }

  /** Every stored event after `offset`, page by page. */
  history(options?: HistoryOptions): AsyncGenerator<UniversalEvent, void, undefined> {
    return this.client.history(this.id, options);
  }

  /** Answers a permission request (`replyPermission`). */
  replyPermission(permissionId: string, reply: PermissionReply, options?: RequestOptions): Promise<void> {
    return this.client.replyPermission(this.id, permissionId, { reply }, options);
  }

  /** Answers a question request (`replyQuestion`). */
  replyQuestion(questionId: string, answers: QuestionAnswers, options?: RequestOptions): Promise<void> {
    return this.client.replyQuestion(this.id, questionId, { answers }, options);
  }

  /** Declines a question request (`rejectQuestion`). */
  rejectQuestion(questionId: string, options?: RequestOptions): Promise<void> {
    return this.client.rejectQuestion(this.id, questionId, options);
  }

  /** Answers a client host tool call (`toolCallResult`): `{ output, isError? }`. */
  toolCallResult(callId: string, body: ToolCallResultRequest, options?: RequestOptions): Promise<void> {
    return this.client.toolCallResult(this.id, callId, body, options);
  }

  /** Rejects a client host tool call (`toolCallReject`): `{ reason? }`. */
  toolCallReject(callId: string, body: ToolCallRejectRequest = {}, options?: RequestOptions): Promise<void> {
    return this.client.toolCallReject(this.id, callId, body, options);
  }

  /** The session as one bundle, `{ text, bundle }` (`exportSession`). */
  export(query?: ExportSessionQuery, options?: RequestOptions): Promise<SessionExport> {
    return this.client.exportSession(this.id, query, options);
  }

  /** Imports a bundle as this session (`importSession`): its text, bytes, or an export. */
  import(bundle: BundleInput, query?: ImportSessionQuery, options?: RequestOptions): Promise<ResponseBody<'importSession'>> {
    return this.client.importSession(this.id, bundle, query, options);
  }

  /** Continues the session on another agent (`handoverSession`): `{ agent, model?, agentMode? }`. */
  handover(body: RequestBody<'handoverSession'>, options?: RequestOptions): Promise<ResponseBody<'handoverSession'>> {
    return this.client.handoverSession(this.id, body, options);
  }

  /** The entries of a directory of the workspace, `depth` levels down (`listFiles`). */
  listFiles(query?: ListFilesQuery, options?: RequestOptions): Promise<ResponseBody<'listFiles'>> {
    return this.client.listFiles(this.id, query, options);
  }

  /** A file's bytes, or with `range` a part of them (`readFile`). */
  readFile(path: string, options?: ReadFileOptions): Promise<Uint8Array> {
    return this.client.readFile(this.id, path, options);
  }

  /** Writes a file atomically: text, bytes, a `Blob` or a stream (`writeFile`). */
  writeFile(path: string, content: FileContent, options?: RequestOptions): Promise<ResponseBody<'writeFile'>> {
    return this.client.writeFile(this.id, path, content, options);
  }

  /** Deletes a file, a symlink or a directory (`{ recursive: true }`: with its contents) (`deleteFile`). */
  deleteFile(path: string, query?: DeleteFileQuery, options?: RequestOptions): Promise<void> {
    return this.client.deleteFile(this.id, path, query, options);
  }

  /** Unpacks a tar or tar.gz archive into the workspace (`uploadFiles`). */
  uploadFiles(archive: ArchiveInput, query?: UploadFilesQuery, options?: RequestOptions): Promise<ResponseBody<'uploadFiles'>> {
    return this.client.uploadFiles(this.id, archive, query, options);
  }

  /** A tar.gz snapshot of the workspace with its counts and skipped paths (`archiveFiles`). */
  archiveFiles(query?: ArchiveFilesQuery, options?: RequestOptions): Promise<WorkspaceArchive> {
    return this.client.archiveFiles(this.id, query, options);
  }

  /** Runs a program in the workspace to its end: exit, stdout, stderr (`runProcess`). */
  runProcess(body: RequestBody<'runProcess'>, options?: RequestOptions): Promise<ResponseBody<'runProcess'>> {
    return this.client.runProcess(this.id, body, options);
  }

  /** Starts a long-running program in the workspace; answers at once (`startProcess`). */
  startProcess(body: RequestBody<'startProcess'>, options?: RequestOptions): Promise<ResponseBody<'startProcess'>> {
    return this.client.startProcess(this.id, body, options);
  }

  /** The session's long-running processes, running and exited (`listProcesses`). */
  listProcesses(options?: RequestOptions): Promise<ResponseBody<'listProcesses'>> {
    return this.client.listProcesses(this.id, options);
  }

  /** One process as it stands (`getProcess`). */
  getProcess(processId: string, options?: RequestOptions): Promise<ResponseBody<'getProcess'>> {
    return this.client.getProcess(this.id, processId, options);
  }

  /** Forgets an exited process and its log (`deleteProcess`; 409 while it runs). */
  deleteProcess(processId: string, options?: RequestOptions): Promise<void> {
    return this.client.deleteProcess(this.id, processId, options);
  }

  /** Sends SIGTERM to a process's group (`stopProcess`). */
  stopProcess(processId: string, options?: RequestOptions): Promise<ResponseBody<'stopProcess'>> {
    return this.client.stopProcess(this.id, processId, options);
  }

  /** Sends SIGKILL to a process's group (`killProcess`). */
  killProcess(processId: string, options?: RequestOptions): Promise<ResponseBody<'killProcess'>> {
    return this.client.killProcess(this.id, processId, options);
  }

  /** One page of a process's log after `offset` (`processLogs`). */
  processLogs(processId: string, query?: ProcessLogsQuery, options?: RequestOptions): Promise<ResponseBody<'processLogs'>> {
    return this.client.processLogs(this.id, processId, query, options);
  }

  /** A process's log from `offset`, then live until its `exit` frame; resumes by itself (`followProcessLogs`). */
  followProcessLogs(processId: string, options?: ProcessLogStreamOptions): ProcessLogStream {
    return this.client.followProcessLogs(this.id, processId, options);
  }

  /** Mints a ticket that opens a process's terminal once, within 30 s (`createTerminalTicket`). */
  createTerminalTicket(processId: string, options?: RequestOptions): Promise<ResponseBody<'createTerminalTicket'>> {
    return this.client.createTerminalTicket(this.id, processId, options);
  }

  /** The WebSocket URL of a process's terminal, with a ticket (`terminalUrl`). */
  terminalUrl(processId: string, ticket?: string): string {
    return this.client.terminalUrl(this.id, processId, ticket);
  }

  /** Opens a process's terminal: output, `write`, `resize`, `exit`, `close` (`openTerminal`). */
  openTerminal(processId: string, options?: TerminalOptions): Promise<Terminal> {
    return this.client.openTerminal(this.id, processId, options);
  }

  /** The files a turn added, modified and deleted, with diffs (`turnChanges`). */
  turnChanges(turnId: string, options?: RequestOptions): Promise<ResponseBody<'turnChanges'>> {
    return this.client.turnChanges(this.id, turnId, options);
  }

  /** Cancels the running turn (`cancelTurn`). */
  cancel(options?: RequestOptions): Promise<ResponseBody<'cancelTurn'>> {
    return this.client.cancelTurn(this.id, options);
  }

  /** Ends the session; its log stays readable (`endSession`). */
  end(options?: RequestOptions): Promise<ResponseBody<'endSession'>> {
    return this.client.endSession(this.id, options);
  }

  /** Removes the session and its events (`deleteSession`). */
  delete(options?: RequestOptions): Promise<void> {
    return this.client.deleteSession(this.id, options);
  }
}
