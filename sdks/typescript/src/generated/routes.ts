// Generated from ../../spec/openapi.json (sandbox-daemon 0.1.0) by scripts/zod-emitter.mjs.
// Do not edit: run `npm run generate`. `npm run check:generated` fails when this file is stale.

import type { operations } from './openapi.js';

/** The HTTP method and path template of an operation. */
export interface Route {
  /** HTTP method. */
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path template, `{name}` for path parameters. */
  readonly path: string;
}

/** Every operation of the OpenAPI document, by operationId. */
export const routes = {
  listAgents: { method: "GET", path: "/agents" },
  installAgent: { method: "POST", path: "/agents/{agent}/install" },
  agentModels: { method: "GET", path: "/agents/{agent}/models" },
  agentModes: { method: "GET", path: "/agents/{agent}/modes" },
  listCredentials: { method: "GET", path: "/credentials" },
  getCredential: { method: "GET", path: "/credentials/{agent}" },
  putCredential: { method: "PUT", path: "/credentials/{agent}" },
  deleteCredential: { method: "DELETE", path: "/credentials/{agent}" },
  health: { method: "GET", path: "/health" },
  openapi: { method: "GET", path: "/openapi.json" },
  listSessions: { method: "GET", path: "/sessions" },
  getSession: { method: "GET", path: "/sessions/{sessionId}" },
  createSession: { method: "POST", path: "/sessions/{sessionId}" },
  deleteSession: { method: "DELETE", path: "/sessions/{sessionId}" },
  cancelTurn: { method: "POST", path: "/sessions/{sessionId}/cancel" },
  endSession: { method: "POST", path: "/sessions/{sessionId}/end" },
  getEvents: { method: "GET", path: "/sessions/{sessionId}/events" },
  streamEvents: { method: "GET", path: "/sessions/{sessionId}/events/sse" },
  exportSession: { method: "GET", path: "/sessions/{sessionId}/export" },
  listFiles: { method: "GET", path: "/sessions/{sessionId}/files" },
  deleteFile: { method: "DELETE", path: "/sessions/{sessionId}/files" },
  archiveFiles: { method: "GET", path: "/sessions/{sessionId}/files/archive" },
  readFile: { method: "GET", path: "/sessions/{sessionId}/files/content" },
  writeFile: { method: "PUT", path: "/sessions/{sessionId}/files/content" },
  uploadFiles: { method: "POST", path: "/sessions/{sessionId}/files/upload" },
  handoverSession: { method: "POST", path: "/sessions/{sessionId}/handover" },
  importSession: { method: "POST", path: "/sessions/{sessionId}/import" },
  sendMessage: { method: "POST", path: "/sessions/{sessionId}/messages" },
  replyPermission: { method: "POST", path: "/sessions/{sessionId}/permissions/{permissionId}/reply" },
  listProcesses: { method: "GET", path: "/sessions/{sessionId}/processes" },
  startProcess: { method: "POST", path: "/sessions/{sessionId}/processes" },
  runProcess: { method: "POST", path: "/sessions/{sessionId}/processes/run" },
  getProcess: { method: "GET", path: "/sessions/{sessionId}/processes/{processId}" },
  deleteProcess: { method: "DELETE", path: "/sessions/{sessionId}/processes/{processId}" },
  killProcess: { method: "POST", path: "/sessions/{sessionId}/processes/{processId}/kill" },
  processLogs: { method: "GET", path: "/sessions/{sessionId}/processes/{processId}/logs" },
  stopProcess: { method: "POST", path: "/sessions/{sessionId}/processes/{processId}/stop" },
  openTerminal: { method: "GET", path: "/sessions/{sessionId}/processes/{processId}/terminal" },
  createTerminalTicket: { method: "POST", path: "/sessions/{sessionId}/processes/{processId}/terminal-ticket" },
  rejectQuestion: { method: "POST", path: "/sessions/{sessionId}/questions/{questionId}/reject" },
  replyQuestion: { method: "POST", path: "/sessions/{sessionId}/questions/{questionId}/reply" },
  toolCallReject: { method: "POST", path: "/sessions/{sessionId}/tool-calls/{callId}/reject" },
  toolCallResult: { method: "POST", path: "/sessions/{sessionId}/tool-calls/{callId}/result" },
  turnChanges: { method: "GET", path: "/sessions/{sessionId}/turns/{turnId}/changes" },
  uiMessageStream: { method: "GET", path: "/sessions/{sessionId}/ui-stream" },
  listWebhooks: { method: "GET", path: "/webhooks" },
  createWebhook: { method: "POST", path: "/webhooks" },
  getWebhook: { method: "GET", path: "/webhooks/{webhookId}" },
  deleteWebhook: { method: "DELETE", path: "/webhooks/{webhookId}" },
  listWebhookDeliveries: { method: "GET", path: "/webhooks/{webhookId}/deliveries" },
} as const satisfies { readonly [K in keyof operations]: Route };
