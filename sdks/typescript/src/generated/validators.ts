// Generated from ../../spec/openapi.json (sandbox-daemon 0.1.0) by scripts/zod-emitter.mjs.
// Do not edit: run `npm run generate`. `npm run check:generated` fails when this file is stale.

import * as z from 'zod';
import type { components } from './openapi.js';
import type { InstallAgentFrame } from './streams.js';

type Schemas = components["schemas"];

/**
 * Which universal features an agent supports. Every flag is backed by tests of the
 * agent's real CLI (or, for the mock, of the mock itself).
 */
export const AgentCapabilitiesSchema: z.ZodType<Schemas["AgentCapabilities"]> = z.looseObject({
  /** Agent modes (e.g. build / plan). */
  "agentModes": z.boolean(),
  /** Cancelling a running turn. */
  "cancel": z.boolean(),
  /** `commandExecution` items. */
  "commandExecution": z.boolean(),
  /** `fileChange` items. */
  "fileChanges": z.boolean(),
  /**
   * `hostTools`: the agent calls the host's tools on the daemon's MCP server, answered
   * by the client or an http endpoint, approved first or ending the turn as asked.
   */
  "hostTools": z.boolean().optional(),
  /** Messages with images (see `policy.imageTypes`). */
  "images": z.boolean().optional(),
  /** `maxTurns` ends a turn that keeps calling tools (see `policy.maxTurns`). */
  "maxTurns": z.boolean().optional(),
  /**
   * `mcpServers`: the agent calls the session's MCP servers (see
   * `policy.mcpTransports`).
   */
  "mcpServers": z.boolean().optional(),
  /** Model selection. */
  "models": z.boolean(),
  /** Several turns in one session. */
  "multiTurn": z.boolean(),
  /** `always` replies are honoured for the rest of the session. */
  "permissionAlways": z.boolean(),
  /** Permission requests (`permissionAsked`). */
  "permissions": z.boolean(),
  /** Plan approval requests. */
  "planApproval": z.boolean(),
  /** `plan` items. */
  "plans": z.boolean(),
  /** Questions (`questionAsked`). */
  "questions": z.boolean(),
  /** Reasoning / thinking items. */
  "reasoning": z.boolean(),
  /** The conversation survives an agent process exit. */
  "resume": z.boolean(),
  /** `env` reaches the agent's process. */
  "sessionEnv": z.boolean().optional(),
  /** Text arrives as `itemDelta`s while it is generated. */
  "streamingDeltas": z.boolean(),
  /** `systemPrompt` reaches the model (see `policy.systemPromptModes`). */
  "systemPrompt": z.boolean().optional(),
  /** Assistant text messages. */
  "textMessages": z.boolean(),
  /** `toolCall` / `toolResult` items. */
  "toolCalls": z.boolean(),
  /** `tools` takes tools away (see `policy.tools` for how). */
  "toolLists": z.boolean().optional(),
  /** Token usage on `turnEnded`. */
  "usage": z.boolean(),
  /** `validateToken` on session creation. */
  "validateToken": z.boolean(),
  /** Model variants (e.g. reasoning effort). */
  "variants": z.boolean(),
});

/** A kind of credential a session can use. */
export const CredentialKindSchema: z.ZodType<Schemas["CredentialKind"]> = z.enum(["apiKey","oauthToken","storedLogin"]);

/** Which credentials an agent can use on this daemon, without revealing any. */
export const AgentCredentialsSchema: z.ZodType<Schemas["AgentCredentials"]> = z.looseObject({
  /**
   * The kinds available now, in the order a session uses them (a session's own `token`
   * comes before all of them).
   */
  "available": z.array(CredentialKindSchema),
  /** Whether a session of the agent needs one (not the mock). */
  "required": z.boolean(),
});

/** A coding agent the daemon knows. */
export const AgentIdSchema: z.ZodType<Schemas["AgentId"]> = z.enum(["claude","codex","opencode","amp","pi","mock"]);

/** Where an agent's binary came from. */
export const BinarySourceSchema: z.ZodType<Schemas["BinarySource"]> = z.enum(["builtIn","override","path","release","mirror","npm"]);

/** How one capability flag was proven. */
export const CapabilityProofSchema: z.ZodType<Schemas["CapabilityProof"]> = z.looseObject({
  /** What ran behind the agent: the real CLI and its version, the mock, or a stand-in. */
  "ranWith": z.string(),
  /** The scenarios of the end-to-end table that showed it (see the README's agent table). */
  "scenarios": z.array(z.string()),
});

/** One version of an agent installed in the daemon's data dir. */
export const InstalledVersionSchema: z.ZodType<Schemas["InstalledVersion"]> = z.looseObject({
  /** Whether it is the one new sessions use. */
  "current": z.boolean(),
  /** Its executable. */
  "path": z.string(),
  /** The version. */
  "version": z.string(),
});

/** An MCP transport. */
export const McpTransportSchema: z.ZodType<Schemas["McpTransport"]> = z.enum(["stdio","http"]);

/** How `systemPrompt` combines with the agent's own instructions. */
export const SystemPromptModeSchema: z.ZodType<Schemas["SystemPromptMode"]> = z.enum(["append","replace"]);

/** How an agent keeps a tool from the model when a session's `tools` takes it away. */
export const ToolRestrictionSchema: z.ZodType<Schemas["ToolRestriction"]> = z.enum(["removed","refused","absent"]);

/** Who enforces `maxTurns`. */
export const TurnLimiterSchema: z.ZodType<Schemas["TurnLimiter"]> = z.enum(["agent","daemon"]);

/**
 * What of a session policy an agent honours, and how (`GET /agents`). A request for
 * something it does not honour is refused with a 422 naming the field.
 */
export const PolicySupportSchema: z.ZodType<Schemas["PolicySupport"]> = z.looseObject({
  /**
   * Whether the daemon offers it `ask_user`, a question tool of the daemon's (it has
   * none of its own), on that server.
   */
  "askUser": z.boolean().optional(),
  /** Whether it takes the session's `env`. */
  "env": z.boolean(),
  /** Whether it takes `hostTools` (the daemon's per-session MCP server reaches it). */
  "hostTools": z.boolean().optional(),
  /** The image media types its messages may carry (empty: no images). */
  "imageTypes": z.array(z.string()),
  "maxTurns": TurnLimiterSchema.nullable().optional(),
  /** The MCP transports it takes in `mcpServers` (empty: none). */
  "mcpTransports": z.array(McpTransportSchema),
  /** The `systemPromptMode`s it honours (empty: no `systemPrompt`). */
  "systemPromptModes": z.array(SystemPromptModeSchema),
  /**
   * How each built-in tool (by universal name) and MCP tools (`mcp`) are taken away;
   * a tool not listed cannot be, and a `tools` list that would is refused.
   */
  "tools": z.record(z.string(), ToolRestrictionSchema),
});

/** One agent as seen by `GET /agents`. */
export const AgentInfoSchema: z.ZodType<Schemas["AgentInfo"]> = z.looseObject({
  /** What the agent supports. */
  "capabilities": AgentCapabilitiesSchema,
  /**
   * How each `true` capability was proven: the scenarios of the end-to-end table that
   * showed it, and what ran behind the agent then. Keyed by the flag's name.
   */
  "capabilityProofs": z.record(z.string(), CapabilityProofSchema).optional(),
  /** Which credentials a session of the agent can use here (never the secrets). */
  "credentials": AgentCredentialsSchema.optional(),
  /** The agent id. */
  "id": AgentIdSchema,
  /** Whether a usable binary was found (always true for `mock`). */
  "installed": z.boolean(),
  /**
   * Every version the daemon has installed in its data dir (the one in use among them
   * unless an override or `PATH` binary is used instead).
   */
  "installedVersions": z.array(InstalledVersionSchema).optional(),
  /** Display name. */
  "name": z.string(),
  /** Path of the binary in use. */
  "path": z.string().nullable().optional(),
  /**
   * What of a session policy (`systemPrompt`, `tools`, `maxTurns`, `mcpServers`,
   * images, `env`) the agent honours, and how.
   */
  "policy": PolicySupportSchema.optional(),
  "source": BinarySourceSchema.nullable().optional(),
  /** Whether this daemon can drive the agent yet. */
  "supported": z.boolean(),
  /** Installed version, when known. */
  "version": z.string().nullable().optional(),
});

/** Body of `GET /agents`. */
export const AgentsResponseSchema: z.ZodType<Schemas["AgentsResponse"]> = z.looseObject({
  /** Every known agent. */
  "agents": z.array(AgentInfoSchema),
});

/** Body answering `POST /sessions/{id}/cancel` (202). */
export const CancelResponseSchema: z.ZodType<Schemas["CancelResponse"]> = z.looseObject({
  /** The turn being cancelled; it ends with `turnEnded` stopReason `cancelled`. */
  "turnId": z.string(),
});

/** Body answering `POST /sessions/{sessionId}`. */
export const CreateSessionResponseSchema: z.ZodType<Schemas["CreateSessionResponse"]> = z.looseObject({
  /**
   * Always true: the agent started and the session is ready for messages. An agent that
   * cannot start is a problem response instead (its `agentError` says why; nothing is
   * kept and the id may be used again).
   */
  "healthy": z.boolean(),
  /** The agent's own session id, when known at start. */
  "nativeSessionId": z.string().nullable().optional(),
});

/** A webhook (its secret is never shown after its creation). */
export const WebhookSchema: z.ZodType<Schemas["Webhook"]> = z.looseObject({
  /** When it was created. */
  "createdAt": z.iso.datetime({ offset: true }),
  /** The event types delivered (`["*"]`: all). */
  "events": z.array(z.string()),
  /** Its id (`wh_...`). */
  "id": z.string(),
  /** The session it belongs to, for a session's own webhook; absent: every session. */
  "sessionId": z.string().nullable().optional(),
  /** Where deliveries go. */
  "url": z.string(),
});

/** `POST /webhooks`'s answer: the webhook, and its secret when the daemon made it. */
export const CreatedWebhookSchema: z.ZodType<Schemas["CreatedWebhook"]> = z.intersection(WebhookSchema, z.looseObject({
  /** The signing secret the daemon made (only when the request gave none; shown once). */
  "secret": z.string().nullable().optional(),
}));

/** What one stored login holds. */
export const LoginEntryKindSchema: z.ZodType<Schemas["LoginEntryKind"]> = z.enum(["oauth","apiKey","token","other"]);

/** One login inside a stored login file (OpenCode and Pi keep one per provider). */
export const LoginEntrySchema: z.ZodType<Schemas["LoginEntry"]> = z.looseObject({
  /** When its access token expires (RFC 3339), when the login says. */
  "expiresAt": z.string().nullable().optional(),
  /** What it holds. */
  "kind": LoginEntryKindSchema,
  /**
   * What it is for: a provider (`anthropic`, `openai`), `chatgpt`, `claudeAiOauth`, or
   * the service URL Amp keys it by.
   */
  "name": z.string(),
});

/**
 * A login the daemon keeps for an agent (`GET /credentials/{agent}`): everything but the
 * secret.
 */
export const StoredLoginInfoSchema: z.ZodType<Schemas["StoredLoginInfo"]> = z.looseObject({
  /** The agent it is for. */
  "agent": AgentIdSchema,
  /** What it holds. */
  "entries": z.array(LoginEntrySchema),
  /**
   * The file a session's private home gets (relative to that home), or none for a
   * token given in the environment.
   */
  "file": z.string().nullable().optional(),
  /** When an agent last refreshed it and the daemon wrote the refresh back (RFC 3339). */
  "refreshedAt": z.string().nullable().optional(),
  /** Where it was imported from (a path on the importing machine), when it was. */
  "source": z.string().nullable().optional(),
  /** When it was stored (RFC 3339). */
  "storedAt": z.string(),
});

/** `GET /credentials`: the stored logins. */
export const CredentialsResponseSchema: z.ZodType<Schemas["CredentialsResponse"]> = z.looseObject({
  /** One per agent that has one, by agent id. */
  "credentials": z.array(StoredLoginInfoSchema),
});

/**
 * An agent-level error, tagged by `type`. Appears in `error` events and as the
 * `agentError` of problem responses. Every variant has a human `message`.
 */
export const AgentErrorSchema: z.ZodType<Schemas["AgentError"]> = z.discriminatedUnion("type", [
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("tokenError"),
  }),
  z.looseObject({
    /** Exit code, when it exited normally. */
    "exitCode": z.number().int().nullable().optional(),
    /** What happened. */
    "message": z.string(),
    /** Signal number, when it was killed. */
    "signal": z.number().int().nullable().optional(),
    /** The last lines of its stderr. */
    "stderrTail": z.string().nullable().optional(),
    "type": z.literal("processExited"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("installFailed"),
  }),
  z.looseObject({
    /** What happened, and how to fix it. */
    "message": z.string(),
    "type": z.literal("notInstalled"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("unsupportedAgent"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("spawnFailed"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("protocolError"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    /** The provider's HTTP status, when known. */
    "status": z.number().int().min(0).nullable().optional(),
    "type": z.literal("providerError"),
  }),
  z.looseObject({
    /** The agent's error code or subtype, when it gives one. */
    "code": z.string().nullable().optional(),
    /** What the agent said. */
    "message": z.string(),
    "type": z.literal("agentReported"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("timeout"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("requestGone"),
  }),
  z.looseObject({
    /** What happened. */
    "message": z.string(),
    "type": z.literal("storeError"),
  }),
]);

/**
 * Payload of `itemDelta`: text appended to an item in progress (message text, reasoning
 * text or command output, depending on the item's kind).
 */
export const ItemDeltaSchema: z.ZodType<Schemas["ItemDelta"]> = z.looseObject({
  /** The appended text. */
  "delta": z.string(),
  /** The item being extended. */
  "itemId": z.string(),
});

/** How a file was changed. */
export const FileChangeKindSchema: z.ZodType<Schemas["FileChangeKind"]> = z.enum(["add","update","delete"]);

/** An MCP server's tool, named as the session's `mcpServers` and the server name them. */
export const McpToolRefSchema: z.ZodType<Schemas["McpToolRef"]> = z.looseObject({
  /** The server's name in `mcpServers`. */
  "server": z.string(),
  /** The tool's name on that server. */
  "tool": z.string(),
});

/** Status of one plan entry. */
export const PlanEntryStatusSchema: z.ZodType<Schemas["PlanEntryStatus"]> = z.enum(["pending","inProgress","completed"]);

/** One step of a plan / todo list. */
export const PlanEntrySchema: z.ZodType<Schemas["PlanEntry"]> = z.looseObject({
  /** What the step is. */
  "content": z.string(),
  /** Where it stands. */
  "status": PlanEntryStatusSchema,
});

/** A typed piece of item content, tagged by `type`. */
export const ContentPartSchema: z.ZodType<Schemas["ContentPart"]> = z.discriminatedUnion("type", [
  z.looseObject({
    /** The text. */
    "text": z.string(),
    "type": z.literal("text"),
  }),
  z.looseObject({
    /** The reasoning text (may be a summary). */
    "text": z.string(),
    "type": z.literal("reasoning"),
  }),
  z.looseObject({
    /** Tool arguments as JSON. */
    "arguments": z.unknown(),
    /** The agent's id of the call. */
    "callId": z.string(),
    "mcp": McpToolRefSchema.nullable().optional(),
    /** Tool name as the agent knows it. */
    "name": z.string(),
    "type": z.literal("toolCall"),
  }),
  z.looseObject({
    /** The id of the call this answers. */
    "callId": z.string(),
    /** Whether the tool reported an error (including a denied permission). */
    "isError": z.boolean(),
    /** Output text. */
    "output": z.string(),
    "type": z.literal("toolResult"),
  }),
  z.looseObject({
    /** The image, base64-encoded, when sent inline. */
    "data": z.string().nullable().optional(),
    /** Its media type. */
    "mediaType": z.string(),
    /** Its file, when sent by path. */
    "path": z.string().nullable().optional(),
    "type": z.literal("image"),
  }),
  z.looseObject({
    /** The command line. */
    "command": z.string(),
    /** Working directory, when known. */
    "cwd": z.string().nullable().optional(),
    /** Exit code, when the command finished. */
    "exitCode": z.number().int().nullable().optional(),
    /** Combined output, when known. */
    "output": z.string().nullable().optional(),
    "type": z.literal("commandExecution"),
  }),
  z.looseObject({
    /** Kind of change. */
    "changeKind": FileChangeKindSchema,
    /** Unified diff, when known. */
    "diff": z.string().nullable().optional(),
    /** Path of the file. */
    "path": z.string(),
    "type": z.literal("fileChange"),
  }),
  z.looseObject({
    /** The plan's steps. */
    "entries": z.array(PlanEntrySchema),
    /** Free-form plan text, when the agent gives one. */
    "text": z.string().nullable().optional(),
    "type": z.literal("plan"),
  }),
  z.looseObject({
    /** Longer detail. */
    "detail": z.string().nullable().optional(),
    /** Short label (e.g. `compacting`). */
    "label": z.string(),
    "type": z.literal("status"),
  }),
  z.looseObject({
    /** Why it could not be parsed. */
    "error": z.string(),
    /** The raw native JSON (or a JSON string holding the raw line). */
    "raw": z.unknown(),
    "type": z.literal("unparsed"),
  }),
]);

/** What an item is. Clients dispatch rendering on this. */
export const ItemKindSchema: z.ZodType<Schemas["ItemKind"]> = z.enum(["message","reasoning","toolCall","toolResult","commandExecution","fileChange","plan","status","unparsed"]);

/** Who authored an item. */
export const ItemRoleSchema: z.ZodType<Schemas["ItemRole"]> = z.enum(["user","assistant","system","tool"]);

/** Lifecycle status of an item. */
export const ItemStatusSchema: z.ZodType<Schemas["ItemStatus"]> = z.enum(["inProgress","completed","failed"]);

/**
 * One item of a turn. `itemStarted` carries the item as first known, `itemDelta`s extend
 * its text, and `itemCompleted` carries the authoritative final item.
 */
export const ItemSchema: z.ZodType<Schemas["Item"]> = z.looseObject({
  /** Typed content parts. */
  "content": z.array(ContentPartSchema).optional(),
  /** Daemon-assigned id, unique within the session. */
  "itemId": z.string(),
  /** What the item is. */
  "kind": ItemKindSchema,
  /** The agent's own id for this item, when it has one. */
  "nativeItemId": z.string().nullable().optional(),
  /** The item this one belongs to (e.g. the tool call of a tool result). */
  "parentId": z.string().nullable().optional(),
  "role": ItemRoleSchema.nullable().optional(),
  /** Lifecycle status. */
  "status": ItemStatusSchema,
});

/** Payload of `itemStarted` and `itemCompleted`. */
export const ItemEventSchema: z.ZodType<Schemas["ItemEvent"]> = z.looseObject({
  /** The item as known at this point. */
  "item": ItemSchema,
});

/** What a permission request is about. */
export const PermissionKindSchema: z.ZodType<Schemas["PermissionKind"]> = z.enum(["command","fileChange","fileRead","network","planApproval","mcpTool","hostTool","tool"]);

/**
 * The agent asks permission to act. Answer with
 * `POST /sessions/{id}/permissions/{permissionId}/reply`.
 */
export const PermissionRequestSchema: z.ZodType<Schemas["PermissionRequest"]> = z.looseObject({
  /**
   * What an `always` reply covers. Later requests with the same scope in this session are
   * approved without asking. Absent when the agent offers no lasting approval.
   */
  "alwaysScope": z.string().nullable().optional(),
  /** The command line, for command requests. */
  "command": z.string().nullable().optional(),
  /** The tool's full input as the agent sent it. */
  "input": z.unknown().optional(),
  /** The item (usually a tool call) the request gates. */
  "itemId": z.string().nullable().optional(),
  /** What is being asked. */
  "kind": PermissionKindSchema,
  "mcp": McpToolRefSchema.nullable().optional(),
  /** Files concerned. */
  "paths": z.array(z.string()).optional(),
  /** Id to reply to; unique within the session. */
  "permissionId": z.string(),
  /** The plan to approve, for plan approvals. */
  "plan": z.string().nullable().optional(),
  /** A one-line human description (e.g. ``Run `ls -la` ``). */
  "title": z.string(),
  /** The agent's tool name. */
  "tool": z.string().nullable().optional(),
});

/** How a permission request ended. */
export const PermissionOutcomeSchema: z.ZodType<Schemas["PermissionOutcome"]> = z.enum(["once","always","reject","cancelled"]);

/** Payload of `permissionResolved`. */
export const PermissionResolvedSchema: z.ZodType<Schemas["PermissionResolved"]> = z.looseObject({
  /**
   * True when the daemon answered by itself — `always` because of an earlier `always`,
   * `reject` because the session's `tools` refuse the tool; such requests never appear
   * as `permissionAsked`, so the request is included.
   */
  "automatic": z.boolean(),
  /** How it ended. */
  "outcome": PermissionOutcomeSchema,
  /** The request that was resolved. */
  "permissionId": z.string(),
  "request": PermissionRequestSchema.nullable().optional(),
});

/** One option of a question. */
export const QuestionOptionSchema: z.ZodType<Schemas["QuestionOption"]> = z.looseObject({
  /** Longer explanation. */
  "description": z.string().nullable().optional(),
  /** The label; answers quote it exactly. */
  "label": z.string(),
});

/** One question of a question request. */
export const QuestionSchema: z.ZodType<Schemas["Question"]> = z.looseObject({
  /** Whether a free-form answer (not one of the labels) is accepted. */
  "allowCustom": z.boolean(),
  /** A short header / chip label. */
  "header": z.string().nullable().optional(),
  /** Whether several options may be selected. */
  "multiSelect": z.boolean(),
  /** The options to choose from (may be empty for free-form questions). */
  "options": z.array(QuestionOptionSchema).optional(),
  /** The question text. */
  "question": z.string(),
});

/**
 * The agent asks the user one or more questions. Answer with
 * `POST /sessions/{id}/questions/{questionId}/reply` (`answers[i]` answers `questions[i]`)
 * or reject with `.../reject`.
 */
export const QuestionRequestSchema: z.ZodType<Schemas["QuestionRequest"]> = z.looseObject({
  /** The item (usually a tool call) that asked. */
  "itemId": z.string().nullable().optional(),
  /** Id to reply to; unique within the session. */
  "questionId": z.string(),
  /** The questions, in order. */
  "questions": z.array(QuestionSchema),
});

/** How a question request ended. */
export const QuestionOutcomeSchema: z.ZodType<Schemas["QuestionOutcome"]> = z.enum(["answered","rejected","cancelled"]);

/** Payload of `questionResolved`. */
export const QuestionResolvedSchema: z.ZodType<Schemas["QuestionResolved"]> = z.looseObject({
  /** The answers, one array of selected labels per question (only when answered). */
  "answers": z.array(z.array(z.string())).nullable().optional(),
  /** How it ended. */
  "outcome": QuestionOutcomeSchema,
  /** The request that was resolved. */
  "questionId": z.string(),
});

/** Why a session ended. */
export const SessionEndReasonSchema: z.ZodType<Schemas["SessionEndReason"]> = z.enum(["completed","error","terminated"]);

/** Payload of `sessionEnded`. */
export const SessionEndedSchema: z.ZodType<Schemas["SessionEnded"]> = z.looseObject({
  /** Exit code of the agent process, when it exited. */
  "exitCode": z.number().int().nullable().optional(),
  /** Why the session ended. */
  "reason": SessionEndReasonSchema,
  /** The last lines the agent wrote to stderr, when it failed. */
  "stderrTail": z.string().nullable().optional(),
});

/**
 * The event a handover logs (`sessionHandedOver`): the agent that ran the session until
 * now, and the one that continues it from the next turn, with the earlier turns as its own
 * history. The event's `nativeSessionId` is the new agent's.
 */
export const SessionHandedOverSchema: z.ZodType<Schemas["SessionHandedOver"]> = z.looseObject({
  /** The new agent's mode. */
  "agentMode": z.string().nullable().optional(),
  /** The agent before. */
  "fromAgent": AgentIdSchema,
  /** The new agent's model. */
  "model": z.string().nullable().optional(),
  /** The agent from now on. */
  "toAgent": AgentIdSchema,
  /** How many earlier turns the new agent's history holds. */
  "turns": z.number().int().min(0),
});

/** How much the agent may do without asking. */
export const PermissionModeSchema: z.ZodType<Schemas["PermissionMode"]> = z.enum(["default","plan","acceptEdits","bypass"]);

/** Payload of `sessionStarted`. */
export const SessionStartedSchema: z.ZodType<Schemas["SessionStarted"]> = z.looseObject({
  /** The agent driving the session. */
  "agent": AgentIdSchema,
  /** The agent mode (e.g. `build`, `plan`), when set. */
  "agentMode": z.string().nullable().optional(),
  /** The agent's version, when known. */
  "agentVersion": z.string().nullable().optional(),
  /** The agent's working directory. */
  "cwd": z.string().nullable().optional(),
  /** The model, when known. */
  "model": z.string().nullable().optional(),
  "permissionMode": PermissionModeSchema.nullable().optional(),
});

/**
 * The agent called a client host tool: answer with
 * `POST /sessions/{id}/tool-calls/{callId}/result` or `.../reject`.
 */
export const ToolCallRequestSchema: z.ZodType<Schemas["ToolCallRequest"]> = z.looseObject({
  /** Id to answer; unique within the session. */
  "callId": z.string(),
  /** The input the model gave. */
  "input": z.looseObject({}),
  /** The agent's tool-call item, when the daemon could tell which one it is. */
  "itemId": z.string().nullable().optional(),
  /** The host tool's name. */
  "tool": z.string(),
});

/** How a host tool call ended. */
export const ToolCallOutcomeSchema: z.ZodType<Schemas["ToolCallOutcome"]> = z.enum(["answered","rejected","cancelled"]);

/** A host tool call was answered, rejected or cancelled. */
export const ToolCallResolvedSchema: z.ZodType<Schemas["ToolCallResolved"]> = z.looseObject({
  /** The call. */
  "callId": z.string(),
  /** How it ended. */
  "outcome": ToolCallOutcomeSchema,
});

/** How many files a turn added, modified and deleted. */
export const ChangeCountsSchema: z.ZodType<Schemas["ChangeCounts"]> = z.looseObject({
  /** Files (and symlinks) that appeared. */
  "added": z.number().int().min(0),
  /** Files that went away. */
  "deleted": z.number().int().min(0),
  /** Files whose content, kind or mode changed. */
  "modified": z.number().int().min(0),
});

/** Why a turn stopped. */
export const StopReasonSchema: z.ZodType<Schemas["StopReason"]> = z.enum(["completed","cancelled","error","maxTokens","maxTurns","maxBudget","toolStop"]);

/** Token usage of a turn. */
export const UsageSchema: z.ZodType<Schemas["Usage"]> = z.looseObject({
  /** Input tokens written to the prompt cache. */
  "cacheWriteTokens": z.number().int().min(0).nullable().optional(),
  /** Input tokens read from the prompt cache. */
  "cachedInputTokens": z.number().int().min(0).nullable().optional(),
  /** Input (prompt) tokens, excluding cached ones where the agent separates them. */
  "inputTokens": z.number().int().min(0),
  /** Output (completion) tokens. */
  "outputTokens": z.number().int().min(0),
  /** Reasoning tokens, when reported separately. */
  "reasoningTokens": z.number().int().min(0).nullable().optional(),
  /** Cost in US dollars, when the agent reports it. */
  "totalCostUsd": z.number().nullable().optional(),
});

/** Payload of `turnEnded`. */
export const TurnEndedSchema: z.ZodType<Schemas["TurnEnded"]> = z.looseObject({
  "changes": ChangeCountsSchema.nullable().optional(),
  /** Why it stopped. */
  "stopReason": StopReasonSchema,
  /** The turn that ended. */
  "turnId": z.string(),
  "usage": UsageSchema.nullable().optional(),
});

/** Payload of `turnStarted`. */
export const TurnStartedSchema: z.ZodType<Schemas["TurnStarted"]> = z.looseObject({
  /** Daemon-assigned turn id, unique within the session. */
  "turnId": z.string(),
});

/** Why a stored event could not be read. */
export const UnknownReasonSchema: z.ZodType<Schemas["UnknownReason"]> = z.enum(["newerVersion","unreadable"]);

/** Payload of `unknown`: a stored record served as it is, never dropped or rewritten. */
export const UnknownEventSchema: z.ZodType<Schemas["UnknownEvent"]> = z.looseObject({
  /** What went wrong reading it, when it did not parse. */
  "error": z.string().nullable().optional(),
  /** Why this build could not read it. */
  "reason": UnknownReasonSchema,
  /** The schema version the record was written with. */
  "schemaVersion": z.number().int().min(0),
  /** The stored event: its JSON when it is JSON, else the stored text as a string. */
  "stored": z.unknown(),
  /** The event type the record was stored with. */
  "storedType": z.string(),
});

/** The typed payload of an event, tagged by `type` with the body in `data`. */
export const EventPayloadSchema: z.ZodType<Schemas["EventPayload"]> = z.discriminatedUnion("type", [
  z.looseObject({
    /** The session is ready. */
    "data": SessionStartedSchema,
    "type": z.literal("sessionStarted"),
  }),
  z.looseObject({
    /** The session is over; no event follows. */
    "data": SessionEndedSchema,
    "type": z.literal("sessionEnded"),
  }),
  z.looseObject({
    /** A turn began (a message was accepted). */
    "data": TurnStartedSchema,
    "type": z.literal("turnStarted"),
  }),
  z.looseObject({
    /** A turn finished. */
    "data": TurnEndedSchema,
    "type": z.literal("turnEnded"),
  }),
  z.looseObject({
    /** An item appeared. */
    "data": ItemEventSchema,
    "type": z.literal("itemStarted"),
  }),
  z.looseObject({
    /** More text for an item in progress. */
    "data": ItemDeltaSchema,
    "type": z.literal("itemDelta"),
  }),
  z.looseObject({
    /** An item is final. */
    "data": ItemEventSchema,
    "type": z.literal("itemCompleted"),
  }),
  z.looseObject({
    /** Something went wrong (agent crash, provider error, protocol error, ...). */
    "data": AgentErrorSchema,
    "type": z.literal("error"),
  }),
  z.looseObject({
    /** The agent asks permission to do something. */
    "data": PermissionRequestSchema,
    "type": z.literal("permissionAsked"),
  }),
  z.looseObject({
    /** A permission request was answered (by the client, automatically, or cancelled). */
    "data": PermissionResolvedSchema,
    "type": z.literal("permissionResolved"),
  }),
  z.looseObject({
    /** The agent asks the user one or more questions. */
    "data": QuestionRequestSchema,
    "type": z.literal("questionAsked"),
  }),
  z.looseObject({
    /** A question request was answered, rejected or cancelled. */
    "data": QuestionResolvedSchema,
    "type": z.literal("questionResolved"),
  }),
  z.looseObject({
    /** The agent called a host tool the client answers. */
    "data": ToolCallRequestSchema,
    "type": z.literal("toolCallRequested"),
  }),
  z.looseObject({
    /** A host tool call the client answers was answered, rejected or cancelled. */
    "data": ToolCallResolvedSchema,
    "type": z.literal("toolCallResolved"),
  }),
  z.looseObject({
    /** The session goes on with another agent (`POST /sessions/{id}/handover`). */
    "data": SessionHandedOverSchema,
    "type": z.literal("sessionHandedOver"),
  }),
  z.looseObject({
    /**
     * A stored event this build cannot read: corrupt, or written by a newer build. It
     * keeps its place (sequence) in the log and carries what was stored, unchanged.
     */
    "data": UnknownEventSchema,
    "type": z.literal("unknown"),
  }),
]);

/** Who produced an event: the agent (converted from its native stream) or the daemon itself. */
export const EventSourceSchema: z.ZodType<Schemas["EventSource"]> = z.enum(["agent","daemon"]);

/** The members every `UniversalEvent` has besides its `type`-tagged payload. */
const UniversalEventShape = {
  /** The agent's own session / thread id, once known. */
  "nativeSessionId": z.string().nullable().optional(),
  /** The native JSON this event was converted from (only with `includeRaw=true`). */
  "raw": z.unknown().optional(),
  /** Position in the session's log: starts at 1, contiguous, never reused. */
  "sequence": z.number().int().min(0),
  /** The daemon session id. */
  "sessionId": z.string(),
  /** Who produced the event. */
  "source": EventSourceSchema,
  /**
   * True when the event has no native counterpart and was synthesised to keep the
   * universal lifecycle complete.
   */
  "synthetic": z.boolean(),
  /** When the daemon recorded the event. */
  "time": z.iso.datetime({ offset: true }),
};

/** One event of a session's log. */
export const UniversalEventSchema: z.ZodType<Schemas["UniversalEvent"]> = z.discriminatedUnion("type", [
  z.looseObject({
    /** The session is ready. */
    "data": SessionStartedSchema,
    "type": z.literal("sessionStarted"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** The session is over; no event follows. */
    "data": SessionEndedSchema,
    "type": z.literal("sessionEnded"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** A turn began (a message was accepted). */
    "data": TurnStartedSchema,
    "type": z.literal("turnStarted"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** A turn finished. */
    "data": TurnEndedSchema,
    "type": z.literal("turnEnded"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** An item appeared. */
    "data": ItemEventSchema,
    "type": z.literal("itemStarted"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** More text for an item in progress. */
    "data": ItemDeltaSchema,
    "type": z.literal("itemDelta"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** An item is final. */
    "data": ItemEventSchema,
    "type": z.literal("itemCompleted"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** Something went wrong (agent crash, provider error, protocol error, ...). */
    "data": AgentErrorSchema,
    "type": z.literal("error"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** The agent asks permission to do something. */
    "data": PermissionRequestSchema,
    "type": z.literal("permissionAsked"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** A permission request was answered (by the client, automatically, or cancelled). */
    "data": PermissionResolvedSchema,
    "type": z.literal("permissionResolved"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** The agent asks the user one or more questions. */
    "data": QuestionRequestSchema,
    "type": z.literal("questionAsked"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** A question request was answered, rejected or cancelled. */
    "data": QuestionResolvedSchema,
    "type": z.literal("questionResolved"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** The agent called a host tool the client answers. */
    "data": ToolCallRequestSchema,
    "type": z.literal("toolCallRequested"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** A host tool call the client answers was answered, rejected or cancelled. */
    "data": ToolCallResolvedSchema,
    "type": z.literal("toolCallResolved"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /** The session goes on with another agent (`POST /sessions/{id}/handover`). */
    "data": SessionHandedOverSchema,
    "type": z.literal("sessionHandedOver"),
    ...UniversalEventShape,
  }),
  z.looseObject({
    /**
     * A stored event this build cannot read: corrupt, or written by a newer build. It
     * keeps its place (sequence) in the log and carries what was stored, unchanged.
     */
    "data": UnknownEventSchema,
    "type": z.literal("unknown"),
    ...UniversalEventShape,
  }),
]);

/** Body of `GET /sessions/{id}/events`. */
export const EventsResponseSchema: z.ZodType<Schemas["EventsResponse"]> = z.looseObject({
  /** Events with `sequence > offset`, oldest first. */
  "events": z.array(UniversalEventSchema),
  /** True when more events exist after the last one returned. */
  "hasMore": z.boolean(),
});

/** What a directory entry is. A symlink is reported as itself, never followed. */
export const FileKindSchema: z.ZodType<Schemas["FileKind"]> = z.enum(["file","directory","symlink","other"]);

/** One file, directory or link in a workspace. */
export const FileEntrySchema: z.ZodType<Schemas["FileEntry"]> = z.looseObject({
  /** What it is. */
  "kind": FileKindSchema,
  /** Its permission bits, e.g. `420` (`0o644`). */
  "mode": z.number().int().min(0),
  /** When its content last changed. */
  "modifiedAt": z.iso.datetime({ offset: true }),
  /** Its name (the path's last component; empty for the working directory itself). */
  "name": z.string(),
  /** Its path, relative to the session's working directory. */
  "path": z.string(),
  /** Its size in bytes (a symlink's: the length of its target). */
  "size": z.number().int().min(0),
  /** A symlink's target, as written in the link. */
  "target": z.string().nullable().optional(),
});

/** `GET /sessions/{id}/files`: a directory's entries, depth first in name order. */
export const FileListingSchema: z.ZodType<Schemas["FileListing"]> = z.looseObject({
  /** How many levels below it were listed. */
  "depth": z.number().int().min(0),
  /** Its entries, each directory followed by its own entries (down to `depth`). */
  "entries": z.array(FileEntrySchema),
  /** The directory listed (relative to the working directory; empty: the directory itself). */
  "path": z.string(),
  /** Whether entries were left out because the listing reached its limit. */
  "truncated": z.boolean(),
});

/** A session store backend. */
export const StoreBackendSchema: z.ZodType<Schemas["StoreBackend"]> = z.enum(["sqlite","postgres"]);

/** Whether the session store can write. */
export const StoreStatusSchema: z.ZodType<Schemas["StoreStatus"]> = z.enum(["ok","full","unavailable"]);

/** Which session store the daemon uses and whether it can write. */
export const StoreHealthSchema: z.ZodType<Schemas["StoreHealth"]> = z.looseObject({
  /** `sqlite` (the embedded default) or `postgres`. */
  "backend": StoreBackendSchema,
  /** `ok`, or why writes fail right now. */
  "status": StoreStatusSchema,
});

/** Body of `GET /health`. */
export const HealthResponseSchema: z.ZodType<Schemas["HealthResponse"]> = z.looseObject({
  /** Always `ok` when the daemon answers. */
  "status": z.string(),
  /** Whether the session store can write. */
  "store": StoreHealthSchema,
  /** The daemon's version. */
  "version": z.string(),
});

/**
 * One step of an install, streamed as `progress` frames by `POST /agents/{agent}/install`
 * when asked for `text/event-stream`.
 */
export const InstallProgressSchema: z.ZodType<Schemas["InstallProgress"]> = z.discriminatedUnion("phase", [
  z.looseObject({
    "phase": z.literal("waiting"),
  }),
  z.looseObject({
    "phase": z.literal("resolving"),
    /** The version asked for (`pinned`, `latest` or a version). */
    "requested": z.string(),
  }),
  z.looseObject({
    /** Bytes received so far. */
    "bytes": z.number().int().min(0),
    "phase": z.literal("downloading"),
    /** Its size, when announced. */
    "total": z.number().int().min(0).nullable().optional(),
    /** Its URL. */
    "url": z.string(),
    /** The agent version. */
    "version": z.string(),
  }),
  z.looseObject({
    "phase": z.literal("verifying"),
    /** The agent version. */
    "version": z.string(),
  }),
]);

/**
 * Body of a successful `POST /agents/{agent}/install` (and the `installed` frame of its
 * event stream).
 */
export const InstallResponseSchema: z.ZodType<Schemas["InstallResponse"]> = z.looseObject({
  /** The agent. */
  "agent": AgentIdSchema,
  /** Whether the agent was already there (nothing was downloaded). */
  "alreadyInstalled": z.boolean(),
  /** How long the install took, in milliseconds. */
  "durationMs": z.number().int().min(0).optional(),
  /** The binary's path, when it has one. */
  "path": z.string().nullable().optional(),
  /** Bytes downloaded (0 when nothing was). */
  "size": z.number().int().min(0).optional(),
  "source": BinarySourceSchema.nullable().optional(),
  /** The installed version, when known. */
  "version": z.string().nullable().optional(),
});

/** One model an agent can use. */
export const ModelInfoSchema: z.ZodType<Schemas["ModelInfo"]> = z.looseObject({
  /** The variant used when none is given. */
  "defaultVariant": z.string().nullable().optional(),
  /** Model id to pass as `model`. */
  "id": z.string(),
  /** Display name. */
  "name": z.string(),
  /** Variants to pass as `variant` (e.g. reasoning effort). */
  "variants": z.array(z.string()).optional(),
});

/** Body of `GET /agents/{agent}/models`. */
export const ModelsResponseSchema: z.ZodType<Schemas["ModelsResponse"]> = z.looseObject({
  /** The model used when none is given. */
  "defaultModel": z.string().nullable().optional(),
  /** The models. */
  "models": z.array(ModelInfoSchema),
});

/** One agent mode (what the agent does: build, plan, ...). */
export const AgentModeInfoSchema: z.ZodType<Schemas["AgentModeInfo"]> = z.looseObject({
  /** What the mode does. */
  "description": z.string(),
  /** Mode id to pass as `agentMode`. */
  "id": z.string(),
  /** Display name. */
  "name": z.string(),
});

/** Body of `GET /agents/{agent}/modes`. */
export const ModesResponseSchema: z.ZodType<Schemas["ModesResponse"]> = z.looseObject({
  /** The mode used when none is given. */
  "defaultMode": z.string().nullable().optional(),
  /** Agent modes. */
  "modes": z.array(AgentModeInfoSchema),
  /** Permission modes the agent supports. */
  "permissionModes": z.array(PermissionModeSchema),
});

/** An RFC 7807 problem details body (`application/problem+json`). */
export const ProblemDetailsSchema: z.ZodType<Schemas["ProblemDetails"]> = z.looseObject({
  "agentError": AgentErrorSchema.nullable().optional(),
  /** What happened this time. */
  "detail": z.string(),
  /** The request path. */
  "instance": z.string().nullable().optional(),
  /** HTTP status code. */
  "status": z.number().int().min(0),
  /** Short summary of the kind. */
  "title": z.string(),
  /** A URI naming the error kind; stable per kind. */
  "type": z.string(),
});

/** Where a long-running process stands. */
export const ProcessStatusSchema: z.ZodType<Schemas["ProcessStatus"]> = z.enum(["running","exited"]);

/** A long-running process of a session. */
export const ProcessInfoSchema: z.ZodType<Schemas["ProcessInfo"]> = z.looseObject({
  /** Its arguments. */
  "args": z.array(z.string()),
  /** The program. */
  "command": z.string(),
  /** Its working directory, relative to the session's. */
  "cwd": z.string(),
  /** When it ended. */
  "endedAt": z.iso.datetime({ offset: true }).nullable().optional(),
  /** Its exit code, once it exited. */
  "exitCode": z.number().int().nullable().optional(),
  /** The sequence of its last log chunk (0: none yet). */
  "lastSequence": z.number().int().min(0),
  /** Its operating-system process id (also its process group's). */
  "pid": z.number().int().min(0),
  /** Its id in the session (what the routes take). */
  "processId": z.string(),
  /** The signal that ended it, if one did. */
  "signal": z.number().int().nullable().optional(),
  /** When it started. */
  "startedAt": z.iso.datetime({ offset: true }),
  /** Running or exited. */
  "status": ProcessStatusSchema,
  /** Whether it runs on a pseudo-terminal (`GET .../terminal` reaches it). */
  "tty": z.boolean(),
});

/** `GET /sessions/{id}/processes`. */
export const ProcessListSchema: z.ZodType<Schemas["ProcessList"]> = z.looseObject({
  /** The session's processes, oldest first (running and exited, until deleted). */
  "processes": z.array(ProcessInfoSchema),
});

/** Which output a log chunk came from. */
export const LogStreamSchema: z.ZodType<Schemas["LogStream"]> = z.enum(["stdout","stderr"]);

/** A piece of a process's output, as it was read. */
export const LogChunkSchema: z.ZodType<Schemas["LogChunk"]> = z.looseObject({
  /** The text (UTF-8; invalid bytes replaced). */
  "data": z.string(),
  /** Its place in the process's log: from 1, contiguous (the SSE frame's `id`). */
  "sequence": z.number().int().min(0),
  /** stdout or stderr. */
  "stream": LogStreamSchema,
  /** When it was read. */
  "time": z.iso.datetime({ offset: true }),
});

/** `GET /sessions/{id}/processes/{processId}/logs`: the log after `offset`. */
export const ProcessLogsSchema: z.ZodType<Schemas["ProcessLogs"]> = z.looseObject({
  /** The chunks with `sequence > offset` still kept, in order. */
  "chunks": z.array(LogChunkSchema),
  /**
   * The first sequence still kept; chunks before it were dropped to keep the log
   * within `--process-log-bytes` (a reader asking for them gets what follows).
   */
  "firstKept": z.number().int().min(0),
  /** The process as it stands (`status` `exited`: no chunk will follow these). */
  "process": ProcessInfoSchema,
});

/** `POST /sessions/{id}/processes/run`: how a process ended and what it wrote. */
export const ProcessOutputSchema: z.ZodType<Schemas["ProcessOutput"]> = z.looseObject({
  /** How long it ran, in milliseconds. */
  "durationMs": z.number().int().min(0),
  /** Its exit code, when it exited. */
  "exitCode": z.number().int().nullable().optional(),
  /** The signal that ended it, when one did. */
  "signal": z.number().int().nullable().optional(),
  /** What it wrote to stderr (as UTF-8; invalid bytes replaced). */
  "stderr": z.string(),
  /** Whether stderr went past `maxOutputBytes`. */
  "stderrTruncated": z.boolean(),
  /** What it wrote to stdout (as UTF-8; invalid bytes replaced). */
  "stdout": z.string(),
  /** Whether stdout went past `maxOutputBytes` (the rest was dropped). */
  "stdoutTruncated": z.boolean(),
  /** Whether it was killed for running past `timeoutMs`. */
  "timedOut": z.boolean(),
});

/** Body answering `POST /sessions/{id}/messages` (202). */
export const SendMessageResponseSchema: z.ZodType<Schemas["SendMessageResponse"]> = z.looseObject({
  /** The turn the message started. */
  "turnId": z.string(),
});

/** A session's creation record, as a bundle carries it. */
export const ExportedSessionSchema: z.ZodType<Schemas["ExportedSession"]> = z.looseObject({
  /** The agent. */
  "agent": AgentIdSchema,
  /** Agent mode. */
  "agentMode": z.string().nullable().optional(),
  /** The agent version the session asked for. */
  "agentVersion": z.string().nullable().optional(),
  /** When it was created. */
  "createdAt": z.iso.datetime({ offset: true }),
  /** The working directory it ran in. */
  "cwd": z.string(),
  /** Whether the agent acts without asking. */
  "dangerouslySkipPermissions": z.boolean().optional(),
  /** Model. */
  "model": z.string().nullable().optional(),
  /** Permission mode. */
  "permissionMode": PermissionModeSchema,
  /**
   * Its policy (the `policy` fields of the create request it was made with: system
   * prompt, tools, turn limit, MCP servers, env, host tools), with every value that may
   * be secret emptied: MCP servers' `env` and `headers`, the session `env`.
   */
  "policy": z.looseObject({}).optional(),
  /** The session id on the daemon that exported it. */
  "sessionId": z.string(),
  /** Model variant. */
  "variant": z.string().nullable().optional(),
});

/** How a [`NativeFile`]'s bytes are written. */
export const FileEncodingSchema: z.ZodType<Schemas["FileEncoding"]> = z.enum(["utf8","base64"]);

/** One file of an agent's native state. */
export const NativeFileSchema: z.ZodType<Schemas["NativeFile"]> = z.looseObject({
  /** The file's bytes, as `encoding` says. */
  "content": z.string(),
  /** How `content` is written. */
  "encoding": FileEncodingSchema,
  /**
   * What the file is to its agent (e.g. `transcript.jsonl`, `rollout.jsonl`,
   * `export.json`, `session.jsonl`).
   */
  "name": z.string().min(1).max(128),
  /** Hex SHA-256 of the file's bytes (decoded). */
  "sha256": z.string().regex(new RegExp("^[0-9a-f]{64}$")),
});

/**
 * What an agent keeps to resume a conversation: its own session id and the files that
 * hold the conversation, each by role (not by path: an importing daemon files them where
 * its agent looks, for the new working directory).
 */
export const NativeBundleSchema: z.ZodType<Schemas["NativeBundle"]> = z.looseObject({
  /** The agent the state belongs to. */
  "agent": AgentIdSchema,
  /** The working directory the files were written for. */
  "cwd": z.string(),
  /** The files. */
  "files": z.array(NativeFileSchema).optional(),
  /** The agent's own session (thread) id. */
  "nativeSessionId": z.string().nullable().optional(),
});

/**
 * A session as one JSON document: its record, the agent's native state and the universal
 * event log. Holds no credential: neither the session's `token` nor the secret values of
 * its policy (MCP servers' `env` and `headers`, the session `env`) travel.
 */
export const SessionBundleSchema: z.ZodType<Schemas["SessionBundle"]> = z.looseObject({
  /** How many events `events` holds. */
  "eventCount": z.number().int().min(0),
  /** The universal event log, from sequence 1, contiguous. */
  "events": z.array(UniversalEventSchema),
  /**
   * Hex SHA-256 over the events as written in the bundle: each event's JSON text
   * followed by a newline (`\n`), in order.
   */
  "eventsSha256": z.string(),
  /** When the bundle was written. */
  "exportedAt": z.iso.datetime({ offset: true }),
  /** The bundle format ([`BUNDLE_FORMAT`]). */
  "format": z.number().int().min(0),
  "native": NativeBundleSchema.nullable().optional(),
  /** How the session was created (as it stands after any handover). */
  "session": ExportedSessionSchema,
});

/** Where a session stands. */
export const SessionStatusSchema: z.ZodType<Schemas["SessionStatus"]> = z.enum(["idle","running","ended"]);

/** One session as seen by `GET /sessions` and `GET /sessions/{id}`. */
export const SessionInfoSchema: z.ZodType<Schemas["SessionInfo"]> = z.looseObject({
  /** The agent. */
  "agent": AgentIdSchema,
  /** Agent mode, when set. */
  "agentMode": z.string().nullable().optional(),
  /** When the session was created. */
  "createdAt": z.iso.datetime({ offset: true }),
  /** The running turn, if any. */
  "currentTurnId": z.string().nullable().optional(),
  /** Working directory. */
  "cwd": z.string(),
  "endReason": SessionEndReasonSchema.nullable().optional(),
  /** Number of events in the log (= the last sequence). */
  "eventCount": z.number().int().min(0),
  /** Model, when set. */
  "model": z.string().nullable().optional(),
  /** The agent's own session id, once known. */
  "nativeSessionId": z.string().nullable().optional(),
  /** Permission requests waiting for a reply. */
  "pendingPermissions": z.array(PermissionRequestSchema),
  /** Question requests waiting for a reply. */
  "pendingQuestions": z.array(QuestionRequestSchema),
  /** Host tool calls waiting for the client's result or rejection. */
  "pendingToolCalls": z.array(ToolCallRequestSchema).optional(),
  /** Permission mode. */
  "permissionMode": PermissionModeSchema,
  /** The session id. */
  "sessionId": z.string(),
  /** Idle, running or ended. */
  "status": SessionStatusSchema,
  /**
   * When the session last changed: the `time` of the last event in its log (its
   * `createdAt` while it has none).
   */
  "updatedAt": z.iso.datetime({ offset: true }),
  /** Variant, when set. */
  "variant": z.string().nullable().optional(),
});

/** A stored session whose record this build cannot read. */
export const UnreadableSessionSchema: z.ZodType<Schemas["UnreadableSession"]> = z.looseObject({
  /** When the session was created. */
  "createdAt": z.iso.datetime({ offset: true }),
  /** Why the record cannot be read. */
  "error": z.string(),
  /** Number of events in its log. */
  "eventCount": z.number().int().min(0),
  /** The session id. */
  "sessionId": z.string(),
});

/** Body of `GET /sessions`: one page of sessions, oldest first. */
export const SessionListResponseSchema: z.ZodType<Schemas["SessionListResponse"]> = z.looseObject({
  /** Pass as `cursor` to get the next page; absent on the last page. */
  "nextCursor": z.string().nullable().optional(),
  /** The sessions of this page, oldest first. */
  "sessions": z.array(SessionInfoSchema),
  /**
   * Sessions of this page whose stored record this build cannot read (corrupt, or
   * written by a newer build). Their events stay readable; their ids stay taken.
   * Only listed when no `status` filter is given.
   */
  "unreadable": z.array(UnreadableSessionSchema).optional(),
});

/**
 * `POST /sessions/{id}/processes/{processId}/terminal-ticket`: what opens the terminal's
 * WebSocket without the daemon's token in a URL.
 */
export const TerminalTicketSchema: z.ZodType<Schemas["TerminalTicket"]> = z.looseObject({
  /** When it stops being accepted. */
  "expiresAt": z.iso.datetime({ offset: true }),
  /** The WebSocket's path with the ticket, relative to the daemon's address. */
  "path": z.string(),
  /**
   * The ticket: the `ticket` query parameter of `GET .../terminal`, good for one
   * connection to this process until `expiresAt`.
   */
  "ticket": z.string(),
});

/** Why a changed file comes without a diff. */
export const DiffOmittedSchema: z.ZodType<Schemas["DiffOmitted"]> = z.enum(["binary","tooLarge","turnLimit","modeOnly","unreadable"]);

/** One file a turn changed. */
export const FileChangeSchema: z.ZodType<Schemas["FileChange"]> = z.looseObject({
  /**
   * Added (`add`), modified (`update`) or deleted (`delete`), as file change items
   * name them.
   */
  "change": FileChangeKindSchema,
  /**
   * A unified diff (`--- a/path`, `+++ b/path`, hunks with 3 lines of context), for
   * text.
   */
  "diff": z.string().nullable().optional(),
  "diffOmitted": DiffOmittedSchema.nullable().optional(),
  /** Its path relative to the workspace, `/`-separated. */
  "path": z.string(),
  /** Its size after the turn, when it exists. */
  "sizeAfter": z.number().int().min(0).nullable().optional(),
  /** Its size before the turn, when it existed. */
  "sizeBefore": z.number().int().min(0).nullable().optional(),
  /**
   * Whether it is (or was) a symlink rather than a regular file; a symlink's diff is
   * of its target.
   */
  "symlink": z.boolean().optional(),
});

/**
 * `GET /sessions/{id}/turns/{turnId}/changes`: what the turn changed in the workspace,
 * whichever agent made the changes (the workspace as the turn started against the
 * workspace as it ended; `.git`, `node_modules` and `.gitignore`d paths left out).
 */
export const TurnChangesSchema: z.ZodType<Schemas["TurnChanges"]> = z.looseObject({
  /** How many files it added, modified and deleted (what its `turnEnded` carries). */
  "counts": ChangeCountsSchema,
  /** The changed files, by path. */
  "files": z.array(FileChangeSchema),
  /** When the workspace was looked at as the turn ended. */
  "takenAt": z.iso.datetime({ offset: true }),
  /** The turn. */
  "turnId": z.string(),
});

/** `POST /sessions/{id}/files/upload`: what an archive put into the workspace. */
export const UploadSummarySchema: z.ZodType<Schemas["UploadSummary"]> = z.looseObject({
  /** Bytes of file content written. */
  "bytes": z.number().int().min(0),
  /** Directory entries of the archive unpacked (created, or already there). */
  "directories": z.number().int().min(0),
  /** Regular files written. */
  "files": z.number().int().min(0),
  /** The directory it was extracted into (relative to the working directory). */
  "path": z.string(),
  /** Symbolic links created. */
  "symlinks": z.number().int().min(0),
});

/** Where a delivery stands. */
export const DeliveryStatusSchema: z.ZodType<Schemas["DeliveryStatus"]> = z.enum(["pending","delivered","failed"]);

/** Event type names, as they appear in `type` and in SSE `event:` lines. */
export const EventTypeSchema: z.ZodType<Schemas["EventType"]> = z.enum(["sessionStarted","sessionEnded","turnStarted","turnEnded","itemStarted","itemDelta","itemCompleted","error","permissionAsked","permissionResolved","questionAsked","questionResolved","toolCallRequested","toolCallResolved","sessionHandedOver","unknown"]);

/** One event's delivery to one webhook. */
export const WebhookDeliverySchema: z.ZodType<Schemas["WebhookDelivery"]> = z.looseObject({
  /** Attempts made so far. */
  "attempts": z.number().int().min(0),
  /** When the event was queued for delivery. */
  "createdAt": z.iso.datetime({ offset: true }),
  /** The event's type. */
  "eventType": EventTypeSchema,
  /** When it was delivered, or given up. */
  "finishedAt": z.iso.datetime({ offset: true }).nullable().optional(),
  /** Its id: `<sessionId>:<sequence>`, the `Webhook-Id` header of every attempt. */
  "id": z.string(),
  /** Why the last attempt failed, when it did. */
  "lastError": z.string().nullable().optional(),
  /** The HTTP status of the last attempt, when the receiver answered. */
  "lastStatusCode": z.number().int().min(0).nullable().optional(),
  /** When the next attempt is due (pending deliveries). */
  "nextAttemptAt": z.iso.datetime({ offset: true }).nullable().optional(),
  /** The event's sequence in its session's log. */
  "sequence": z.number().int().min(0),
  /** The event's session. */
  "sessionId": z.string(),
  /** Where it stands. */
  "status": DeliveryStatusSchema,
  /** The webhook. */
  "webhookId": z.string(),
});

/** `GET /webhooks/{webhookId}/deliveries`: a page, oldest first. */
export const WebhookDeliveryListSchema: z.ZodType<Schemas["WebhookDeliveryList"]> = z.looseObject({
  /** The deliveries of this page. */
  "deliveries": z.array(WebhookDeliverySchema),
  /** Pass as `cursor` for the next page; absent on the last. */
  "nextCursor": z.string().nullable().optional(),
});

/** `GET /webhooks`. */
export const WebhookListSchema: z.ZodType<Schemas["WebhookList"]> = z.looseObject({
  /** Every webhook, the daemon-wide ones and the sessions' own, oldest first. */
  "webhooks": z.array(WebhookSchema),
});

/**
 * A frame of the event stream `POST /agents/{agent}/install` answers with `Accept: text/event-stream`
 * (operation `installAgent`), its `data` decoded from JSON; tagged by `event`.
 */
export const InstallAgentFrameSchema: z.ZodType<InstallAgentFrame> = z.discriminatedUnion("event", [
  z.strictObject({
    event: z.literal("progress"),
    data: InstallProgressSchema,
  }),
  z.strictObject({
    event: z.literal("installed"),
    data: InstallResponseSchema,
  }),
  z.strictObject({
    event: z.literal("error"),
    data: ProblemDetailsSchema,
  }),
]);

/** Every generated validator, by the name of its schema in the OpenAPI document. */
export const schemas: {
  readonly AgentCapabilities: typeof AgentCapabilitiesSchema;
  readonly CredentialKind: typeof CredentialKindSchema;
  readonly AgentCredentials: typeof AgentCredentialsSchema;
  readonly AgentId: typeof AgentIdSchema;
  readonly BinarySource: typeof BinarySourceSchema;
  readonly CapabilityProof: typeof CapabilityProofSchema;
  readonly InstalledVersion: typeof InstalledVersionSchema;
  readonly McpTransport: typeof McpTransportSchema;
  readonly SystemPromptMode: typeof SystemPromptModeSchema;
  readonly ToolRestriction: typeof ToolRestrictionSchema;
  readonly TurnLimiter: typeof TurnLimiterSchema;
  readonly PolicySupport: typeof PolicySupportSchema;
  readonly AgentInfo: typeof AgentInfoSchema;
  readonly AgentsResponse: typeof AgentsResponseSchema;
  readonly CancelResponse: typeof CancelResponseSchema;
  readonly CreateSessionResponse: typeof CreateSessionResponseSchema;
  readonly Webhook: typeof WebhookSchema;
  readonly CreatedWebhook: typeof CreatedWebhookSchema;
  readonly LoginEntryKind: typeof LoginEntryKindSchema;
  readonly LoginEntry: typeof LoginEntrySchema;
  readonly StoredLoginInfo: typeof StoredLoginInfoSchema;
  readonly CredentialsResponse: typeof CredentialsResponseSchema;
  readonly AgentError: typeof AgentErrorSchema;
  readonly ItemDelta: typeof ItemDeltaSchema;
  readonly FileChangeKind: typeof FileChangeKindSchema;
  readonly McpToolRef: typeof McpToolRefSchema;
  readonly PlanEntryStatus: typeof PlanEntryStatusSchema;
  readonly PlanEntry: typeof PlanEntrySchema;
  readonly ContentPart: typeof ContentPartSchema;
  readonly ItemKind: typeof ItemKindSchema;
  readonly ItemRole: typeof ItemRoleSchema;
  readonly ItemStatus: typeof ItemStatusSchema;
  readonly Item: typeof ItemSchema;
  readonly ItemEvent: typeof ItemEventSchema;
  readonly PermissionKind: typeof PermissionKindSchema;
  readonly PermissionRequest: typeof PermissionRequestSchema;
  readonly PermissionOutcome: typeof PermissionOutcomeSchema;
  readonly PermissionResolved: typeof PermissionResolvedSchema;
  readonly QuestionOption: typeof QuestionOptionSchema;
  readonly Question: typeof QuestionSchema;
  readonly QuestionRequest: typeof QuestionRequestSchema;
  readonly QuestionOutcome: typeof QuestionOutcomeSchema;
  readonly QuestionResolved: typeof QuestionResolvedSchema;
  readonly SessionEndReason: typeof SessionEndReasonSchema;
  readonly SessionEnded: typeof SessionEndedSchema;
  readonly SessionHandedOver: typeof SessionHandedOverSchema;
  readonly PermissionMode: typeof PermissionModeSchema;
  readonly SessionStarted: typeof SessionStartedSchema;
  readonly ToolCallRequest: typeof ToolCallRequestSchema;
  readonly ToolCallOutcome: typeof ToolCallOutcomeSchema;
  readonly ToolCallResolved: typeof ToolCallResolvedSchema;
  readonly ChangeCounts: typeof ChangeCountsSchema;
  readonly StopReason: typeof StopReasonSchema;
  readonly Usage: typeof UsageSchema;
  readonly TurnEnded: typeof TurnEndedSchema;
  readonly TurnStarted: typeof TurnStartedSchema;
  readonly UnknownReason: typeof UnknownReasonSchema;
  readonly UnknownEvent: typeof UnknownEventSchema;
  readonly EventPayload: typeof EventPayloadSchema;
  readonly EventSource: typeof EventSourceSchema;
  readonly UniversalEvent: typeof UniversalEventSchema;
  readonly EventsResponse: typeof EventsResponseSchema;
  readonly FileKind: typeof FileKindSchema;
  readonly FileEntry: typeof FileEntrySchema;
  readonly FileListing: typeof FileListingSchema;
  readonly StoreBackend: typeof StoreBackendSchema;
  readonly StoreStatus: typeof StoreStatusSchema;
  readonly StoreHealth: typeof StoreHealthSchema;
  readonly HealthResponse: typeof HealthResponseSchema;
  readonly InstallProgress: typeof InstallProgressSchema;
  readonly InstallResponse: typeof InstallResponseSchema;
  readonly ModelInfo: typeof ModelInfoSchema;
  readonly ModelsResponse: typeof ModelsResponseSchema;
  readonly AgentModeInfo: typeof AgentModeInfoSchema;
  readonly ModesResponse: typeof ModesResponseSchema;
  readonly ProblemDetails: typeof ProblemDetailsSchema;
  readonly ProcessStatus: typeof ProcessStatusSchema;
  readonly ProcessInfo: typeof ProcessInfoSchema;
  readonly ProcessList: typeof ProcessListSchema;
  readonly LogStream: typeof LogStreamSchema;
  readonly LogChunk: typeof LogChunkSchema;
  readonly ProcessLogs: typeof ProcessLogsSchema;
  readonly ProcessOutput: typeof ProcessOutputSchema;
  readonly SendMessageResponse: typeof SendMessageResponseSchema;
  readonly ExportedSession: typeof ExportedSessionSchema;
  readonly FileEncoding: typeof FileEncodingSchema;
  readonly NativeFile: typeof NativeFileSchema;
  readonly NativeBundle: typeof NativeBundleSchema;
  readonly SessionBundle: typeof SessionBundleSchema;
  readonly SessionStatus: typeof SessionStatusSchema;
  readonly SessionInfo: typeof SessionInfoSchema;
  readonly UnreadableSession: typeof UnreadableSessionSchema;
  readonly SessionListResponse: typeof SessionListResponseSchema;
  readonly TerminalTicket: typeof TerminalTicketSchema;
  readonly DiffOmitted: typeof DiffOmittedSchema;
  readonly FileChange: typeof FileChangeSchema;
  readonly TurnChanges: typeof TurnChangesSchema;
  readonly UploadSummary: typeof UploadSummarySchema;
  readonly DeliveryStatus: typeof DeliveryStatusSchema;
  readonly EventType: typeof EventTypeSchema;
  readonly WebhookDelivery: typeof WebhookDeliverySchema;
  readonly WebhookDeliveryList: typeof WebhookDeliveryListSchema;
  readonly WebhookList: typeof WebhookListSchema;
} = {
  AgentCapabilities: AgentCapabilitiesSchema,
  CredentialKind: CredentialKindSchema,
  AgentCredentials: AgentCredentialsSchema,
  AgentId: AgentIdSchema,
  BinarySource: BinarySourceSchema,
  CapabilityProof: CapabilityProofSchema,
  InstalledVersion: InstalledVersionSchema,
  McpTransport: McpTransportSchema,
  SystemPromptMode: SystemPromptModeSchema,
  ToolRestriction: ToolRestrictionSchema,
  TurnLimiter: TurnLimiterSchema,
  PolicySupport: PolicySupportSchema,
  AgentInfo: AgentInfoSchema,
  AgentsResponse: AgentsResponseSchema,
  CancelResponse: CancelResponseSchema,
  CreateSessionResponse: CreateSessionResponseSchema,
  Webhook: WebhookSchema,
  CreatedWebhook: CreatedWebhookSchema,
  LoginEntryKind: LoginEntryKindSchema,
  LoginEntry: LoginEntrySchema,
  StoredLoginInfo: StoredLoginInfoSchema,
  CredentialsResponse: CredentialsResponseSchema,
  AgentError: AgentErrorSchema,
  ItemDelta: ItemDeltaSchema,
  FileChangeKind: FileChangeKindSchema,
  McpToolRef: McpToolRefSchema,
  PlanEntryStatus: PlanEntryStatusSchema,
  PlanEntry: PlanEntrySchema,
  ContentPart: ContentPartSchema,
  ItemKind: ItemKindSchema,
  ItemRole: ItemRoleSchema,
  ItemStatus: ItemStatusSchema,
  Item: ItemSchema,
  ItemEvent: ItemEventSchema,
  PermissionKind: PermissionKindSchema,
  PermissionRequest: PermissionRequestSchema,
  PermissionOutcome: PermissionOutcomeSchema,
  PermissionResolved: PermissionResolvedSchema,
  QuestionOption: QuestionOptionSchema,
  Question: QuestionSchema,
  QuestionRequest: QuestionRequestSchema,
  QuestionOutcome: QuestionOutcomeSchema,
  QuestionResolved: QuestionResolvedSchema,
  SessionEndReason: SessionEndReasonSchema,
  SessionEnded: SessionEndedSchema,
  SessionHandedOver: SessionHandedOverSchema,
  PermissionMode: PermissionModeSchema,
  SessionStarted: SessionStartedSchema,
  ToolCallRequest: ToolCallRequestSchema,
  ToolCallOutcome: ToolCallOutcomeSchema,
  ToolCallResolved: ToolCallResolvedSchema,
  ChangeCounts: ChangeCountsSchema,
  StopReason: StopReasonSchema,
  Usage: UsageSchema,
  TurnEnded: TurnEndedSchema,
  TurnStarted: TurnStartedSchema,
  UnknownReason: UnknownReasonSchema,
  UnknownEvent: UnknownEventSchema,
  EventPayload: EventPayloadSchema,
  EventSource: EventSourceSchema,
  UniversalEvent: UniversalEventSchema,
  EventsResponse: EventsResponseSchema,
  FileKind: FileKindSchema,
  FileEntry: FileEntrySchema,
  FileListing: FileListingSchema,
  StoreBackend: StoreBackendSchema,
  StoreStatus: StoreStatusSchema,
  StoreHealth: StoreHealthSchema,
  HealthResponse: HealthResponseSchema,
  InstallProgress: InstallProgressSchema,
  InstallResponse: InstallResponseSchema,
  ModelInfo: ModelInfoSchema,
  ModelsResponse: ModelsResponseSchema,
  AgentModeInfo: AgentModeInfoSchema,
  ModesResponse: ModesResponseSchema,
  ProblemDetails: ProblemDetailsSchema,
  ProcessStatus: ProcessStatusSchema,
  ProcessInfo: ProcessInfoSchema,
  ProcessList: ProcessListSchema,
  LogStream: LogStreamSchema,
  LogChunk: LogChunkSchema,
  ProcessLogs: ProcessLogsSchema,
  ProcessOutput: ProcessOutputSchema,
  SendMessageResponse: SendMessageResponseSchema,
  ExportedSession: ExportedSessionSchema,
  FileEncoding: FileEncodingSchema,
  NativeFile: NativeFileSchema,
  NativeBundle: NativeBundleSchema,
  SessionBundle: SessionBundleSchema,
  SessionStatus: SessionStatusSchema,
  SessionInfo: SessionInfoSchema,
  UnreadableSession: UnreadableSessionSchema,
  SessionListResponse: SessionListResponseSchema,
  TerminalTicket: TerminalTicketSchema,
  DiffOmitted: DiffOmittedSchema,
  FileChange: FileChangeSchema,
  TurnChanges: TurnChangesSchema,
  UploadSummary: UploadSummarySchema,
  DeliveryStatus: DeliveryStatusSchema,
  EventType: EventTypeSchema,
  WebhookDelivery: WebhookDeliverySchema,
  WebhookDeliveryList: WebhookDeliveryListSchema,
  WebhookList: WebhookListSchema,
};

/**
 * The validator of each operation's success body, by operationId: `null` when the
 * operation answers no body (204), bytes (a file, an archive) or only streams (see
 * `streamSchemas`); `z.unknown()` when the spec gives the body no schema.
 */
export const responseSchemas: {
  readonly listAgents: typeof AgentsResponseSchema;
  readonly installAgent: typeof InstallResponseSchema;
  readonly agentModels: typeof ModelsResponseSchema;
  readonly agentModes: typeof ModesResponseSchema;
  readonly listCredentials: typeof CredentialsResponseSchema;
  readonly getCredential: typeof StoredLoginInfoSchema;
  readonly putCredential: typeof StoredLoginInfoSchema;
  readonly deleteCredential: null;
  readonly health: typeof HealthResponseSchema;
  readonly openapi: z.ZodUnknown;
  readonly listSessions: typeof SessionListResponseSchema;
  readonly getSession: typeof SessionInfoSchema;
  readonly createSession: typeof CreateSessionResponseSchema;
  readonly deleteSession: null;
  readonly cancelTurn: typeof CancelResponseSchema;
  readonly endSession: typeof SessionInfoSchema;
  readonly getEvents: typeof EventsResponseSchema;
  readonly streamEvents: null;
  readonly exportSession: typeof SessionBundleSchema;
  readonly listFiles: typeof FileListingSchema;
  readonly deleteFile: null;
  readonly archiveFiles: null;
  readonly readFile: null;
  readonly writeFile: typeof FileEntrySchema;
  readonly uploadFiles: typeof UploadSummarySchema;
  readonly handoverSession: typeof SessionInfoSchema;
  readonly importSession: typeof SessionInfoSchema;
  readonly sendMessage: typeof SendMessageResponseSchema;
  readonly replyPermission: null;
  readonly listProcesses: typeof ProcessListSchema;
  readonly startProcess: typeof ProcessInfoSchema;
  readonly runProcess: typeof ProcessOutputSchema;
  readonly getProcess: typeof ProcessInfoSchema;
  readonly deleteProcess: null;
  readonly killProcess: typeof ProcessInfoSchema;
  readonly processLogs: typeof ProcessLogsSchema;
  readonly stopProcess: typeof ProcessInfoSchema;
  readonly openTerminal: null;
  readonly createTerminalTicket: typeof TerminalTicketSchema;
  readonly rejectQuestion: null;
  readonly replyQuestion: null;
  readonly toolCallReject: null;
  readonly toolCallResult: null;
  readonly turnChanges: typeof TurnChangesSchema;
  readonly uiMessageStream: null;
  readonly listWebhooks: typeof WebhookListSchema;
  readonly createWebhook: typeof CreatedWebhookSchema;
  readonly getWebhook: typeof WebhookSchema;
  readonly deleteWebhook: null;
  readonly listWebhookDeliveries: typeof WebhookDeliveryListSchema;
} = {
  listAgents: AgentsResponseSchema,
  installAgent: InstallResponseSchema,
  agentModels: ModelsResponseSchema,
  agentModes: ModesResponseSchema,
  listCredentials: CredentialsResponseSchema,
  getCredential: StoredLoginInfoSchema,
  putCredential: StoredLoginInfoSchema,
  deleteCredential: null,
  health: HealthResponseSchema,
  openapi: z.unknown(),
  listSessions: SessionListResponseSchema,
  getSession: SessionInfoSchema,
  createSession: CreateSessionResponseSchema,
  deleteSession: null,
  cancelTurn: CancelResponseSchema,
  endSession: SessionInfoSchema,
  getEvents: EventsResponseSchema,
  streamEvents: null,
  exportSession: SessionBundleSchema,
  listFiles: FileListingSchema,
  deleteFile: null,
  archiveFiles: null,
  readFile: null,
  writeFile: FileEntrySchema,
  uploadFiles: UploadSummarySchema,
  handoverSession: SessionInfoSchema,
  importSession: SessionInfoSchema,
  sendMessage: SendMessageResponseSchema,
  replyPermission: null,
  listProcesses: ProcessListSchema,
  startProcess: ProcessInfoSchema,
  runProcess: ProcessOutputSchema,
  getProcess: ProcessInfoSchema,
  deleteProcess: null,
  killProcess: ProcessInfoSchema,
  processLogs: ProcessLogsSchema,
  stopProcess: ProcessInfoSchema,
  openTerminal: null,
  createTerminalTicket: TerminalTicketSchema,
  rejectQuestion: null,
  replyQuestion: null,
  toolCallReject: null,
  toolCallResult: null,
  turnChanges: TurnChangesSchema,
  uiMessageStream: null,
  listWebhooks: WebhookListSchema,
  createWebhook: CreatedWebhookSchema,
  getWebhook: WebhookSchema,
  deleteWebhook: null,
  listWebhookDeliveries: WebhookDeliveryListSchema,
};

/** The validator of one frame's `data` for each streaming operation, by operationId. */
export const streamSchemas: {
  readonly streamEvents: typeof UniversalEventSchema;
} = {
  streamEvents: UniversalEventSchema,
};

/**
 * The validator of a whole decoded frame (`{ event, data }`, `data` parsed from JSON) for
 * each operation whose event stream tags its frames by `event`, by operationId.
 */
export const streamFrameSchemas: {
  readonly installAgent: typeof InstallAgentFrameSchema;
} = {
  installAgent: InstallAgentFrameSchema,
};
