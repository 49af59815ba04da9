/**
 * The typed client: one method per OpenAPI operation (same name as its operationId),
 * plus event streams, paging helpers and session handles. Runs on `fetch` alone.
 *
 * @module
 */

import type { ReconnectOptions } from './backoff.js';
import { EventStream, type EventStreamOptions } from './event-stream.js';
import {
  archiveOf,
  archiveType,
  rangeHeader,
  sliceRange,
  type ArchiveInput,
  type ByteRange,
  type FileContent,
  type WorkspaceArchive,
} from './files.js';
import type { SessionBundle, SessionInfo, UniversalEvent, WebhookDelivery } from './generated/openapi.js';
import { routes } from './generated/routes.js';
import { installFrames } from './install-stream.js';
import { ProcessLogStream, type ProcessLogStreamOptions } from './processes.js';
import { Session } from './session.js';
import { openTerminal, type Terminal, type TerminalOptions } from './terminal.js';
import { Transport, type Call, type RequestOptions, type Validators } from './transport.js';
import type { InstallFrame, OperationId, PathParams, QueryParams, RequestBody, ResponseBody } from './types.js';
import { openUiMessageStream, type UiMessageChunk } from './ui-stream.js';

/** Options of `new SandboxDaemon(...)`. */
export interface SandboxDaemonOptions {
  /** The daemon's base URL, e.g. `http://127.0.0.1:2468` (a path prefix is kept). */
  readonly baseUrl: string | URL;
  /** The bearer token (`SANDBOX_DAEMON_TOKEN` of the daemon); omit for a `--no-token` daemon. */
  readonly token?: string;
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof globalThis.fetch;
  /** Aborts every call and stream of this client. */
  readonly signal?: AbortSignal;
  /**
   * Check every response body and event against the schemas generated from the OpenAPI
   * document: `true` uses the generated zod validators (entry `sandbox-daemon`; the
   * `inline` entry has none and needs an explicit `Validators` object), `false` (default)
   * checks nothing. A mismatch throws `ValidationError` naming the field.
   */
  readonly validate?: boolean | Validators;
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Default reconnect policy of event streams. */
  readonly reconnect?: ReconnectOptions | false;
}

/** Options of `listSessions`. */
export type ListSessionsQuery = QueryParams<'listSessions'>;
/** Options of `getEvents`. */
export type GetEventsQuery = QueryParams<'getEvents'>;

/** Options of `exportSession`. */
export type ExportSessionQuery = QueryParams<'exportSession'>;
/** Options of `importSession`. */
export type ImportSessionQuery = QueryParams<'importSession'>;

/**
 * A session bundle as `exportSession` answers it: `text`, the document exactly as the
 * daemon wrote it (what `importSession` takes: its `eventsSha256` covers each event's
 * text, so a bundle parsed and serialised again may no longer match it), and `bundle`,
 * the same document parsed.
 */
export interface SessionExport {
  /** The bundle's JSON text, byte for byte as received: store and import this. */
  readonly text: string;
  /** The bundle parsed (for reading: `session`, `eventCount`, `events`, ...). */
  readonly bundle: SessionBundle;
}

/**
 * What `importSession` takes: the bundle's JSON text, its UTF-8 bytes, or what
 * `exportSession` answered (its `text` is sent).
 */
export type BundleInput = string | Uint8Array | Pick<SessionExport, 'text'>;

/** Options of `listFiles`: the directory (default: the working directory) and `depth`. */
export type ListFilesQuery = QueryParams<'listFiles'>;
/** Options of `deleteFile` besides its path: `recursive`. */
export type DeleteFileQuery = Omit<QueryParams<'deleteFile'>, 'path'>;
/** Options of `uploadFiles`: the directory to unpack into (default: the working directory). */
export type UploadFilesQuery = QueryParams<'uploadFiles'>;
/** Options of `archiveFiles`: `path`, `all`, `maxFileBytes`, `maxBytes`. */
export type ArchiveFilesQuery = QueryParams<'archiveFiles'>;

/** Options of `uiMessageStream`: `turnId`, the turn (default: the running one). */
export type UiMessageStreamQuery = QueryParams<'uiMessageStream'>;

/** Options of `processLogs` (one page): `offset`, the sequence to start after. */
export type ProcessLogsQuery = Omit<QueryParams<'processLogs'>, 'follow'>;

/** Options of `listWebhookDeliveries` (one page): `cursor` (a `nextCursor`) and `limit` (1–500). */
export type ListWebhookDeliveriesQuery = QueryParams<'listWebhookDeliveries'>;

/**
 * Options of `createSession` and `sendMessage`: those of every call, and an idempotency key.
 */
export interface IdempotentRequestOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key`: a request sent again with the same key (within 24 hours)
   * gets the first one's answer again, marked `Idempotent-Replayed: true`, instead of
   * creating the session or starting a turn twice (or a 409): retry with it after a timeout
   * or a dropped connection. One key names one request (path and body): the same key with
   * another rejects with `ProblemError` 422 `idempotency-key-reused`; a key that is not 1
   * to 255 printable ASCII characters (inner spaces allowed) with 400. A retry while the
   * first request still runs waits for its answer, up to 30 s (then 409
   * `idempotency-key-in-use`). This client never retries a request by itself.
   */
  readonly idempotencyKey?: string;
}

/** Options of `readFile`. */
export interface ReadFileOptions extends RequestOptions {
  /** Read only this part of the file (`Range`); default: all of it. */
  readonly range?: ByteRange;
}

/** Options of `history`: paging through a session's log. */
export interface HistoryOptions extends RequestOptions {
  /** Start after this sequence (default 0). */
  readonly offset?: number;
  /** Events per request (1–1000, default 1000). */
  readonly pageSize?: number;
  /** Include each event's native JSON as `raw`. */
  readonly includeRaw?: boolean;
}

type AgentParam<K extends OperationId> = PathParams<K> extends { agent: infer A } ? A : never;

/**
 * A client of one sandbox-daemon. Every OpenAPI operation is a method of the same name;
 * a non-2xx answer rejects with `ProblemError`.
 *
 * ```ts
 * const daemon = new SandboxDaemon({ baseUrl: 'http://127.0.0.1:2468', token });
 * const session = await daemon.startSession('demo', { agent: 'mock' });
 * for await (const event of session.turn('use a tool')) console.log(event.type);
 * ```
 */
export class SandboxDaemon {
  /** Validators `validate: true` uses; the main entry's subclass provides the generated ones. */
  protected static readonly defaultValidators: Validators | undefined = undefined;

  /** The transport shared by this client's calls. */
  protected readonly transport: Transport;
  readonly #reconnect: ReconnectOptions | false | undefined;

  /** A client of the daemon at `options.baseUrl`; no request is made until a method is called. */
  constructor(options: SandboxDaemonOptions) {
    let validators: Validators | undefined;
    if (options.validate === true) {
      validators = (new.target as typeof SandboxDaemon).defaultValidators;
      if (!validators) {
        throw new TypeError(
          '`validate: true` needs the generated validators: import SandboxDaemon from "sandbox-daemon" ' +
            '(the inline entry has none), or pass a Validators object',
        );
      }
    } else if (options.validate) {
      validators = options.validate;
    }
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      token: options.token,
      fetch: options.fetch,
      signal: options.signal,
      headers: options.headers,
      validators,
    });
    this.#reconnect = options.reconnect;
  }

  /** The daemon's base URL (ending with `/`). */
  get baseUrl(): string {
    return this.transport.baseUrl.href;
  }

  /** Whether responses and events are validated. */
  get validates(): boolean {
    return this.transport.validators !== undefined;
  }

  // ---- daemon -------------------------------------------------------------------------

  /** `GET /health`: liveness and whether the store can write (needs no token). */
  health(options?: RequestOptions): Promise<ResponseBody<'health'>> {
    return this.#json('health', {}, options);
  }

  /** `GET /openapi.json`: the OpenAPI document as this daemon runs. */
  openapi(options?: RequestOptions): Promise<ResponseBody<'openapi'>> {
    return this.#json('openapi', {}, options);
  }

  // ---- agents -------------------------------------------------------------------------

  /** `GET /agents`: every known agent with install status and capabilities. */
  listAgents(options?: RequestOptions): Promise<ResponseBody<'listAgents'>> {
    return this.#json('listAgents', {}, options);
  }

  /**
   * `POST /agents/{agent}/install`: installs an agent and answers the JSON summary (a 502
   * `ProblemError` whose `agentError.type` is `installFailed` when the install fails). The
   * body is optional: `{ version }` (`pinned`, `latest` or a version such as `1.2.3`;
   * default: the daemon's default version) and `{ reinstall: true }` (download again even if
   * that version is here). The request says `Accept: application/json`; see
   * `installAgentProgress` for the same install with progress.
   */
  installAgent(
    agent: AgentParam<'installAgent'>,
    body: RequestBody<'installAgent'> = {},
    options?: RequestOptions,
  ): Promise<ResponseBody<'installAgent'>> {
    return this.#json('installAgent', { params: { agent }, body, accept: 'application/json' }, options);
  }

  /**
   * `POST /agents/{agent}/install` with `Accept: text/event-stream`: the same install as
   * `installAgent`, as an async iterable of frames: `{ event: 'progress', data }` (an
   * `InstallProgress`, tagged by `phase`: `waiting`, `resolving`, `downloading`,
   * `verifying`), then `{ event: 'installed', data }` (the `InstallResponse`), after which
   * it ends. A failed install throws `ProblemError` with the problem of the stream's `error`
   * frame (e.g. status 502, `agentError.type` `installFailed`); a request the daemon refuses
   * (unknown agent, bad version) throws it before any frame.
   *
   * The request is sent when the iteration starts. The stream is not resumable: if it
   * breaks off (or ends before its outcome) it throws `ConnectionError`, while the install
   * may still be running on the daemon (`installAgent` waits for it and answers its
   * outcome). Aborting `options.signal` (or breaking out of the loop) stops reading, not the
   * install. With `validate`, each frame is checked against the spec.
   */
  installAgentProgress(
    agent: AgentParam<'installAgent'>,
    body: RequestBody<'installAgent'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<InstallFrame, void, undefined> {
    return installFrames(this.transport, agent, body, options);
  }

  /** `GET /agents/{agent}/models`: the models (and variants) an agent offers. */
  agentModels(agent: AgentParam<'agentModels'>, options?: RequestOptions): Promise<ResponseBody<'agentModels'>> {
    return this.#json('agentModels', { params: { agent } }, options);
  }

  /** `GET /agents/{agent}/modes`: agent modes and permission modes. */
  agentModes(agent: AgentParam<'agentModes'>, options?: RequestOptions): Promise<ResponseBody<'agentModes'>> {
    return this.#json('agentModes', { params: { agent } }, options);
  }

  // ---- stored logins ------------------------------------------------------------------

  /**
   * `GET /credentials`: every login the daemon keeps, one per agent: its agent, the file a
   * session's private home gets, its entries (`name`, `kind`: `oauth`, `apiKey`, `token` or
   * `other`, `expiresAt`), `source`, `storedAt`, `refreshedAt`. Never a secret.
   */
  listCredentials(options?: RequestOptions): Promise<ResponseBody<'listCredentials'>> {
    return this.#json('listCredentials', {}, options);
  }

  /**
   * `GET /credentials/{agent}`: the login stored for an agent (never its secret). None
   * stored rejects with `ProblemError` 404 `credential-not-found`, an unknown agent 404
   * `unknown-agent`.
   */
  getCredential(agent: AgentParam<'getCredential'>, options?: RequestOptions): Promise<ResponseBody<'getCredential'>> {
    return this.#json('getCredential', { params: { agent } }, options);
  }

  /**
   * `PUT /credentials/{agent}`: stores a login for an agent, replacing the one stored (the
   * daemon answers 201 when there was none, 200 when it replaced one; both with the stored
   * login's description, never its secret). The body is exactly one of `{ login }`, the
   * agent's login file as it wrote it (Claude's `.credentials.json`, Codex's `auth.json`,
   * OpenCode's `auth.json`, Amp's `secrets.json`, Pi's `auth.json`), and `{ token }` (Claude:
   * a long-lived `claude setup-token` token); `source` says where it came from, for the
   * listing. Sessions of the agent with no `token` of their own, on a daemon whose
   * environment has no credential for it, get it in their private home. A login that is not
   * one of that agent rejects with `ProblemError` 422 `invalid-credential` (its `detail` says
   * why), both or neither of `login` and `token` 422 `invalid-body`.
   */
  putCredential(
    agent: AgentParam<'putCredential'>,
    body: RequestBody<'putCredential'>,
    options?: RequestOptions,
  ): Promise<ResponseBody<'putCredential'>> {
    return this.#json('putCredential', { params: { agent }, body }, options);
  }

  /**
   * `DELETE /credentials/{agent}`: removes the login stored for an agent (sessions running on
   * it keep their copy until their agent stops). None stored rejects with `ProblemError` 404
   * `credential-not-found`.
   */
  deleteCredential(agent: AgentParam<'deleteCredential'>, options?: RequestOptions): Promise<ResponseBody<'deleteCredential'>> {
    return this.#json('deleteCredential', { params: { agent } }, options);
  }

  // ---- sessions -----------------------------------------------------------------------

  /** `GET /sessions`: one page of sessions, oldest first (`nextCursor` for the next). */
  listSessions(query?: ListSessionsQuery, options?: RequestOptions): Promise<ResponseBody<'listSessions'>> {
    return this.#json('listSessions', { query: { ...query } }, options);
  }

  /**
   * `POST /sessions/{sessionId}`: creates a session with a client-chosen id and starts its agent.
   *
   * Besides the agent and its settings, the body carries the session's policy:
   * `systemPrompt` (`systemPromptMode` `append`, the default, or `replace`), `tools`
   * (`{ allow?, deny? }` in universal names: `read`, `write`, `edit`, `shell`, `glob`,
   * `grep`, `webFetch`, `webSearch`, `mcp:<server>/<tool>`, `mcp:<server>/*`), `maxTurns`,
   * `mcpServers` (by name: `{ type: 'stdio', command, args?, env? }` or `{ type: 'http',
   * url, headers? }`), `env`, and `hostTools` (the host's own tools, served to the agent
   * by the daemon: `{ name, description, inputSchema, handler: { type: 'client' } }`,
   * answered through `toolCallResult` / `toolCallReject` or a turn's `onToolCall`, or
   * `handler: { type: 'http', url }`, called by the daemon). What an agent honours is in its `policy` and `capabilities`
   * (`listAgents`); a field it cannot honour throws `ProblemError` 422
   * `policy-unsupported` naming it, bad input 422 `invalid-body` naming it.
   *
   * `webhook` (`{ url, events, secret }`) is the session's own webhook: the daemon `POST`s
   * this session's events of those types there, signed with `secret` (see
   * `createWebhook`); it goes with the session. `options.idempotencyKey` makes a retry
   * safe (see `IdempotentRequestOptions`).
   */
  createSession(
    sessionId: string,
    body: RequestBody<'createSession'>,
    options?: IdempotentRequestOptions,
  ): Promise<ResponseBody<'createSession'>> {
    return this.#json('createSession', { params: { sessionId }, body }, withIdempotencyKey(options));
  }

  /** `GET /sessions/{sessionId}`: status, pending permissions and questions, event count. */
  getSession(sessionId: string, options?: RequestOptions): Promise<ResponseBody<'getSession'>> {
    return this.#json('getSession', { params: { sessionId } }, options);
  }

  /** `DELETE /sessions/{sessionId}`: removes the session and its events (ending it first). */
  deleteSession(sessionId: string, options?: RequestOptions): Promise<ResponseBody<'deleteSession'>> {
    return this.#json('deleteSession', { params: { sessionId } }, options);
  }

  /**
   * `POST /sessions/{sessionId}/messages`: sends a message, starting a turn (409 while one runs):
   * `{ message }` (text) or `{ content }` (parts: text and images; see `imagePart`,
   * `messageBody`). `options.idempotencyKey` makes a retry safe: sent again with the same
   * key, it answers the first `turnId` instead of starting another turn (see
   * `IdempotentRequestOptions`).
   */
  sendMessage(
    sessionId: string,
    body: RequestBody<'sendMessage'>,
    options?: IdempotentRequestOptions,
  ): Promise<ResponseBody<'sendMessage'>> {
    return this.#json('sendMessage', { params: { sessionId }, body }, withIdempotencyKey(options));
  }

  /** `POST /sessions/{sessionId}/cancel`: interrupts the running turn (it ends `cancelled`). */
  cancelTurn(sessionId: string, options?: RequestOptions): Promise<ResponseBody<'cancelTurn'>> {
    return this.#json('cancelTurn', { params: { sessionId }, body: {} }, options);
  }

  /** `POST /sessions/{sessionId}/end`: stops the agent; the log stays readable (idempotent). */
  endSession(sessionId: string, options?: RequestOptions): Promise<ResponseBody<'endSession'>> {
    return this.#json('endSession', { params: { sessionId }, body: {} }, options);
  }

  // ---- portable sessions --------------------------------------------------------------

  /**
   * `GET /sessions/{sessionId}/export`: the session as one JSON document (its record
   * without credentials, the agent's native state, the event log with its count and
   * SHA-256), as `{ text, bundle }`: keep `text` as it is to import it later (see
   * `SessionExport`). `includeRaw` adds each event's native `raw` payload. Refused while a
   * turn runs (`ProblemError` 409 `turn-in-progress`).
   */
  exportSession(sessionId: string, query?: ExportSessionQuery, options?: RequestOptions): Promise<SessionExport> {
    return this.transport
      .jsonText<SessionBundle>(this.#call('exportSession', { params: { sessionId }, query: { ...query } }, options))
      .then(({ text, value }) => ({ text, bundle: value }));
  }

  /**
   * `POST /sessions/{sessionId}/import`: stores a bundle written by `exportSession` (on this
   * or another daemon) as session `sessionId`, sent byte for byte as given; `cwd` (absolute,
   * existing) replaces the bundle's working directory. Answers the imported session (its
   * log keeps its sequences; the next message resumes the agent with its memory). A bundle
   * that cannot be imported (a newer `format`, events or a native file that do not match
   * their checksum) rejects with `ProblemError` 422 `invalid-bundle`, a taken id 409
   * `session-exists`, a bad `cwd` 400 `invalid-session-config`, a bundle over 1 GiB 413.
   */
  async importSession(
    sessionId: string,
    bundle: BundleInput,
    query?: ImportSessionQuery,
    options?: RequestOptions,
  ): Promise<ResponseBody<'importSession'>> {
    return await this.#json('importSession', { params: { sessionId }, query: { ...query }, rawBody: bundleBody(bundle) }, options);
  }

  /**
   * `POST /sessions/{sessionId}/handover`: continues the session on `agent` (another agent,
   * or the same one afresh) with `model` and `agentMode` (default: the agent's defaults);
   * the earlier turns become the new agent's own history, and the log records
   * `sessionHandedOver`. Answers the session as it stands now. Refused while a turn runs
   * (409 `turn-in-progress`), once ended (409 `session-ended`); an unknown agent is a 404, a
   * mode or model the agent does not offer a 400 `invalid-session-config`.
   */
  handoverSession(
    sessionId: string,
    body: RequestBody<'handoverSession'>,
    options?: RequestOptions,
  ): Promise<ResponseBody<'handoverSession'>> {
    return this.#json('handoverSession', { params: { sessionId }, body }, options);
  }

  // ---- what a turn changed ------------------------------------------------------------

  /**
   * `GET /sessions/{sessionId}/turns/{turnId}/changes`: the files a turn added, modified and
   * deleted in the workspace, whichever agent made the changes: `counts` (the ones its
   * `turnEnded` carries as `changes`) and `files`, each with its `path`, `change` (`add`,
   * `update`, `delete`), sizes, and a unified `diff` of text or why there is none
   * (`diffOmitted`: `binary`, `tooLarge`, `turnLimit`, `modeOnly`, `unreadable`). `.git`,
   * `node_modules` and `.gitignore`d paths are left out. A turn whose changes are not known
   * (no such turn, a daemon that does not track them) rejects with `ProblemError` 404
   * `changes-not-found`, a turn still running with 409 `turn-in-progress`.
   */
  turnChanges(sessionId: string, turnId: string, options?: RequestOptions): Promise<ResponseBody<'turnChanges'>> {
    return this.#json('turnChanges', { params: { sessionId, turnId } }, options);
  }

  // ---- workspace files ----------------------------------------------------------------
  //
  // Paths are relative to the session's working directory; one that is absolute or names
  // `..` rejects with `ProblemError` 400 `invalid-path`, one that leads outside through a
  // symlink 403 `outside-workspace`.

  /**
   * `GET /sessions/{sessionId}/files`: the entries of a directory of the workspace (`path`,
   * default the working directory), `depth` levels down (1–32, default 1), each directory
   * followed by its own entries in name order; symlinks are listed, not followed. Each
   * entry has `path`, `name`, `kind` (`file`, `directory`, `symlink`, `other`), `size`,
   * `mode`, `modifiedAt` and a symlink's `target`; `truncated` says when the listing
   * reached its limit (10,000 entries). Nothing there rejects with `ProblemError` 404
   * `file-not-found`, a file 409 `wrong-file-kind`.
   */
  listFiles(sessionId: string, query?: ListFilesQuery, options?: RequestOptions): Promise<ResponseBody<'listFiles'>> {
    return this.#json('listFiles', { params: { sessionId }, query: { ...query } }, options);
  }

  /**
   * `GET /sessions/{sessionId}/files/content`: a file's bytes, or with `range` only that
   * part (`Range: bytes=…`; see `ByteRange`). No such file rejects with `ProblemError` 404
   * `file-not-found`, a directory 409 `wrong-file-kind` (the working directory itself 409
   * `workspace-root`), a range that starts at or past the end 416 `range-not-satisfiable`.
   */
  async readFile(sessionId: string, path: string, options: ReadFileOptions = {}): Promise<Uint8Array> {
    const { range, ...request } = options;
    const headers = range ? { range: rangeHeader(range), ...request.headers } : request.headers;
    const { status, bytes } = await this.transport.bytes(
      this.#call('readFile', { params: { sessionId }, query: { path }, accept: '*/*' }, { ...request, headers }),
    );
    // A server may answer a range with the whole file (200): the part asked for is cut here.
    return range && status === 200 ? sliceRange(bytes, range) : bytes;
  }

  /**
   * `PUT /sessions/{sessionId}/files/content`: writes a file, atomically (a reader sees the
   * old content or the new, never a part), creating missing parent directories. The
   * content is text (written as UTF-8), bytes, a `Blob` or a stream, sent as
   * `application/octet-stream`. Answers the file's entry (the daemon answers 201 when it
   * created the file, 200 when it replaced one, which keeps its permission bits). A
   * directory there (or a file where a parent directory should be) rejects with
   * `ProblemError` 409 `wrong-file-kind` (the working directory itself 409
   * `workspace-root`), content over the daemon's `--max-upload-bytes` 413, a full disk 507
   * `workspace-full`.
   */
  writeFile(
    sessionId: string,
    path: string,
    content: FileContent,
    options?: RequestOptions,
  ): Promise<ResponseBody<'writeFile'>> {
    return this.#json(
      'writeFile',
      { params: { sessionId }, query: { path }, rawBody: content, contentType: 'application/octet-stream' },
      options,
    );
  }

  /**
   * `DELETE /sessions/{sessionId}/files`: deletes a file, a symlink (never what it points
   * to) or a directory: an empty one, or with `recursive: true` everything in it. Nothing
   * there rejects with `ProblemError` 404 `file-not-found`, a directory that is not empty
   * (without `recursive`) 409 `directory-not-empty`, the working directory itself (`.`)
   * 409 `workspace-root`: it is never deleted.
   */
  deleteFile(
    sessionId: string,
    path: string,
    query?: DeleteFileQuery,
    options?: RequestOptions,
  ): Promise<ResponseBody<'deleteFile'>> {
    return this.#json('deleteFile', { params: { sessionId }, query: { ...query, path } }, options);
  }

  /**
   * `POST /sessions/{sessionId}/files/upload`: unpacks a tar or tar.gz archive into a
   * directory of the workspace (`path`, created if missing; default the working
   * directory), sent as `application/gzip` when it starts as gzip does, else as
   * `application/x-tar` (a stream as `application/octet-stream`). Answers what it wrote:
   * `files`, `directories`, `symlinks`, `bytes`. Every entry is checked before anything is
   * written: an archive with an entry that is absolute, names `..`, is a device, FIFO or
   * hard link, or a symlink pointing outside the workspace rejects with `ProblemError` 422
   * `archive-entry-refused`, bytes that are no archive 422 `invalid-archive`, an archive
   * over the daemon's limits 413.
   */
  async uploadFiles(
    sessionId: string,
    archive: ArchiveInput,
    query?: UploadFilesQuery,
    options?: RequestOptions,
  ): Promise<ResponseBody<'uploadFiles'>> {
    const contentType = await archiveType(archive);
    return await this.#json('uploadFiles', { params: { sessionId }, query: { ...query }, rawBody: archive, contentType }, options);
  }

  /**
   * `GET /sessions/{sessionId}/files/archive`: a tar.gz snapshot of the workspace (or of
   * the directory `path`), entries named relative to it, with what its headers say
   * (`WorkspaceArchive`: `data`, `files`, `bytes`, `skipped`, `skippedPaths`). Leaves out
   * `.git`, `node_modules` and what `.gitignore` leaves out unless `all: true`, and files
   * over `maxFileBytes` (named in `skippedPaths`); symlinks are stored as links. Files
   * that add up to more than `maxBytes` reject with `ProblemError` 409
   * `archive-too-large`, a path that is a file 409 `wrong-file-kind`.
   */
  async archiveFiles(sessionId: string, query?: ArchiveFilesQuery, options?: RequestOptions): Promise<WorkspaceArchive> {
    const { bytes, headers } = await this.transport.bytes(
      this.#call('archiveFiles', { params: { sessionId }, query: { ...query }, accept: '*/*' }, options),
    );
    return archiveOf(bytes, headers);
  }

  // ---- processes ----------------------------------------------------------------------
  //
  // Programs run in the session's workspace (`cwd` relative to it, default its working
  // directory) as the agent runs: the agents' allow-listed environment plus `env` (a
  // protected name such as `HOME`, `PATH`, `LD_*` or a credential rejects with `ProblemError`
  // 422 `invalid-body`), a private HOME, the agent user. A program that cannot be started
  // rejects with 422 `process-not-started`, an ended session with 409 `session-ended`, more
  // than the daemon's `--max-processes` running at once with 409 `too-many-processes`. A
  // `cwd` that is absolute or names `..` is refused (422 `invalid-body`), one leading out
  // through a symlink rejects with 403 `outside-workspace`, a missing one 404
  // `file-not-found`, a file 409 `wrong-file-kind`.

  /**
   * `POST /sessions/{sessionId}/processes/run`: runs a program to its end and answers how it
   * ended (`exitCode`, or `signal`), `stdout`, `stderr` (UTF-8) and `durationMs`. Past
   * `timeoutMs` (default 60 s; one above the daemon's `--process-timeout` is cut to it) its
   * whole process group is killed and `timedOut` is true; output past `maxOutputBytes` per
   * stream (default 1 MiB; at most `--process-output-bytes`) is dropped and
   * `stdoutTruncated` / `stderrTruncated` say so. The answer comes when the program ends:
   * aborting `options.signal` closes the request, and the daemon then kills the program.
   */
  runProcess(
    sessionId: string,
    body: RequestBody<'runProcess'>,
    options?: RequestOptions,
  ): Promise<ResponseBody<'runProcess'>> {
    return this.#json('runProcess', { params: { sessionId }, body }, options);
  }

  /**
   * `POST /sessions/{sessionId}/processes`: starts a long-running program (as `runProcess`
   * runs one; `timeoutMs` and `maxOutputBytes` do not apply) and answers at once with its
   * `ProcessInfo` (`processId`, `pid`, `status: 'running'`, ...). Its output is logged
   * (`processLogs`, `followProcessLogs`) until it ends; it ends with the session and with
   * the daemon.
   */
  startProcess(
    sessionId: string,
    body: RequestBody<'startProcess'>,
    options?: RequestOptions,
  ): Promise<ResponseBody<'startProcess'>> {
    return this.#json('startProcess', { params: { sessionId }, body }, options);
  }

  /** `GET /sessions/{sessionId}/processes`: the session's long-running processes, oldest first, running and exited. */
  listProcesses(sessionId: string, options?: RequestOptions): Promise<ResponseBody<'listProcesses'>> {
    return this.#json('listProcesses', { params: { sessionId } }, options);
  }

  /**
   * `GET /sessions/{sessionId}/processes/{processId}`: one process as it stands (`status`,
   * once `exited` its `exitCode` or `signal` and `endedAt`; `lastSequence` of its log). An
   * unknown process rejects with `ProblemError` 404 `process-not-found`.
   */
  getProcess(sessionId: string, processId: string, options?: RequestOptions): Promise<ResponseBody<'getProcess'>> {
    return this.#json('getProcess', { params: { sessionId, processId } }, options);
  }

  /**
   * `DELETE /sessions/{sessionId}/processes/{processId}`: forgets an exited process and its
   * log. One still running rejects with `ProblemError` 409 `process-running` (stop or kill
   * it first).
   */
  deleteProcess(sessionId: string, processId: string, options?: RequestOptions): Promise<ResponseBody<'deleteProcess'>> {
    return this.#json('deleteProcess', { params: { sessionId, processId } }, options);
  }

  /**
   * `POST /sessions/{sessionId}/processes/{processId}/stop`: sends SIGTERM to the process's
   * group (nothing if it has ended; a terminal's process is hung up first, SIGHUP, and every
   * process group on its terminal is signalled) and answers the process as it stands: its
   * end shows later, in `getProcess` and as the `exit` frame of its log.
   */
  stopProcess(sessionId: string, processId: string, options?: RequestOptions): Promise<ResponseBody<'stopProcess'>> {
    return this.#json('stopProcess', { params: { sessionId, processId }, body: {} }, options);
  }

  /** `POST /sessions/{sessionId}/processes/{processId}/kill`: as `stopProcess`, with SIGKILL. */
  killProcess(sessionId: string, processId: string, options?: RequestOptions): Promise<ResponseBody<'killProcess'>> {
    return this.#json('killProcess', { params: { sessionId, processId }, body: {} }, options);
  }

  /**
   * `GET /sessions/{sessionId}/processes/{processId}/logs`: one page of a process's log, the
   * chunks with `sequence > offset` (up to 1,000; each `{ sequence, stream, data, time }`),
   * `firstKept` (chunks before it were dropped to keep the log within the daemon's
   * `--process-log-bytes`) and the `process` as it stands. See `followProcessLogs` to read
   * it live.
   */
  processLogs(
    sessionId: string,
    processId: string,
    query?: ProcessLogsQuery,
    options?: RequestOptions,
  ): Promise<ResponseBody<'processLogs'>> {
    return this.#json('processLogs', { params: { sessionId, processId }, query: { ...query } }, options);
  }

  /**
   * `GET /sessions/{sessionId}/processes/{processId}/logs?follow=true`: the log from
   * `offset`, then live, as an async iterable of frames (`ProcessLogFrame`): `log` (a
   * chunk), `gap` (chunks dropped before they were read) and, last, `exit` (the ended
   * process), after which it ends. It reconnects by itself after a dropped connection
   * (`Last-Event-ID`: the last sequence it delivered), never repeats or skips a chunk;
   * `lastSequence` is the offset to resume from later.
   */
  followProcessLogs(sessionId: string, processId: string, options?: ProcessLogStreamOptions): ProcessLogStream {
    return new ProcessLogStream(this.transport, sessionId, processId, options, this.#reconnect);
  }

  // ---- terminals ----------------------------------------------------------------------
  //
  // A process started with `tty: true` (and `size: { cols, rows }`, default 80 by 24) runs
  // on a pseudo-terminal, reachable as a WebSocket; its output is logged as `stdout` too.

  /**
   * `POST /sessions/{sessionId}/processes/{processId}/terminal-ticket`: mints a ticket that
   * opens the process's terminal once, within 30 s (`expiresAt`): a browser's WebSocket
   * cannot send the token, which never goes in a URL. `path` is the WebSocket's path with
   * the ticket (see `terminalUrl`). An unknown process rejects with `ProblemError` 404
   * `process-not-found`, one without a terminal 409 `not-a-terminal`.
   */
  createTerminalTicket(
    sessionId: string,
    processId: string,
    options?: RequestOptions,
  ): Promise<ResponseBody<'createTerminalTicket'>> {
    return this.#json('createTerminalTicket', { params: { sessionId, processId }, body: {} }, options);
  }

  /**
   * The WebSocket URL (`ws:`, or `wss:` for an `https:` daemon) of a process's terminal,
   * with `ticket` (from `createTerminalTicket`; not needed by a `--no-token` daemon): for
   * a WebSocket of your own, such as a browser's behind xterm.js.
   */
  terminalUrl(sessionId: string, processId: string, ticket?: string): string {
    const url = this.transport.url(routes.openTerminal, { sessionId, processId }, { ticket });
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    return url.href;
  }

  /**
   * `GET /sessions/{sessionId}/processes/{processId}/terminal` (a WebSocket): mints a ticket
   * (or uses `options.ticket`), connects with the global `WebSocket` or `options.WebSocket`
   * (Node 20 has none: pass the `ws` package's), and answers the open `Terminal`: its
   * output as bytes (what the log still keeps, then live), `write`, `resize`, `exit`,
   * `close`. A refused connection rejects with `ProblemError`: 401
   * `terminal-ticket-refused` (a ticket used, expired or minted for another process), 404
   * `process-not-found`, 409 `not-a-terminal`; an unreachable one with `ConnectionError`.
   * Closing it leaves the process running.
   */
  async openTerminal(sessionId: string, processId: string, options: TerminalOptions = {}): Promise<Terminal> {
    const Socket = options.WebSocket ?? globalThis.WebSocket;
    if (typeof Socket !== 'function') {
      throw new TypeError('this runtime has no global WebSocket: pass `WebSocket` in the options (on Node 20, from the `ws` package)');
    }
    const { ticket = await this.createTerminalTicket(sessionId, processId, options) } = options;
    const query = { ticket: typeof ticket === 'string' ? ticket : ticket.ticket };
    const call = this.#call('openTerminal', { params: { sessionId, processId }, query }, options);
    return await openTerminal(this.transport, call, this.terminalUrl(sessionId, processId, query.ticket), Socket, options);
  }

  // ---- events -------------------------------------------------------------------------

  /** `GET /sessions/{sessionId}/events`: one page of events with `sequence > offset` (`hasMore`). */
  getEvents(sessionId: string, query?: GetEventsQuery, options?: RequestOptions): Promise<ResponseBody<'getEvents'>> {
    return this.#json('getEvents', { params: { sessionId }, query: { ...query } }, options);
  }

  /**
   * `GET /sessions/{sessionId}/events/sse`: the log from `offset`, then live, as an async
   * iterable that reconnects by itself (`Last-Event-ID`), never repeats or skips an event,
   * and ends after `sessionEnded`.
   */
  streamEvents(sessionId: string, options?: EventStreamOptions): EventStream {
    return new EventStream(this.transport, sessionId, options, this.#reconnect);
  }

  /**
   * `GET /sessions/{sessionId}/ui-stream`: a turn as the Vercel AI SDK's UI message stream
   * (v1), its chunks (`UiMessageChunk`, the `ai` package's `UIMessageChunk`) in a
   * `ReadableStream` that ends after the turn's `finish` (or `abort`): the turn `turnId`
   * replayed from its start then followed live, or without it the running turn, or `null`
   * when none runs. Reading a turn again gives the same chunks under the same `messageId`
   * (`msg_<turnId>`), so a dropped stream is resumed by reading it again. An unknown turn
   * rejects with `ProblemError` 404 `turn-not-found`. `SandboxChatTransport` (entry
   * `sandbox-daemon`) serves it to `useChat`.
   */
  uiMessageStream(
    sessionId: string,
    query: UiMessageStreamQuery = {},
    options?: RequestOptions,
  ): Promise<ReadableStream<UiMessageChunk> | null> {
    const call = this.#call(
      'uiMessageStream',
      { params: { sessionId }, query: { ...query }, accept: 'text/event-stream' },
      options,
    );
    return openUiMessageStream(this.transport, call);
  }

  /** The same as `streamEvents`. */
  events(sessionId: string, options?: EventStreamOptions): EventStream {
    return this.streamEvents(sessionId, options);
  }

  /** Every stored event after `offset`, page by page (`getEvents` until `hasMore` is false). */
  async *history(sessionId: string, options: HistoryOptions = {}): AsyncGenerator<UniversalEvent, void, undefined> {
    let offset = options.offset ?? 0;
    for (;;) {
      const page = await this.getEvents(
        sessionId,
        { offset, limit: options.pageSize ?? 1000, includeRaw: options.includeRaw },
        options,
      );
      for (const event of page.events) {
        offset = event.sequence;
        yield event;
      }
      if (!page.hasMore || page.events.length === 0) return;
    }
  }

  /** Every session, page by page (`listSessions` following `nextCursor`). */
  async *sessions(
    query: Omit<ListSessionsQuery, 'cursor'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<SessionInfo, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listSessions({ ...query, ...(cursor === undefined ? {} : { cursor }) }, options);
      yield* page.sessions;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  // ---- human in the loop --------------------------------------------------------------

  /** `POST /sessions/{sessionId}/permissions/{permissionId}/reply`: `once`, `always` or `reject`. */
  replyPermission(
    sessionId: string,
    permissionId: string,
    body: RequestBody<'replyPermission'>,
    options?: RequestOptions,
  ): Promise<ResponseBody<'replyPermission'>> {
    return this.#json('replyPermission', { params: { sessionId, permissionId }, body }, options);
  }

  /** `POST /sessions/{sessionId}/questions/{questionId}/reply`: one array of labels per question. */
  replyQuestion(
    sessionId: string,
    questionId: string,
    body: RequestBody<'replyQuestion'>,
    options?: RequestOptions,
  ): Promise<ResponseBody<'replyQuestion'>> {
    return this.#json('replyQuestion', { params: { sessionId, questionId }, body }, options);
  }

  /** `POST /sessions/{sessionId}/questions/{questionId}/reject`: declines to answer. */
  rejectQuestion(sessionId: string, questionId: string, options?: RequestOptions): Promise<ResponseBody<'rejectQuestion'>> {
    return this.#json('rejectQuestion', { params: { sessionId, questionId }, body: {} }, options);
  }

  /**
   * `POST /sessions/{sessionId}/tool-calls/{callId}/result`: answers a client host tool's
   * call (`toolCallRequested`) with `{ output }` (text, or parts: text and images) and
   * `isError` when the tool failed. A second answer throws `ProblemError` 409
   * `tool-call-resolved`, an unknown call 404 `tool-call-not-found`, an unusable image 422.
   */
  toolCallResult(
    sessionId: string,
    callId: string,
    body: RequestBody<'toolCallResult'>,
    options?: RequestOptions,
  ): Promise<ResponseBody<'toolCallResult'>> {
    return this.#json('toolCallResult', { params: { sessionId, callId }, body }, options);
  }

  /**
   * `POST /sessions/{sessionId}/tool-calls/{callId}/reject`: rejects a client host tool's
   * call; the model reads that the user rejected it, with `reason` when given.
   */
  toolCallReject(
    sessionId: string,
    callId: string,
    body: RequestBody<'toolCallReject'> = {},
    options?: RequestOptions,
  ): Promise<ResponseBody<'toolCallReject'>> {
    return this.#json('toolCallReject', { params: { sessionId, callId }, body }, options);
  }

  // ---- webhooks -----------------------------------------------------------------------
  //
  // The daemon `POST`s chosen events of every session (or of one session: `createSession`'s
  // `webhook`) to a URL, at least once, from an outbox in its store, retrying with backoff
  // for up to 24 hours. Each delivery's body is a `WebhookPayload` (`deliveryId`,
  // `webhookId`, `type`, `event`), signed in `Sandbox-Daemon-Signature` (check it with
  // `verifyWebhookSignature` from `sandbox-daemon/webhooks`); `Webhook-Id`, the same on
  // every attempt, is `<sessionId>:<sequence>`.

  /**
   * `POST /webhooks`: registers a webhook for every session's events of the listed types
   * (`events`: any type but `itemDelta`, or `['*']` for all) at `url` (`http` or `https`).
   * Answers it with its `id`, and with `secret` when the body gave none: the daemon then
   * made one, shown this once. A URL that is not http(s), an unknown, repeated or
   * `itemDelta` event type, or a secret of the wrong length (16 to 512 characters) rejects
   * with `ProblemError` 422 `invalid-body`. Not idempotent: each call registers another.
   */
  createWebhook(body: RequestBody<'createWebhook'>, options?: RequestOptions): Promise<ResponseBody<'createWebhook'>> {
    return this.#json('createWebhook', { body }, options);
  }

  /**
   * `GET /webhooks`: every webhook, the daemon-wide ones and the sessions' own (with their
   * `sessionId`), oldest first; never a secret.
   */
  listWebhooks(options?: RequestOptions): Promise<ResponseBody<'listWebhooks'>> {
    return this.#json('listWebhooks', {}, options);
  }

  /** `GET /webhooks/{webhookId}`: one webhook (never its secret); unknown: `ProblemError` 404 `webhook-not-found`. */
  getWebhook(webhookId: string, options?: RequestOptions): Promise<ResponseBody<'getWebhook'>> {
    return this.#json('getWebhook', { params: { webhookId } }, options);
  }

  /**
   * `DELETE /webhooks/{webhookId}`: deletes a webhook with its deliveries (what is pending
   * is not attempted again). Unknown: `ProblemError` 404 `webhook-not-found`.
   */
  deleteWebhook(webhookId: string, options?: RequestOptions): Promise<ResponseBody<'deleteWebhook'>> {
    return this.#json('deleteWebhook', { params: { webhookId } }, options);
  }

  /**
   * `GET /webhooks/{webhookId}/deliveries`: one page of a webhook's deliveries, oldest
   * first (`limit` 1–500, default 100; `nextCursor` for the next page, absent on the
   * last): each event's `status` (`pending`, `delivered`, `failed`), `attempts`,
   * `lastStatusCode` or `lastError`, `nextAttemptAt`. Finished deliveries are kept 7 days.
   * See `webhookDeliveries` for every page.
   */
  listWebhookDeliveries(
    webhookId: string,
    query?: ListWebhookDeliveriesQuery,
    options?: RequestOptions,
  ): Promise<ResponseBody<'listWebhookDeliveries'>> {
    return this.#json('listWebhookDeliveries', { params: { webhookId }, query: { ...query } }, options);
  }

  /** Every delivery of a webhook, page by page (`listWebhookDeliveries` following `nextCursor`). */
  async *webhookDeliveries(
    webhookId: string,
    query: Omit<ListWebhookDeliveriesQuery, 'cursor'> = {},
    options?: RequestOptions,
  ): AsyncGenerator<WebhookDelivery, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.listWebhookDeliveries(webhookId, { ...query, ...(cursor === undefined ? {} : { cursor }) }, options);
      yield* page.deliveries;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  // ---- handles ------------------------------------------------------------------------

  /** A handle on session `sessionId` (no request is made). */
  session(sessionId: string): Session {
    return new Session(this, sessionId);
  }

  /** Creates a session (`createSession`) and returns its handle. */
  async startSession(sessionId: string, body: RequestBody<'createSession'>, options?: IdempotentRequestOptions): Promise<Session> {
    await this.createSession(sessionId, body, options);
    return this.session(sessionId);
  }

  #json<K extends OperationId>(op: K, call: CallParts, options?: RequestOptions): Promise<ResponseBody<K>> {
    return this.transport.json<ResponseBody<K>>(this.#call(op, call, options));
  }

  #call(op: OperationId, call: CallParts, options: RequestOptions = {}): Call {
    return {
      op,
      route: routes[op],
      ...call,
      ...(options.headers ? { headers: options.headers } : {}),
      signal: options.signal,
    };
  }
}

/** `options` with `idempotencyKey`, when given, as the `Idempotency-Key` header. */
function withIdempotencyKey(options: IdempotentRequestOptions | undefined): RequestOptions | undefined {
  if (options?.idempotencyKey === undefined) return options;
  return { signal: options.signal, headers: { ...options.headers, 'Idempotency-Key': options.idempotencyKey } };
}

/** What a method says of its call: parameters, query, body, `Accept`. */
type CallParts = Pick<Call, 'params' | 'query' | 'body' | 'rawBody' | 'contentType' | 'accept'>;

/** The text or bytes of a bundle to import. */
function bundleBody(bundle: BundleInput): string | Uint8Array {
  if (typeof bundle === 'string' || bundle instanceof Uint8Array) return bundle;
  if (typeof bundle?.text === 'string') return bundle.text;
  throw new TypeError('importSession takes the bundle as exported: its JSON text, its bytes, or the export');
}
