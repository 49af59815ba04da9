/**
 * `sandbox-daemon/inline`: the typed client and the wire types, with no runtime
 * dependency at all (not even a Node builtin): only web-platform globals (`fetch`,
 * `Headers`, `URL`, `ReadableStream`, `AbortController`, `TextDecoder`, `DOMException`,
 * timers; `WebSocket` for terminals, unless one is passed). For browsers, Bun, Deno,
 * workers and bundles where size matters. Validation needs validators passed in (`validate:
 * { ... }`); the main entry `sandbox-daemon` brings the generated ones.
 *
 * @module
 */

export {
  SandboxDaemon,
  type ArchiveFilesQuery,
  type BundleInput,
  type DeleteFileQuery,
  type ExportSessionQuery,
  type GetEventsQuery,
  type ImportSessionQuery,
  type ListFilesQuery,
  type ProcessLogsQuery,
  type ReadFileOptions,
  type SessionExport,
  type HistoryOptions,
  type IdempotentRequestOptions,
  type ListSessionsQuery,
  type ListWebhookDeliveriesQuery,
  type SandboxDaemonOptions,
  type UploadFilesQuery,
  type UiMessageStreamQuery,
} from './client.js';
export type { UiMessageChunk } from './ui-stream.js';
export type { ArchiveInput, ByteRange, FileContent, WorkspaceArchive } from './files.js';
export { ProcessLogStream, type LogGap, type ProcessLogFrame, type ProcessLogStreamOptions } from './processes.js';
export {
  Terminal,
  type SocketEvent,
  type TerminalExit,
  type TerminalOptions,
  type WebSocketConstructor,
  type WebSocketLike,
} from './terminal.js';
export {
  Session,
  Turn,
  type ToolCallAnswer,
  type ToolCallHandler,
  type TurnHandlers,
  type TurnOptions,
  type TurnResult,
} from './session.js';
export { EventStream, type EventStreamOptions } from './event-stream.js';
export { imagePart, messageBody, textPart } from './content.js';
export { SseParser, type SseChunkResult, type SseMessage } from './sse.js';
export {
  ConnectionError,
  ProblemError,
  ProtocolError,
  ReconnectError,
  SandboxDaemonError,
  ValidationError,
  formatPath,
  type IssuePath,
  type ValidationIssue,
} from './errors.js';
export { defaultReconnect, type ReconnectOptions } from './backoff.js';
export type { RequestOptions, Validators } from './transport.js';
export { routes, type Route } from './generated/routes.js';
export type * from './standard-schema.js';
export type * from './generated/openapi.js';
export type * from './generated/streams.js';
export type * from './types.js';
// The spec now names `EventType` too (the same union); this one, derived from
// `UniversalEvent`, is the one exported.
export type { EventType } from './types.js';
