// Generated from ../../spec/openapi.json (sandbox-daemon 0.1.0) by openapi-typescript 7.13.0.
// Do not edit: run `npm run generate`. `npm run check:generated` fails when this file is stale.

export interface paths {
    "/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every known agent with install status and capabilities. */
        get: operations["listAgents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agents/{agent}/install": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Installs an agent: downloads the binary for this machine (the version asked for, else
         *     the daemon's default, pinned unless configured otherwise), verifies it and makes it the
         *     one new sessions use. A binary already here answers at once (unless `reinstall`); an
         *     install of the same agent already running is waited for, not repeated. Asked for
         *     `text/event-stream`, it streams `progress` frames, then one `installed` or `error` frame.
         */
        post: operations["installAgent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agents/{agent}/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The models an agent offers. */
        get: operations["agentModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/agents/{agent}/modes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent modes and permission modes an agent supports. */
        get: operations["agentModes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/credentials": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every stored login: its agent, the file a session's home gets, its entries' names,
         *     kinds and expiry, where it came from, when it was stored and last refreshed. Never a
         *     secret.
         */
        get: operations["listCredentials"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/credentials/{agent}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The login stored for an agent (never its secret). */
        get: operations["getCredential"];
        /**
         * Stores a login for an agent, replacing the one stored: its login file as the agent
         *     wrote it (`login`: Claude's `.credentials.json`, Codex's `auth.json`, OpenCode's
         *     `auth.json`, Amp's `secrets.json`, Pi's `auth.json`) or, for Claude, a long-lived
         *     `token`. Sessions with no `token` of their own, of a daemon whose environment has no
         *     credential for the agent, get it in their private home; what the agent refreshes there
         *     is written back. Kept in the daemon's data dir, mode 0600.
         */
        put: operations["putCredential"];
        post?: never;
        /**
         * Removes the login stored for an agent. Sessions running on it keep their copy until
         *     their agent stops.
         */
        delete: operations["deleteCredential"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness check; needs no token. Answers as soon as the daemon listens, whatever its
         *     store holds; `store.status` says whether the store can write.
         */
        get: operations["health"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The OpenAPI document of this API, as this daemon runs (with or without a token). */
        get: operations["openapi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The sessions of the store, oldest first, one page at a time (`nextCursor`). Sessions
         *     whose stored record this build cannot read are listed under `unreadable`.
         */
        get: operations["listSessions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One session: agent, status, pending permissions and questions, event count. */
        get: operations["getSession"];
        put?: never;
        /**
         * Creates a session with a client-chosen id and starts its agent: `201` with
         *     `healthy: true` when ready. An agent that cannot start is a problem whose `agentError`
         *     says why (the id stays free).
         */
        post: operations["createSession"];
        /** Removes a session and all its events (ending it first if it runs); its id becomes free. */
        delete: operations["deleteSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Interrupts the running turn (202); it ends with `turnEnded` stopReason `cancelled`. */
        post: operations["cancelTurn"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/end": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Ends a session: stops the agent, cancels what is pending and logs `sessionEnded`. The
         *     session and its events stay readable (`DELETE` removes them). Ending an ended session
         *     answers it as it is.
         */
        post: operations["endSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A page of events with `sequence > offset`, oldest first. */
        get: operations["getEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/events/sse": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Streams the log as Server-Sent Events: replays events after the offset (or
         *     `Last-Event-ID`), then follows live. Each frame has `id: <sequence>`,
         *     `event: <type>` and `data: <event JSON>`; keep-alive comments are sent while idle; the
         *     stream closes after `sessionEnded`. Works for any stored session, loaded or not (and,
         *     with a shared PostgreSQL store, for sessions another daemon runs).
         */
        get: operations["streamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The session as one JSON document (streamed): its record (without credentials or
         *     secret values), the agent's native state needed to resume it elsewhere (each file with
         *     its SHA-256), and the universal event log with its count and SHA-256. Refused while a
         *     turn runs.
         */
        get: operations["exportSession"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/files": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Lists a directory of the session's workspace, `depth` levels down, each directory
         *     followed by its entries in name order; symlinks are listed, not followed. At most
         *     10,000 entries (`truncated` says when more were left out).
         */
        get: operations["listFiles"];
        put?: never;
        post?: never;
        /**
         * Deletes a file, a symlink (never what it points to) or a directory (with its contents
         *     only when `recursive=true`) in the session's workspace.
         */
        delete: operations["deleteFile"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/files/archive": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A tar.gz snapshot of the workspace (or a directory in it), entries named relative to
         *     it. By default without `.git`, `node_modules` and what `.gitignore` leaves out (`all`
         *     takes everything), files over `maxFileBytes` left out and named in
         *     `X-Archive-Skipped-Paths`, and refused (409 `archive-too-large`) when the rest adds up
         *     to more than `maxBytes`. Symlinks are stored as links.
         */
        get: operations["archiveFiles"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/files/content": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A file's bytes. `Range: bytes=a-b` (or `a-`, or `-n`) answers that part (206); a
         *     range past the end answers 416; several ranges answer the whole file.
         */
        get: operations["readFile"];
        /**
         * Writes a file from the request body (any content type), atomically: the body goes to
         *     a temporary file beside it, renamed over the path once complete, so a reader sees the
         *     old content or the new, never a part. Missing parent directories are created. A file
         *     it replaces keeps its permission bits; a new one is created as the agents create
         *     theirs. At most `--max-upload-bytes` (512 MiB).
         */
        put: operations["writeFile"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/files/upload": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Unpacks a tar or tar.gz archive (told apart by its first bytes) into a directory of
         *     the workspace. Every entry is checked before anything is written: entries that are
         *     absolute or name `..`, device nodes, FIFOs, hard links and symlinks pointing outside
         *     the workspace are refused (422), as are archives over `--max-upload-entries` (100,000)
         *     or unpacking to more than `--max-upload-bytes` (413). Files and symlinks in the way
         *     are replaced; symlinks in the workspace are never written through to outside it.
         */
        post: operations["uploadFiles"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/handover": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Continues the session on another agent (or the same one afresh): the earlier turns
         *     become the new agent's own history (tool calls and results where it has a form for
         *     them, text where not), the log records `sessionHandedOver`, and the next message runs
         *     on the new agent. Refused while a turn runs. The session's permission mode and policy
         *     stay and are checked against the new agent as at creation.
         */
        post: operations["handoverSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/import": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Stores a bundle written by `GET /sessions/{id}/export` (on this or another daemon) as
         *     session `sessionId`: the event log keeps its sequences and continues contiguously, the
         *     agent's native state is filed where the agent looks for it here (for `cwd`, when it
         *     moved), and the next message resumes the agent with its memory. The agent is installed
         *     first when it is missing. Credentials do not travel: the session uses the daemon's, and
         *     the policy's secret values (MCP servers' `env` and `headers`, the session `env`) arrive
         *     empty.
         */
        post: operations["importSession"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/messages": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sends a user message, starting a turn (202). While a turn runs, another message is
         *     refused with 409 `turn-in-progress`; messages are never interleaved.
         */
        post: operations["sendMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/permissions/{permissionId}/reply": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Answers a permission request with `once`, `always` (remembered for the session) or
         *     `reject`.
         */
        post: operations["replyPermission"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The session's long-running processes, oldest first, running and exited (until deleted,
         *     or the session is).
         */
        get: operations["listProcesses"];
        put?: never;
        /**
         * Starts a long-running program in the session's workspace (as `run` does) and answers
         *     at once; its output is logged (`GET .../logs`, or followed as SSE) until it ends. It
         *     ends with the session and with the daemon.
         */
        post: operations["startProcess"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Runs a program in the session's workspace to its end and answers its exit and output:
         *     the agents' allow-listed environment (plus `env`), a private HOME, the agent user; its
         *     whole process group killed past `timeoutMs` or when the client goes away. Output past
         *     `maxOutputBytes` per stream is read and dropped (`stdoutTruncated`).
         */
        post: operations["runProcess"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes/{processId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One long-running process. */
        get: operations["getProcess"];
        put?: never;
        post?: never;
        /** Forgets an exited process and its log. */
        delete: operations["deleteProcess"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes/{processId}/kill": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Kills a process: SIGKILL to its process group (nothing if it has ended); for a
         *     terminal's process, to every process group on its terminal.
         */
        post: operations["killProcess"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes/{processId}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A process's log after `offset` (up to 1,000 chunks a page), or with `follow=true` an
         *     SSE stream: each chunk as `event: log` with its sequence as `id` (a reconnect with
         *     `Last-Event-ID` resumes after it, with no gap or duplicate), `event: gap` when chunks
         *     asked for were dropped to keep the log bounded (its `id` the last of them), and
         *     `event: exit` (the process) last.
         */
        get: operations["processLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes/{processId}/stop": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Asks a process to stop: SIGTERM to its process group (nothing if it has ended); a
         *     terminal's process is hung up first (SIGHUP), and every process group on its terminal
         *     is signalled.
         */
        post: operations["stopProcess"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes/{processId}/terminal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The process's terminal as a WebSocket. Binary frames carry bytes: the terminal's
         *     output from the daemon (first what its log still keeps, then live), input to it from
         *     the client. Text frames carry JSON (`TerminalMessage`): `input` and `resize` from the
         *     client, `exit` from the daemon when the process ends (it then closes the socket), and
         *     `error` for a frame it could not act on. Closing the socket leaves the process running.
         */
        get: operations["openTerminal"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/processes/{processId}/terminal-ticket": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Mints a ticket that opens the process's terminal once, within 30 seconds: a browser's
         *     WebSocket cannot send the `Authorization` header, and the daemon's token never goes in
         *     a URL.
         */
        post: operations["createTerminalTicket"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/questions/{questionId}/reject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Declines to answer a question request. The body is `{}` (or empty). */
        post: operations["rejectQuestion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/questions/{questionId}/reply": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Answers a question request: one array of selected option labels per question. */
        post: operations["replyQuestion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/tool-calls/{callId}/reject": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rejects a client host tool call: the model reads that the user rejected it (with the
         *     reason, when given).
         */
        post: operations["toolCallReject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/tool-calls/{callId}/result": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Gives a client host tool call its result: the agent's MCP call returns it to the model
         *     once it is durable.
         */
        post: operations["toolCallResult"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/turns/{turnId}/changes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The files a turn added, modified and deleted in the session's workspace, whichever
         *     agent made the changes, with unified diffs of text: the workspace as the turn started
         *     against the workspace as it ended (`.git`, `node_modules` and `.gitignore`d paths left
         *     out). Its `counts` are the ones its `turnEnded` carries.
         */
        get: operations["turnChanges"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/sessions/{sessionId}/ui-stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A turn of the session as the Vercel AI SDK's UI message stream protocol (v1), the
         *     assistant message `useChat` (`ai` 7) builds: replayed from the turn's `turnStarted`,
         *     then followed live until its `turnEnded`. The stream is a pure function of the log, so
         *     reading it again (a reconnect) gives the same chunks, byte for byte, under the same
         *     `messageId`. Without `turnId`, the running turn, or 204 when none runs (the AI SDK's
         *     "nothing to resume").
         */
        get: operations["uiMessageStream"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every webhook, the daemon-wide ones and the sessions' own, oldest first (never their
         *     secrets).
         */
        get: operations["listWebhooks"];
        put?: never;
        /**
         * Registers a webhook for every session's events of the listed types. Each is `POST`ed
         *     to `url` as a `WebhookPayload`, at least once: signed in `Sandbox-Daemon-Signature`
         *     (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the secret), keyed in
         *     `Webhook-Id` and `Idempotency-Key` (`<sessionId>:<sequence>`, the same on every
         *     attempt), and retried with back-off from the store's outbox until the receiver answers
         *     2xx (surviving restarts) or 24 hours have passed. A secret the request does not give
         *     is made and answered once.
         */
        post: operations["createWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One webhook (never its secret). */
        get: operations["getWebhook"];
        put?: never;
        post?: never;
        /** Deletes a webhook with its deliveries: what is still pending is not attempted again. */
        delete: operations["deleteWebhook"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/{webhookId}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A webhook's deliveries, oldest first, one page at a time: each event's status
         *     (`pending`, `delivered`, `failed`), attempts, last answer or error, and next attempt.
         *     Finished deliveries are kept for 7 days.
         */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description Which universal features an agent supports. Every flag is backed by tests of the
         *     agent's real CLI (or, for the mock, of the mock itself).
         */
        AgentCapabilities: {
            /** @description Agent modes (e.g. build / plan). */
            agentModes: boolean;
            /** @description Cancelling a running turn. */
            cancel: boolean;
            /** @description `commandExecution` items. */
            commandExecution: boolean;
            /** @description `fileChange` items. */
            fileChanges: boolean;
            /**
             * @description `hostTools`: the agent calls the host's tools on the daemon's MCP server, answered
             *     by the client or an http endpoint, approved first or ending the turn as asked.
             */
            hostTools?: boolean;
            /** @description Messages with images (see `policy.imageTypes`). */
            images?: boolean;
            /** @description `maxTurns` ends a turn that keeps calling tools (see `policy.maxTurns`). */
            maxTurns?: boolean;
            /**
             * @description `mcpServers`: the agent calls the session's MCP servers (see
             *     `policy.mcpTransports`).
             */
            mcpServers?: boolean;
            /** @description Model selection. */
            models: boolean;
            /** @description Several turns in one session. */
            multiTurn: boolean;
            /** @description `always` replies are honoured for the rest of the session. */
            permissionAlways: boolean;
            /** @description Permission requests (`permissionAsked`). */
            permissions: boolean;
            /** @description Plan approval requests. */
            planApproval: boolean;
            /** @description `plan` items. */
            plans: boolean;
            /** @description Questions (`questionAsked`). */
            questions: boolean;
            /** @description Reasoning / thinking items. */
            reasoning: boolean;
            /** @description The conversation survives an agent process exit. */
            resume: boolean;
            /** @description `env` reaches the agent's process. */
            sessionEnv?: boolean;
            /** @description Text arrives as `itemDelta`s while it is generated. */
            streamingDeltas: boolean;
            /** @description `systemPrompt` reaches the model (see `policy.systemPromptModes`). */
            systemPrompt?: boolean;
            /** @description Assistant text messages. */
            textMessages: boolean;
            /** @description `toolCall` / `toolResult` items. */
            toolCalls: boolean;
            /** @description `tools` takes tools away (see `policy.tools` for how). */
            toolLists?: boolean;
            /** @description Token usage on `turnEnded`. */
            usage: boolean;
            /** @description `validateToken` on session creation. */
            validateToken: boolean;
            /** @description Model variants (e.g. reasoning effort). */
            variants: boolean;
        };
        /** @description Which credentials an agent can use on this daemon, without revealing any. */
        AgentCredentials: {
            /**
             * @description The kinds available now, in the order a session uses them (a session's own `token`
             *     comes before all of them).
             */
            available: components["schemas"]["CredentialKind"][];
            /** @description Whether a session of the agent needs one (not the mock). */
            required: boolean;
        };
        /**
         * @description An agent-level error, tagged by `type`. Appears in `error` events and as the
         *     `agentError` of problem responses. Every variant has a human `message`.
         */
        AgentError: {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "tokenError";
        } | {
            /**
             * Format: int32
             * @description Exit code, when it exited normally.
             */
            exitCode?: number | null;
            /** @description What happened. */
            message: string;
            /**
             * Format: int32
             * @description Signal number, when it was killed.
             */
            signal?: number | null;
            /** @description The last lines of its stderr. */
            stderrTail?: string | null;
            /** @enum {string} */
            type: "processExited";
        } | {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "installFailed";
        } | {
            /** @description What happened, and how to fix it. */
            message: string;
            /** @enum {string} */
            type: "notInstalled";
        } | {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "unsupportedAgent";
        } | {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "spawnFailed";
        } | {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "protocolError";
        } | {
            /** @description What happened. */
            message: string;
            /**
             * Format: int32
             * @description The provider's HTTP status, when known.
             */
            status?: number | null;
            /** @enum {string} */
            type: "providerError";
        } | {
            /** @description The agent's error code or subtype, when it gives one. */
            code?: string | null;
            /** @description What the agent said. */
            message: string;
            /** @enum {string} */
            type: "agentReported";
        } | {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "timeout";
        } | {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "requestGone";
        } | {
            /** @description What happened. */
            message: string;
            /** @enum {string} */
            type: "storeError";
        };
        /**
         * @description A coding agent the daemon knows.
         * @enum {string}
         */
        AgentId: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
        /** @description One agent as seen by `GET /agents`. */
        AgentInfo: {
            /** @description What the agent supports. */
            capabilities: components["schemas"]["AgentCapabilities"];
            /**
             * @description How each `true` capability was proven: the scenarios of the end-to-end table that
             *     showed it, and what ran behind the agent then. Keyed by the flag's name.
             */
            capabilityProofs?: {
                [key: string]: components["schemas"]["CapabilityProof"];
            };
            /** @description Which credentials a session of the agent can use here (never the secrets). */
            credentials?: components["schemas"]["AgentCredentials"];
            /** @description The agent id. */
            id: components["schemas"]["AgentId"];
            /** @description Whether a usable binary was found (always true for `mock`). */
            installed: boolean;
            /**
             * @description Every version the daemon has installed in its data dir (the one in use among them
             *     unless an override or `PATH` binary is used instead).
             */
            installedVersions?: components["schemas"]["InstalledVersion"][];
            /** @description Display name. */
            name: string;
            /** @description Path of the binary in use. */
            path?: string | null;
            /**
             * @description What of a session policy (`systemPrompt`, `tools`, `maxTurns`, `mcpServers`,
             *     images, `env`) the agent honours, and how.
             */
            policy?: components["schemas"]["PolicySupport"];
            source?: components["schemas"]["BinarySource"] | null;
            /** @description Whether this daemon can drive the agent yet. */
            supported: boolean;
            /** @description Installed version, when known. */
            version?: string | null;
        };
        /** @description One agent mode (what the agent does: build, plan, ...). */
        AgentModeInfo: {
            /** @description What the mode does. */
            description: string;
            /** @description Mode id to pass as `agentMode`. */
            id: string;
            /** @description Display name. */
            name: string;
        };
        /** @description Body of `GET /agents`. */
        AgentsResponse: {
            /** @description Every known agent. */
            agents: components["schemas"]["AgentInfo"][];
        };
        /**
         * @description Where an agent's binary came from.
         * @enum {string}
         */
        BinarySource: "builtIn" | "override" | "path" | "release" | "mirror" | "npm";
        /** @description Body answering `POST /sessions/{id}/cancel` (202). */
        CancelResponse: {
            /** @description The turn being cancelled; it ends with `turnEnded` stopReason `cancelled`. */
            turnId: string;
        };
        /** @description How one capability flag was proven. */
        CapabilityProof: {
            /** @description What ran behind the agent: the real CLI and its version, the mock, or a stand-in. */
            ranWith: string;
            /** @description The scenarios of the end-to-end table that showed it (see the README's agent table). */
            scenarios: string[];
        };
        /** @description How many files a turn added, modified and deleted. */
        ChangeCounts: {
            /**
             * Format: int64
             * @description Files (and symlinks) that appeared.
             */
            added: number;
            /**
             * Format: int64
             * @description Files that went away.
             */
            deleted: number;
            /**
             * Format: int64
             * @description Files whose content, kind or mode changed.
             */
            modified: number;
        };
        /** @description A typed piece of item content, tagged by `type`. */
        ContentPart: {
            /** @description The text. */
            text: string;
            /** @enum {string} */
            type: "text";
        } | {
            /** @description The reasoning text (may be a summary). */
            text: string;
            /** @enum {string} */
            type: "reasoning";
        } | {
            /** @description Tool arguments as JSON. */
            arguments: unknown;
            /** @description The agent's id of the call. */
            callId: string;
            mcp?: components["schemas"]["McpToolRef"] | null;
            /** @description Tool name as the agent knows it. */
            name: string;
            /** @enum {string} */
            type: "toolCall";
        } | {
            /** @description The id of the call this answers. */
            callId: string;
            /** @description Whether the tool reported an error (including a denied permission). */
            isError: boolean;
            /** @description Output text. */
            output: string;
            /** @enum {string} */
            type: "toolResult";
        } | {
            /** @description The image, base64-encoded, when sent inline. */
            data?: string | null;
            /** @description Its media type. */
            mediaType: string;
            /** @description Its file, when sent by path. */
            path?: string | null;
            /** @enum {string} */
            type: "image";
        } | {
            /** @description The command line. */
            command: string;
            /** @description Working directory, when known. */
            cwd?: string | null;
            /**
             * Format: int32
             * @description Exit code, when the command finished.
             */
            exitCode?: number | null;
            /** @description Combined output, when known. */
            output?: string | null;
            /** @enum {string} */
            type: "commandExecution";
        } | {
            /** @description Kind of change. */
            changeKind: components["schemas"]["FileChangeKind"];
            /** @description Unified diff, when known. */
            diff?: string | null;
            /** @description Path of the file. */
            path: string;
            /** @enum {string} */
            type: "fileChange";
        } | {
            /** @description The plan's steps. */
            entries: components["schemas"]["PlanEntry"][];
            /** @description Free-form plan text, when the agent gives one. */
            text?: string | null;
            /** @enum {string} */
            type: "plan";
        } | {
            /** @description Longer detail. */
            detail?: string | null;
            /** @description Short label (e.g. `compacting`). */
            label: string;
            /** @enum {string} */
            type: "status";
        } | {
            /** @description Why it could not be parsed. */
            error: string;
            /** @description The raw native JSON (or a JSON string holding the raw line). */
            raw: unknown;
            /** @enum {string} */
            type: "unparsed";
        };
        /**
         * @description Body of `POST /sessions/{sessionId}`.
         * @example {
         *       "agent": "mock"
         *     }
         */
        CreateSessionRequest: {
            /**
             * @description The agent: `claude`, `codex`, `opencode`, `amp`, `pi` or `mock`.
             * @enum {string}
             */
            agent: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
            /** @description Agent mode (see `GET /agents/{agent}/modes`). */
            agentMode?: string | null;
            /**
             * @description Agent version to use: `pinned`, `latest` or a version, installed first when missing
             *     (ignored by `mock`).
             */
            agentVersion?: string | null;
            /** @description Working directory (absolute, existing). Defaults to the daemon's working directory. */
            cwd?: string | null;
            /**
             * @description Let the agent act without asking (sandboxed environments only); means
             *     `permissionMode: bypass`.
             */
            dangerouslySkipPermissions?: boolean | null;
            /**
             * @description Extra environment variables for the agent's process (the variables the daemon
             *     sets itself, credentials and `LD_*` cannot be given).
             */
            env?: {
                [key: string]: string;
            } | null;
            /**
             * @description The host application's tools, which the daemon serves to the agent over MCP (a
             *     per-session server and token): answered by the client (`toolCallRequested`) or by
             *     an HTTP endpoint the daemon calls, signed. Needs an agent whose `policy.hostTools`
             *     is true.
             */
            hostTools?: components["schemas"]["HostTool"][] | null;
            /**
             * Format: int32
             * @description The most model responses one turn may take; the turn then ends with `stopReason:
             *     maxTurns` (see the agent's `policy.maxTurns`).
             */
            maxTurns?: number | null;
            /**
             * @description MCP servers for this session only, by name (the agent's own configuration is not
             *     read). Header and env values reach only the agent: not argv, the log or the store.
             */
            mcpServers?: {
                [key: string]: components["schemas"]["McpServer"];
            } | null;
            /** @description Model id (see `GET /agents/{agent}/models`). */
            model?: string | null;
            permissionMode?: components["schemas"]["PermissionMode"] | null;
            /**
             * @description Instructions for the agent, appended to its own system prompt or replacing it
             *     (`systemPromptMode`; see the agent's `policy.systemPromptModes`).
             */
            systemPrompt?: string | null;
            systemPromptMode?: components["schemas"]["SystemPromptMode"] | null;
            /**
             * @description Provider credential for this session, overriding the daemon's environment (empty:
             *     the daemon's).
             */
            token?: string | null;
            tools?: components["schemas"]["ToolPolicy"] | null;
            /**
             * @description Check the credential against the provider before answering (a rejected one is a 422
             *     with a `tokenError`). `true` for an agent whose capabilities say
             *     `validateToken: false` is refused with a 422 naming the field.
             */
            validateToken?: boolean | null;
            /** @description Model variant, e.g. reasoning effort `low` / `medium` / `high` / `xhigh`. */
            variant?: string | null;
            webhook?: components["schemas"]["SessionWebhook"] | null;
        };
        /** @description Body answering `POST /sessions/{sessionId}`. */
        CreateSessionResponse: {
            /**
             * @description Always true: the agent started and the session is ready for messages. An agent that
             *     cannot start is a problem response instead (its `agentError` says why; nothing is
             *     kept and the id may be used again).
             */
            healthy: boolean;
            /** @description The agent's own session id, when known at start. */
            nativeSessionId?: string | null;
        };
        /** @description `POST /webhooks`: where and what to deliver. */
        CreateWebhookRequest: {
            /**
             * @description The event types to deliver (`permissionAsked`, `questionAsked`, `toolCallRequested`,
             *     `turnEnded`, `sessionEnded`, ... — any type but `itemDelta` and `unknown`), or `*`
             *     for all.
             */
            events: ("*" | "sessionStarted" | "sessionEnded" | "turnStarted" | "turnEnded" | "itemStarted" | "itemCompleted" | "error" | "permissionAsked" | "permissionResolved" | "questionAsked" | "questionResolved" | "toolCallRequested" | "toolCallResolved" | "sessionHandedOver")[];
            /**
             * @description The key of each delivery's HMAC-SHA256 signature (16 to 512 characters). Absent:
             *     the daemon makes one and answers it once, in the creation's response.
             */
            secret?: string | null;
            /** @description Where to `POST` deliveries: an `http` or `https` URL. */
            url: string;
        };
        /** @description `POST /webhooks`'s answer: the webhook, and its secret when the daemon made it. */
        CreatedWebhook: components["schemas"]["Webhook"] & {
            /** @description The signing secret the daemon made (only when the request gave none; shown once). */
            secret?: string | null;
        };
        /**
         * @description A kind of credential a session can use.
         * @enum {string}
         */
        CredentialKind: "apiKey" | "oauthToken" | "storedLogin";
        /** @description `GET /credentials`: the stored logins. */
        CredentialsResponse: {
            /** @description One per agent that has one, by agent id. */
            credentials: components["schemas"]["StoredLoginInfo"][];
        };
        /**
         * @description Where a delivery stands.
         * @enum {string}
         */
        DeliveryStatus: "pending" | "delivered" | "failed";
        /**
         * @description Why a changed file comes without a diff.
         * @enum {string}
         */
        DiffOmitted: "binary" | "tooLarge" | "turnLimit" | "modeOnly" | "unreadable";
        /** @description The typed payload of an event, tagged by `type` with the body in `data`. */
        EventPayload: {
            /** @description The session is ready. */
            data: components["schemas"]["SessionStarted"];
            /** @enum {string} */
            type: "sessionStarted";
        } | {
            /** @description The session is over; no event follows. */
            data: components["schemas"]["SessionEnded"];
            /** @enum {string} */
            type: "sessionEnded";
        } | {
            /** @description A turn began (a message was accepted). */
            data: components["schemas"]["TurnStarted"];
            /** @enum {string} */
            type: "turnStarted";
        } | {
            /** @description A turn finished. */
            data: components["schemas"]["TurnEnded"];
            /** @enum {string} */
            type: "turnEnded";
        } | {
            /** @description An item appeared. */
            data: components["schemas"]["ItemEvent"];
            /** @enum {string} */
            type: "itemStarted";
        } | {
            /** @description More text for an item in progress. */
            data: components["schemas"]["ItemDelta"];
            /** @enum {string} */
            type: "itemDelta";
        } | {
            /** @description An item is final. */
            data: components["schemas"]["ItemEvent"];
            /** @enum {string} */
            type: "itemCompleted";
        } | {
            /** @description Something went wrong (agent crash, provider error, protocol error, ...). */
            data: components["schemas"]["AgentError"];
            /** @enum {string} */
            type: "error";
        } | {
            /** @description The agent asks permission to do something. */
            data: components["schemas"]["PermissionRequest"];
            /** @enum {string} */
            type: "permissionAsked";
        } | {
            /** @description A permission request was answered (by the client, automatically, or cancelled). */
            data: components["schemas"]["PermissionResolved"];
            /** @enum {string} */
            type: "permissionResolved";
        } | {
            /** @description The agent asks the user one or more questions. */
            data: components["schemas"]["QuestionRequest"];
            /** @enum {string} */
            type: "questionAsked";
        } | {
            /** @description A question request was answered, rejected or cancelled. */
            data: components["schemas"]["QuestionResolved"];
            /** @enum {string} */
            type: "questionResolved";
        } | {
            /** @description The agent called a host tool the client answers. */
            data: components["schemas"]["ToolCallRequest"];
            /** @enum {string} */
            type: "toolCallRequested";
        } | {
            /** @description A host tool call the client answers was answered, rejected or cancelled. */
            data: components["schemas"]["ToolCallResolved"];
            /** @enum {string} */
            type: "toolCallResolved";
        } | {
            /** @description The session goes on with another agent (`POST /sessions/{id}/handover`). */
            data: components["schemas"]["SessionHandedOver"];
            /** @enum {string} */
            type: "sessionHandedOver";
        } | {
            /**
             * @description A stored event this build cannot read: corrupt, or written by a newer build. It
             *     keeps its place (sequence) in the log and carries what was stored, unchanged.
             */
            data: components["schemas"]["UnknownEvent"];
            /** @enum {string} */
            type: "unknown";
        };
        /**
         * @description Who produced an event: the agent (converted from its native stream) or the daemon itself.
         * @enum {string}
         */
        EventSource: "agent" | "daemon";
        /**
         * @description Event type names, as they appear in `type` and in SSE `event:` lines.
         * @enum {string}
         */
        EventType: "sessionStarted" | "sessionEnded" | "turnStarted" | "turnEnded" | "itemStarted" | "itemDelta" | "itemCompleted" | "error" | "permissionAsked" | "permissionResolved" | "questionAsked" | "questionResolved" | "toolCallRequested" | "toolCallResolved" | "sessionHandedOver" | "unknown";
        /** @description Body of `GET /sessions/{id}/events`. */
        EventsResponse: {
            /** @description Events with `sequence > offset`, oldest first. */
            events: components["schemas"]["UniversalEvent"][];
            /** @description True when more events exist after the last one returned. */
            hasMore: boolean;
        };
        /** @description A session's creation record, as a bundle carries it. */
        ExportedSession: {
            /** @description The agent. */
            agent: components["schemas"]["AgentId"];
            /** @description Agent mode. */
            agentMode?: string | null;
            /** @description The agent version the session asked for. */
            agentVersion?: string | null;
            /**
             * Format: date-time
             * @description When it was created.
             */
            createdAt: string;
            /** @description The working directory it ran in. */
            cwd: string;
            /** @description Whether the agent acts without asking. */
            dangerouslySkipPermissions?: boolean;
            /** @description Model. */
            model?: string | null;
            /** @description Permission mode. */
            permissionMode: components["schemas"]["PermissionMode"];
            /**
             * @description Its policy (the `policy` fields of the create request it was made with: system
             *     prompt, tools, turn limit, MCP servers, env, host tools), with every value that may
             *     be secret emptied: MCP servers' `env` and `headers`, the session `env`.
             */
            policy?: {
                [key: string]: unknown;
            };
            /** @description The session id on the daemon that exported it. */
            sessionId: string;
            /** @description Model variant. */
            variant?: string | null;
        };
        /** @description One file a turn changed. */
        FileChange: {
            /**
             * @description Added (`add`), modified (`update`) or deleted (`delete`), as file change items
             *     name them.
             */
            change: components["schemas"]["FileChangeKind"];
            /**
             * @description A unified diff (`--- a/path`, `+++ b/path`, hunks with 3 lines of context), for
             *     text.
             */
            diff?: string | null;
            diffOmitted?: components["schemas"]["DiffOmitted"] | null;
            /** @description Its path relative to the workspace, `/`-separated. */
            path: string;
            /**
             * Format: int64
             * @description Its size after the turn, when it exists.
             */
            sizeAfter?: number | null;
            /**
             * Format: int64
             * @description Its size before the turn, when it existed.
             */
            sizeBefore?: number | null;
            /**
             * @description Whether it is (or was) a symlink rather than a regular file; a symlink's diff is
             *     of its target.
             */
            symlink?: boolean;
        };
        /**
         * @description How a file was changed.
         * @enum {string}
         */
        FileChangeKind: "add" | "update" | "delete";
        /**
         * @description How a [`NativeFile`]'s bytes are written.
         * @enum {string}
         */
        FileEncoding: "utf8" | "base64";
        /** @description One file, directory or link in a workspace. */
        FileEntry: {
            /** @description What it is. */
            kind: components["schemas"]["FileKind"];
            /**
             * Format: int32
             * @description Its permission bits, e.g. `420` (`0o644`).
             */
            mode: number;
            /**
             * Format: date-time
             * @description When its content last changed.
             */
            modifiedAt: string;
            /** @description Its name (the path's last component; empty for the working directory itself). */
            name: string;
            /** @description Its path, relative to the session's working directory. */
            path: string;
            /**
             * Format: int64
             * @description Its size in bytes (a symlink's: the length of its target).
             */
            size: number;
            /** @description A symlink's target, as written in the link. */
            target?: string | null;
        };
        /**
         * @description What a directory entry is. A symlink is reported as itself, never followed.
         * @enum {string}
         */
        FileKind: "file" | "directory" | "symlink" | "other";
        /** @description `GET /sessions/{id}/files`: a directory's entries, depth first in name order. */
        FileListing: {
            /**
             * Format: int32
             * @description How many levels below it were listed.
             */
            depth: number;
            /** @description Its entries, each directory followed by its own entries (down to `depth`). */
            entries: components["schemas"]["FileEntry"][];
            /** @description The directory listed (relative to the working directory; empty: the directory itself). */
            path: string;
            /** @description Whether entries were left out because the listing reached its limit. */
            truncated: boolean;
        };
        /** @description `POST /sessions/{id}/handover`: continue the conversation on another agent. */
        HandoverRequest: {
            /** @description The agent that continues the session. */
            agent: string;
            /** @description Its agent mode (default: the agent's default). */
            agentMode?: string | null;
            /** @description Its model (default: the agent's default). */
            model?: string | null;
        };
        /** @description Body of `GET /health`. */
        HealthResponse: {
            /** @description Always `ok` when the daemon answers. */
            status: string;
            /** @description Whether the session store can write. */
            store: components["schemas"]["StoreHealth"];
            /** @description The daemon's version. */
            version: string;
        };
        /** @description One tool of the host application, offered to the agent for this session. */
        HostTool: {
            description?: string;
            /**
             * @description End the turn (`stopReason: toolStop`) once the tool's result reached the agent, so
             *     the model does not go past it; the next message continues.
             */
            endsTurn?: boolean;
            /** @description Who answers a call. */
            handler: components["schemas"]["HostToolHandler"];
            /** @description The JSON Schema of the tool's input: an object schema. */
            inputSchema?: {
                /** @constant */
                type: "object";
            } & {
                [key: string]: unknown;
            };
            name: string;
            /**
             * @description Ask the user (`permissionAsked`, kind `hostTool`) before each call; an `always`
             *     answer covers the rest of the session's calls of this tool.
             */
            needsApproval?: boolean;
        };
        /**
         * @description The body the daemon `POST`s to an http host tool. Signed with the operator's secret
         *     in `Sandbox-Daemon-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`;
         *     a retry sends the same `callId` (also in the `Idempotency-Key` header).
         */
        HostToolCall: {
            /** @description The call's id: the same on every attempt. */
            callId: string;
            /** @description The input the model gave. */
            input: {
                [key: string]: unknown;
            };
            /** @description The session. */
            sessionId: string;
            /** @description The tool's name. */
            tool: string;
        };
        /** @description Who answers a host tool's calls, tagged by `type`. */
        HostToolHandler: {
            /** @enum {string} */
            type: "client";
        } | {
            /** @description Extra request headers (kept out of the store and the log, like MCP headers). */
            headers?: {
                [key: string]: string;
            };
            /**
             * Format: int64
             * @description How long one attempt may take, in milliseconds (default 30000).
             */
            timeoutMs?: number | null;
            /** @enum {string} */
            type: "http";
            url: string;
        };
        /**
         * @description One step of an install, streamed as `progress` frames by `POST /agents/{agent}/install`
         *     when asked for `text/event-stream`.
         */
        InstallProgress: {
            /** @enum {string} */
            phase: "waiting";
        } | {
            /** @enum {string} */
            phase: "resolving";
            /** @description The version asked for (`pinned`, `latest` or a version). */
            requested: string;
        } | {
            /**
             * Format: int64
             * @description Bytes received so far.
             */
            bytes: number;
            /** @enum {string} */
            phase: "downloading";
            /**
             * Format: int64
             * @description Its size, when announced.
             */
            total?: number | null;
            /** @description Its URL. */
            url: string;
            /** @description The agent version. */
            version: string;
        } | {
            /** @enum {string} */
            phase: "verifying";
            /** @description The agent version. */
            version: string;
        };
        /**
         * @description Body of `POST /agents/{agent}/install` (optional: no body installs the default version
         *     unless the agent is already there).
         */
        InstallRequest: {
            /** @description Download again even if that version is already installed. */
            reinstall?: boolean;
            /**
             * @description The version: `pinned` (the one this daemon is tested with), `latest`, or a version
             *     such as `2.1.330`. Default: the daemon's `--install-version` (pinned unless told).
             */
            version?: string | null;
        };
        /**
         * @description Body of a successful `POST /agents/{agent}/install` (and the `installed` frame of its
         *     event stream).
         */
        InstallResponse: {
            /** @description The agent. */
            agent: components["schemas"]["AgentId"];
            /** @description Whether the agent was already there (nothing was downloaded). */
            alreadyInstalled: boolean;
            /**
             * Format: int64
             * @description How long the install took, in milliseconds.
             */
            durationMs?: number;
            /** @description The binary's path, when it has one. */
            path?: string | null;
            /**
             * Format: int64
             * @description Bytes downloaded (0 when nothing was).
             */
            size?: number;
            source?: components["schemas"]["BinarySource"] | null;
            /** @description The installed version, when known. */
            version?: string | null;
        };
        /** @description One version of an agent installed in the daemon's data dir. */
        InstalledVersion: {
            /** @description Whether it is the one new sessions use. */
            current: boolean;
            /** @description Its executable. */
            path: string;
            /** @description The version. */
            version: string;
        };
        /**
         * @description One item of a turn. `itemStarted` carries the item as first known, `itemDelta`s extend
         *     its text, and `itemCompleted` carries the authoritative final item.
         */
        Item: {
            /** @description Typed content parts. */
            content?: components["schemas"]["ContentPart"][];
            /** @description Daemon-assigned id, unique within the session. */
            itemId: string;
            /** @description What the item is. */
            kind: components["schemas"]["ItemKind"];
            /** @description The agent's own id for this item, when it has one. */
            nativeItemId?: string | null;
            /** @description The item this one belongs to (e.g. the tool call of a tool result). */
            parentId?: string | null;
            role?: components["schemas"]["ItemRole"] | null;
            /** @description Lifecycle status. */
            status: components["schemas"]["ItemStatus"];
        };
        /**
         * @description Payload of `itemDelta`: text appended to an item in progress (message text, reasoning
         *     text or command output, depending on the item's kind).
         */
        ItemDelta: {
            /** @description The appended text. */
            delta: string;
            /** @description The item being extended. */
            itemId: string;
        };
        /** @description Payload of `itemStarted` and `itemCompleted`. */
        ItemEvent: {
            /** @description The item as known at this point. */
            item: components["schemas"]["Item"];
        };
        /**
         * @description What an item is. Clients dispatch rendering on this.
         * @enum {string}
         */
        ItemKind: "message" | "reasoning" | "toolCall" | "toolResult" | "commandExecution" | "fileChange" | "plan" | "status" | "unparsed";
        /**
         * @description Who authored an item.
         * @enum {string}
         */
        ItemRole: "user" | "assistant" | "system" | "tool";
        /**
         * @description Lifecycle status of an item.
         * @enum {string}
         */
        ItemStatus: "inProgress" | "completed" | "failed";
        /** @description A piece of a process's output, as it was read. */
        LogChunk: {
            /** @description The text (UTF-8; invalid bytes replaced). */
            data: string;
            /**
             * Format: int64
             * @description Its place in the process's log: from 1, contiguous (the SSE frame's `id`).
             */
            sequence: number;
            /** @description stdout or stderr. */
            stream: components["schemas"]["LogStream"];
            /**
             * Format: date-time
             * @description When it was read.
             */
            time: string;
        };
        /**
         * @description Which output a log chunk came from.
         * @enum {string}
         */
        LogStream: "stdout" | "stderr";
        /** @description One login inside a stored login file (OpenCode and Pi keep one per provider). */
        LoginEntry: {
            /** @description When its access token expires (RFC 3339), when the login says. */
            expiresAt?: string | null;
            /** @description What it holds. */
            kind: components["schemas"]["LoginEntryKind"];
            /**
             * @description What it is for: a provider (`anthropic`, `openai`), `chatgpt`, `claudeAiOauth`, or
             *     the service URL Amp keys it by.
             */
            name: string;
        };
        /**
         * @description What one stored login holds.
         * @enum {string}
         */
        LoginEntryKind: "oauth" | "apiKey" | "token" | "other";
        /** @description One MCP server for one session, tagged by `type`. */
        McpServer: {
            /** @description Its arguments. */
            args?: string[];
            command: string;
            /** @description Extra environment variables for it (kept out of argv, the log and the store). */
            env?: {
                [key: string]: string;
            };
            /** @enum {string} */
            type: "stdio";
        } | {
            /**
             * @description Headers sent with every request, e.g. `Authorization: Bearer …` (kept out of
             *     argv, the log and the store).
             */
            headers?: {
                [key: string]: string;
            };
            /** @enum {string} */
            type: "http";
            url: string;
        };
        /** @description An MCP server's tool, named as the session's `mcpServers` and the server name them. */
        McpToolRef: {
            /** @description The server's name in `mcpServers`. */
            server: string;
            /** @description The tool's name on that server. */
            tool: string;
        };
        /**
         * @description An MCP transport.
         * @enum {string}
         */
        McpTransport: "stdio" | "http";
        /** @description One part of a user message, tagged by `type`. */
        MessagePart: {
            /** @description The text. */
            text: string;
            /** @enum {string} */
            type: "text";
        } | ({
            /** @description The image, base64-encoded (at most 5 MiB decoded). */
            data?: string;
            /**
             * @description `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
             * @enum {string}
             */
            mediaType: "image/png" | "image/jpeg" | "image/gif" | "image/webp";
            /** @description A file inside the working directory holding the image. */
            path?: string;
            /** @enum {string} */
            type: "image";
        } & ({
            data: string;
        } | {
            path: string;
        }));
        /** @description One model an agent can use. */
        ModelInfo: {
            /** @description The variant used when none is given. */
            defaultVariant?: string | null;
            /** @description Model id to pass as `model`. */
            id: string;
            /** @description Display name. */
            name: string;
            /** @description Variants to pass as `variant` (e.g. reasoning effort). */
            variants?: string[];
        };
        /** @description Body of `GET /agents/{agent}/models`. */
        ModelsResponse: {
            /** @description The model used when none is given. */
            defaultModel?: string | null;
            /** @description The models. */
            models: components["schemas"]["ModelInfo"][];
        };
        /** @description Body of `GET /agents/{agent}/modes`. */
        ModesResponse: {
            /** @description The mode used when none is given. */
            defaultMode?: string | null;
            /** @description Agent modes. */
            modes: components["schemas"]["AgentModeInfo"][];
            /** @description Permission modes the agent supports. */
            permissionModes: components["schemas"]["PermissionMode"][];
        };
        /**
         * @description What an agent keeps to resume a conversation: its own session id and the files that
         *     hold the conversation, each by role (not by path: an importing daemon files them where
         *     its agent looks, for the new working directory).
         */
        NativeBundle: {
            /** @description The agent the state belongs to. */
            agent: components["schemas"]["AgentId"];
            /** @description The working directory the files were written for. */
            cwd: string;
            /** @description The files. */
            files?: components["schemas"]["NativeFile"][];
            /** @description The agent's own session (thread) id. */
            nativeSessionId?: string | null;
        };
        /** @description One file of an agent's native state. */
        NativeFile: {
            /** @description The file's bytes, as `encoding` says. */
            content: string;
            /** @description How `content` is written. */
            encoding: components["schemas"]["FileEncoding"];
            /**
             * @description What the file is to its agent (e.g. `transcript.jsonl`, `rollout.jsonl`,
             *     `export.json`, `session.jsonl`).
             */
            name: string;
            /** @description Hex SHA-256 of the file's bytes (decoded). */
            sha256: string;
        };
        /**
         * @description What a permission request is about.
         * @enum {string}
         */
        PermissionKind: "command" | "fileChange" | "fileRead" | "network" | "planApproval" | "mcpTool" | "hostTool" | "tool";
        /**
         * @description How much the agent may do without asking.
         * @enum {string}
         */
        PermissionMode: "default" | "plan" | "acceptEdits" | "bypass";
        /**
         * @description How a permission request ended.
         * @enum {string}
         */
        PermissionOutcome: "once" | "always" | "reject" | "cancelled";
        /**
         * @description A client's answer to a permission request.
         * @enum {string}
         */
        PermissionReply: "once" | "always" | "reject";
        /** @description Body of `POST /sessions/{id}/permissions/{permissionId}/reply`. */
        PermissionReplyRequest: {
            /** @description `once`, `always` or `reject`. */
            reply: components["schemas"]["PermissionReply"];
        };
        /**
         * @description The agent asks permission to act. Answer with
         *     `POST /sessions/{id}/permissions/{permissionId}/reply`.
         */
        PermissionRequest: {
            /**
             * @description What an `always` reply covers. Later requests with the same scope in this session are
             *     approved without asking. Absent when the agent offers no lasting approval.
             */
            alwaysScope?: string | null;
            /** @description The command line, for command requests. */
            command?: string | null;
            /** @description The tool's full input as the agent sent it. */
            input?: unknown;
            /** @description The item (usually a tool call) the request gates. */
            itemId?: string | null;
            /** @description What is being asked. */
            kind: components["schemas"]["PermissionKind"];
            mcp?: components["schemas"]["McpToolRef"] | null;
            /** @description Files concerned. */
            paths?: string[];
            /** @description Id to reply to; unique within the session. */
            permissionId: string;
            /** @description The plan to approve, for plan approvals. */
            plan?: string | null;
            /** @description A one-line human description (e.g. ``Run `ls -la` ``). */
            title: string;
            /** @description The agent's tool name. */
            tool?: string | null;
        };
        /** @description Payload of `permissionResolved`. */
        PermissionResolved: {
            /**
             * @description True when the daemon answered by itself — `always` because of an earlier `always`,
             *     `reject` because the session's `tools` refuse the tool; such requests never appear
             *     as `permissionAsked`, so the request is included.
             */
            automatic: boolean;
            /** @description How it ended. */
            outcome: components["schemas"]["PermissionOutcome"];
            /** @description The request that was resolved. */
            permissionId: string;
            request?: components["schemas"]["PermissionRequest"] | null;
        };
        /** @description One step of a plan / todo list. */
        PlanEntry: {
            /** @description What the step is. */
            content: string;
            /** @description Where it stands. */
            status: components["schemas"]["PlanEntryStatus"];
        };
        /**
         * @description Status of one plan entry.
         * @enum {string}
         */
        PlanEntryStatus: "pending" | "inProgress" | "completed";
        /**
         * @description What of a session policy an agent honours, and how (`GET /agents`). A request for
         *     something it does not honour is refused with a 422 naming the field.
         */
        PolicySupport: {
            /**
             * @description Whether the daemon offers it `ask_user`, a question tool of the daemon's (it has
             *     none of its own), on that server.
             */
            askUser?: boolean;
            /** @description Whether it takes the session's `env`. */
            env: boolean;
            /** @description Whether it takes `hostTools` (the daemon's per-session MCP server reaches it). */
            hostTools?: boolean;
            /** @description The image media types its messages may carry (empty: no images). */
            imageTypes: string[];
            maxTurns?: components["schemas"]["TurnLimiter"] | null;
            /** @description The MCP transports it takes in `mcpServers` (empty: none). */
            mcpTransports: components["schemas"]["McpTransport"][];
            /** @description The `systemPromptMode`s it honours (empty: no `systemPrompt`). */
            systemPromptModes: components["schemas"]["SystemPromptMode"][];
            /**
             * @description How each built-in tool (by universal name) and MCP tools (`mcp`) are taken away;
             *     a tool not listed cannot be, and a `tools` list that would is refused.
             */
            tools: {
                [key: string]: components["schemas"]["ToolRestriction"];
            };
        };
        /** @description An RFC 7807 problem details body (`application/problem+json`). */
        ProblemDetails: {
            agentError?: components["schemas"]["AgentError"] | null;
            /** @description What happened this time. */
            detail: string;
            /** @description The request path. */
            instance?: string | null;
            /**
             * Format: int32
             * @description HTTP status code.
             */
            status: number;
            /** @description Short summary of the kind. */
            title: string;
            /** @description A URI naming the error kind; stable per kind. */
            type: string;
        };
        /** @description A long-running process of a session. */
        ProcessInfo: {
            /** @description Its arguments. */
            args: string[];
            /** @description The program. */
            command: string;
            /** @description Its working directory, relative to the session's. */
            cwd: string;
            /**
             * Format: date-time
             * @description When it ended.
             */
            endedAt?: string | null;
            /**
             * Format: int32
             * @description Its exit code, once it exited.
             */
            exitCode?: number | null;
            /**
             * Format: int64
             * @description The sequence of its last log chunk (0: none yet).
             */
            lastSequence: number;
            /**
             * Format: int32
             * @description Its operating-system process id (also its process group's).
             */
            pid: number;
            /** @description Its id in the session (what the routes take). */
            processId: string;
            /**
             * Format: int32
             * @description The signal that ended it, if one did.
             */
            signal?: number | null;
            /**
             * Format: date-time
             * @description When it started.
             */
            startedAt: string;
            /** @description Running or exited. */
            status: components["schemas"]["ProcessStatus"];
            /** @description Whether it runs on a pseudo-terminal (`GET .../terminal` reaches it). */
            tty: boolean;
        };
        /** @description `GET /sessions/{id}/processes`. */
        ProcessList: {
            /** @description The session's processes, oldest first (running and exited, until deleted). */
            processes: components["schemas"]["ProcessInfo"][];
        };
        /** @description `GET /sessions/{id}/processes/{processId}/logs`: the log after `offset`. */
        ProcessLogs: {
            /** @description The chunks with `sequence > offset` still kept, in order. */
            chunks: components["schemas"]["LogChunk"][];
            /**
             * Format: int64
             * @description The first sequence still kept; chunks before it were dropped to keep the log
             *     within `--process-log-bytes` (a reader asking for them gets what follows).
             */
            firstKept: number;
            /** @description The process as it stands (`status` `exited`: no chunk will follow these). */
            process: components["schemas"]["ProcessInfo"];
        };
        /** @description `POST /sessions/{id}/processes/run`: how a process ended and what it wrote. */
        ProcessOutput: {
            /**
             * Format: int64
             * @description How long it ran, in milliseconds.
             */
            durationMs: number;
            /**
             * Format: int32
             * @description Its exit code, when it exited.
             */
            exitCode?: number | null;
            /**
             * Format: int32
             * @description The signal that ended it, when one did.
             */
            signal?: number | null;
            /** @description What it wrote to stderr (as UTF-8; invalid bytes replaced). */
            stderr: string;
            /** @description Whether stderr went past `maxOutputBytes`. */
            stderrTruncated: boolean;
            /** @description What it wrote to stdout (as UTF-8; invalid bytes replaced). */
            stdout: string;
            /** @description Whether stdout went past `maxOutputBytes` (the rest was dropped). */
            stdoutTruncated: boolean;
            /** @description Whether it was killed for running past `timeoutMs`. */
            timedOut: boolean;
        };
        /** @description `POST /sessions/{id}/processes/run` and `POST /sessions/{id}/processes`: what to run. */
        ProcessRequest: {
            /** @description Its arguments. */
            args?: string[];
            /** @description The program: a name looked up on `PATH`, or a path (relative to `cwd`). */
            command: string;
            /** @description Its working directory, relative to the session's (default: the session's). */
            cwd?: string | null;
            /**
             * @description Variables added to the agents' allow-listed environment (protected names such as
             *     `HOME`, `PATH`, `LD_*` and credentials are refused).
             */
            env?: {
                [key: string]: string;
            };
            /**
             * Format: int64
             * @description `run`: keep at most this many bytes of stdout and of stderr each (default 1 MiB; more
             *     is cut to the daemon's `--process-output-bytes`, 16 MiB unless set); the rest is read
             *     and dropped.
             */
            maxOutputBytes?: number | null;
            size?: components["schemas"]["TerminalSize"] | null;
            /**
             * Format: int64
             * @description `run`: kill it (the whole process group) after this long (default 60,000; a longer
             *     one is cut to the daemon's `--process-timeout`, 1 h unless set).
             */
            timeoutMs?: number | null;
            /**
             * @description Long-running only: run it on a pseudo-terminal (stdin, stdout and stderr; its output
             *     logged as `stdout`), reachable as a WebSocket (`GET .../terminal`); `TERM` is
             *     `xterm-256color` unless `env` names one.
             */
            tty?: boolean;
        };
        /**
         * @description Where a long-running process stands.
         * @enum {string}
         */
        ProcessStatus: "running" | "exited";
        /** @description `PUT /credentials/{agent}`: a login to store. Exactly one of `login` and `token`. */
        PutCredentialRequest: {
            /**
             * @description The agent's login file as the agent wrote it: Claude's `.credentials.json`, Codex's
             *     `auth.json`, OpenCode's `auth.json`, Amp's `secrets.json`, Pi's `auth.json`.
             */
            login?: {
                [key: string]: unknown;
            } | null;
            /** @description Where it came from, for the listing (e.g. the path `credentials import` read). */
            source?: string | null;
            /**
             * @description A long-lived token instead of a file (Claude: the `sk-ant-oat…` token of
             *     `claude setup-token`).
             */
            token?: string | null;
        } & ({
            login: {
                [key: string]: unknown;
            };
        } | {
            token: string;
        });
        /** @description One question of a question request. */
        Question: {
            /** @description Whether a free-form answer (not one of the labels) is accepted. */
            allowCustom: boolean;
            /** @description A short header / chip label. */
            header?: string | null;
            /** @description Whether several options may be selected. */
            multiSelect: boolean;
            /** @description The options to choose from (may be empty for free-form questions). */
            options?: components["schemas"]["QuestionOption"][];
            /** @description The question text. */
            question: string;
        };
        /** @description One option of a question. */
        QuestionOption: {
            /** @description Longer explanation. */
            description?: string | null;
            /** @description The label; answers quote it exactly. */
            label: string;
        };
        /**
         * @description How a question request ended.
         * @enum {string}
         */
        QuestionOutcome: "answered" | "rejected" | "cancelled";
        /** @description Body of `POST /sessions/{id}/questions/{questionId}/reject` (empty object). */
        QuestionRejectRequest: Record<string, never>;
        /** @description Body of `POST /sessions/{id}/questions/{questionId}/reply`. */
        QuestionReplyRequest: {
            /** @description One array of selected option labels per question, in the questions' order. */
            answers: string[][];
        };
        /**
         * @description The agent asks the user one or more questions. Answer with
         *     `POST /sessions/{id}/questions/{questionId}/reply` (`answers[i]` answers `questions[i]`)
         *     or reject with `.../reject`.
         */
        QuestionRequest: {
            /** @description The item (usually a tool call) that asked. */
            itemId?: string | null;
            /** @description Id to reply to; unique within the session. */
            questionId: string;
            /** @description The questions, in order. */
            questions: components["schemas"]["Question"][];
        };
        /** @description Payload of `questionResolved`. */
        QuestionResolved: {
            /** @description The answers, one array of selected labels per question (only when answered). */
            answers?: string[][] | null;
            /** @description How it ended. */
            outcome: components["schemas"]["QuestionOutcome"];
            /** @description The request that was resolved. */
            questionId: string;
        };
        /** @description Body of `POST /sessions/{id}/messages`. */
        SendMessageRequest: {
            /**
             * @description The user's message as parts: text and images (give this or `message`). Images
             *     need an agent whose `policy.imageTypes` lists their type.
             */
            content?: components["schemas"]["MessagePart"][];
            /** @description The user's message as text (give this or `content`). */
            message?: string;
        } & ({
            message: string;
        } | {
            content: components["schemas"]["MessagePart"][];
        });
        /** @description Body answering `POST /sessions/{id}/messages` (202). */
        SendMessageResponse: {
            /** @description The turn the message started. */
            turnId: string;
        };
        /**
         * @description A session as one JSON document: its record, the agent's native state and the universal
         *     event log. Holds no credential: neither the session's `token` nor the secret values of
         *     its policy (MCP servers' `env` and `headers`, the session `env`) travel.
         */
        SessionBundle: {
            /**
             * Format: int64
             * @description How many events `events` holds.
             */
            eventCount: number;
            /** @description The universal event log, from sequence 1, contiguous. */
            events: components["schemas"]["UniversalEvent"][];
            /**
             * @description Hex SHA-256 over the events as written in the bundle: each event's JSON text
             *     followed by a newline (`\n`), in order.
             */
            eventsSha256: string;
            /**
             * Format: date-time
             * @description When the bundle was written.
             */
            exportedAt: string;
            /**
             * Format: int32
             * @description The bundle format ([`BUNDLE_FORMAT`]).
             */
            format: number;
            native?: components["schemas"]["NativeBundle"] | null;
            /** @description How the session was created (as it stands after any handover). */
            session: components["schemas"]["ExportedSession"];
        };
        /**
         * @description Why a session ended.
         * @enum {string}
         */
        SessionEndReason: "completed" | "error" | "terminated";
        /** @description Payload of `sessionEnded`. */
        SessionEnded: {
            /**
             * Format: int32
             * @description Exit code of the agent process, when it exited.
             */
            exitCode?: number | null;
            /** @description Why the session ended. */
            reason: components["schemas"]["SessionEndReason"];
            /** @description The last lines the agent wrote to stderr, when it failed. */
            stderrTail?: string | null;
        };
        /**
         * @description The event a handover logs (`sessionHandedOver`): the agent that ran the session until
         *     now, and the one that continues it from the next turn, with the earlier turns as its own
         *     history. The event's `nativeSessionId` is the new agent's.
         */
        SessionHandedOver: {
            /** @description The new agent's mode. */
            agentMode?: string | null;
            /** @description The agent before. */
            fromAgent: components["schemas"]["AgentId"];
            /** @description The new agent's model. */
            model?: string | null;
            /** @description The agent from now on. */
            toAgent: components["schemas"]["AgentId"];
            /**
             * Format: int64
             * @description How many earlier turns the new agent's history holds.
             */
            turns: number;
        };
        /** @description One session as seen by `GET /sessions` and `GET /sessions/{id}`. */
        SessionInfo: {
            /** @description The agent. */
            agent: components["schemas"]["AgentId"];
            /** @description Agent mode, when set. */
            agentMode?: string | null;
            /**
             * Format: date-time
             * @description When the session was created.
             */
            createdAt: string;
            /** @description The running turn, if any. */
            currentTurnId?: string | null;
            /** @description Working directory. */
            cwd: string;
            endReason?: components["schemas"]["SessionEndReason"] | null;
            /**
             * Format: int64
             * @description Number of events in the log (= the last sequence).
             */
            eventCount: number;
            /** @description Model, when set. */
            model?: string | null;
            /** @description The agent's own session id, once known. */
            nativeSessionId?: string | null;
            /** @description Permission requests waiting for a reply. */
            pendingPermissions: components["schemas"]["PermissionRequest"][];
            /** @description Question requests waiting for a reply. */
            pendingQuestions: components["schemas"]["QuestionRequest"][];
            /** @description Host tool calls waiting for the client's result or rejection. */
            pendingToolCalls?: components["schemas"]["ToolCallRequest"][];
            /** @description Permission mode. */
            permissionMode: components["schemas"]["PermissionMode"];
            /** @description The session id. */
            sessionId: string;
            /** @description Idle, running or ended. */
            status: components["schemas"]["SessionStatus"];
            /**
             * Format: date-time
             * @description When the session last changed: the `time` of the last event in its log (its
             *     `createdAt` while it has none).
             */
            updatedAt: string;
            /** @description Variant, when set. */
            variant?: string | null;
        };
        /** @description Body of `GET /sessions`: one page of sessions, oldest first. */
        SessionListResponse: {
            /** @description Pass as `cursor` to get the next page; absent on the last page. */
            nextCursor?: string | null;
            /** @description The sessions of this page, oldest first. */
            sessions: components["schemas"]["SessionInfo"][];
            /**
             * @description Sessions of this page whose stored record this build cannot read (corrupt, or
             *     written by a newer build). Their events stay readable; their ids stay taken.
             *     Only listed when no `status` filter is given.
             */
            unreadable?: components["schemas"]["UnreadableSession"][];
        };
        /** @description Payload of `sessionStarted`. */
        SessionStarted: {
            /** @description The agent driving the session. */
            agent: components["schemas"]["AgentId"];
            /** @description The agent mode (e.g. `build`, `plan`), when set. */
            agentMode?: string | null;
            /** @description The agent's version, when known. */
            agentVersion?: string | null;
            /** @description The agent's working directory. */
            cwd?: string | null;
            /** @description The model, when known. */
            model?: string | null;
            permissionMode?: components["schemas"]["PermissionMode"] | null;
        };
        /**
         * @description Where a session stands.
         * @enum {string}
         */
        SessionStatus: "idle" | "running" | "ended";
        /**
         * @description A webhook of one session, given with the session (`CreateSessionRequest.webhook`): it
         *     delivers that session's events only and goes when the session is deleted.
         */
        SessionWebhook: {
            /** @description The event types to deliver (any but `itemDelta` and `unknown`), or `*` for all. */
            events: ("*" | "sessionStarted" | "sessionEnded" | "turnStarted" | "turnEnded" | "itemStarted" | "itemCompleted" | "error" | "permissionAsked" | "permissionResolved" | "questionAsked" | "questionResolved" | "toolCallRequested" | "toolCallResolved" | "sessionHandedOver")[];
            /**
             * @description The key of each delivery's HMAC-SHA256 signature (16 to 512 characters; required
             *     here, as the session's answer does not carry it).
             */
            secret: string;
            /** @description Where to `POST` deliveries: an `http` or `https` URL. */
            url: string;
        };
        /**
         * @description Why a turn stopped.
         * @enum {string}
         */
        StopReason: "completed" | "cancelled" | "error" | "maxTokens" | "maxTurns" | "maxBudget" | "toolStop";
        /**
         * @description A session store backend.
         * @enum {string}
         */
        StoreBackend: "sqlite" | "postgres";
        /** @description Which session store the daemon uses and whether it can write. */
        StoreHealth: {
            /** @description `sqlite` (the embedded default) or `postgres`. */
            backend: components["schemas"]["StoreBackend"];
            /** @description `ok`, or why writes fail right now. */
            status: components["schemas"]["StoreStatus"];
        };
        /**
         * @description Whether the session store can write.
         * @enum {string}
         */
        StoreStatus: "ok" | "full" | "unavailable";
        /**
         * @description A login the daemon keeps for an agent (`GET /credentials/{agent}`): everything but the
         *     secret.
         */
        StoredLoginInfo: {
            /** @description The agent it is for. */
            agent: components["schemas"]["AgentId"];
            /** @description What it holds. */
            entries: components["schemas"]["LoginEntry"][];
            /**
             * @description The file a session's private home gets (relative to that home), or none for a
             *     token given in the environment.
             */
            file?: string | null;
            /** @description When an agent last refreshed it and the daemon wrote the refresh back (RFC 3339). */
            refreshedAt?: string | null;
            /** @description Where it was imported from (a path on the importing machine), when it was. */
            source?: string | null;
            /** @description When it was stored (RFC 3339). */
            storedAt: string;
        };
        /**
         * @description How `systemPrompt` combines with the agent's own instructions.
         * @enum {string}
         */
        SystemPromptMode: "append" | "replace";
        /**
         * @description A text frame of a terminal's WebSocket (binary frames carry the terminal's bytes: its
         *     output from the daemon, input to it from the client).
         */
        TerminalMessage: {
            /** @description The text. */
            data: string;
            /** @enum {string} */
            type: "input";
        } | {
            /**
             * Format: int32
             * @description Columns, 1 to 1,000.
             */
            cols: number;
            /**
             * Format: int32
             * @description Rows, 1 to 1,000.
             */
            rows: number;
            /** @enum {string} */
            type: "resize";
        } | {
            /**
             * Format: int32
             * @description Its exit code, when it exited.
             */
            exitCode?: number | null;
            /**
             * Format: int32
             * @description The signal that ended it, when one did.
             */
            signal?: number | null;
            /** @enum {string} */
            type: "exit";
        } | {
            /** @description What was wrong. */
            message: string;
            /** @enum {string} */
            type: "error";
        };
        /** @description A terminal's size in character cells. */
        TerminalSize: {
            /**
             * Format: int32
             * @description Columns, 1 to 1,000.
             */
            cols: number;
            /**
             * Format: int32
             * @description Rows, 1 to 1,000.
             */
            rows: number;
        };
        /**
         * @description `POST /sessions/{id}/processes/{processId}/terminal-ticket`: what opens the terminal's
         *     WebSocket without the daemon's token in a URL.
         */
        TerminalTicket: {
            /**
             * Format: date-time
             * @description When it stops being accepted.
             */
            expiresAt: string;
            /** @description The WebSocket's path with the ticket, relative to the daemon's address. */
            path: string;
            /**
             * @description The ticket: the `ticket` query parameter of `GET .../terminal`, good for one
             *     connection to this process until `expiresAt`.
             */
            ticket: string;
        };
        /**
         * @description How a host tool call ended.
         * @enum {string}
         */
        ToolCallOutcome: "answered" | "rejected" | "cancelled";
        /** @description Body of `POST /sessions/{id}/tool-calls/{callId}/reject`. */
        ToolCallRejectRequest: {
            reason?: string;
        };
        /**
         * @description The agent called a client host tool: answer with
         *     `POST /sessions/{id}/tool-calls/{callId}/result` or `.../reject`.
         */
        ToolCallRequest: {
            /** @description Id to answer; unique within the session. */
            callId: string;
            /** @description The input the model gave. */
            input: {
                [key: string]: unknown;
            };
            /** @description The agent's tool-call item, when the daemon could tell which one it is. */
            itemId?: string | null;
            /** @description The host tool's name. */
            tool: string;
        };
        /** @description A host tool call was answered, rejected or cancelled. */
        ToolCallResolved: {
            /** @description The call. */
            callId: string;
            /** @description How it ended. */
            outcome: components["schemas"]["ToolCallOutcome"];
        };
        /**
         * @description Body of `POST /sessions/{id}/tool-calls/{callId}/result`, and what an http host tool
         *     answers.
         */
        ToolCallResultRequest: {
            /** @description The tool failed: the model sees the output as an error. */
            isError?: boolean;
            /** @description What the model gets back. */
            output: components["schemas"]["ToolOutput"];
        };
        /** @description A host tool's output: text, or parts (text and images). */
        ToolOutput: string | components["schemas"]["MessagePart"][];
        /**
         * @description Which tools the agent may use, in universal names: `read`, `write`, `edit`, `shell`,
         *     `glob`, `grep`, `webFetch`, `webSearch`, `mcp:<server>/<tool>`, `mcp:<server>/*`.
         */
        ToolPolicy: {
            /**
             * @description Only these tools (absent: every tool). An MCP server's tools are allowed when the
             *     list names `mcp:<server>/*` or one of them; an empty list allows no tool.
             */
            allow?: string[] | null;
            /** @description Never these tools (applied after `allow`). */
            deny?: string[];
        };
        /**
         * @description How an agent keeps a tool from the model when a session's `tools` takes it away.
         * @enum {string}
         */
        ToolRestriction: "removed" | "refused" | "absent";
        /**
         * @description `GET /sessions/{id}/turns/{turnId}/changes`: what the turn changed in the workspace,
         *     whichever agent made the changes (the workspace as the turn started against the
         *     workspace as it ended; `.git`, `node_modules` and `.gitignore`d paths left out).
         */
        TurnChanges: {
            /** @description How many files it added, modified and deleted (what its `turnEnded` carries). */
            counts: components["schemas"]["ChangeCounts"];
            /** @description The changed files, by path. */
            files: components["schemas"]["FileChange"][];
            /**
             * Format: date-time
             * @description When the workspace was looked at as the turn ended.
             */
            takenAt: string;
            /** @description The turn. */
            turnId: string;
        };
        /** @description Payload of `turnEnded`. */
        TurnEnded: {
            changes?: components["schemas"]["ChangeCounts"] | null;
            /** @description Why it stopped. */
            stopReason: components["schemas"]["StopReason"];
            /** @description The turn that ended. */
            turnId: string;
            usage?: components["schemas"]["Usage"] | null;
        };
        /**
         * @description Who enforces `maxTurns`.
         * @enum {string}
         */
        TurnLimiter: "agent" | "daemon";
        /** @description Payload of `turnStarted`. */
        TurnStarted: {
            /** @description Daemon-assigned turn id, unique within the session. */
            turnId: string;
        };
        /** @description One event of a session's log. */
        UniversalEvent: components["schemas"]["EventPayload"] & {
            /** @description The agent's own session / thread id, once known. */
            nativeSessionId?: string | null;
            /** @description The native JSON this event was converted from (only with `includeRaw=true`). */
            raw?: unknown;
            /**
             * Format: int64
             * @description Position in the session's log: starts at 1, contiguous, never reused.
             */
            sequence: number;
            /** @description The daemon session id. */
            sessionId: string;
            /** @description Who produced the event. */
            source: components["schemas"]["EventSource"];
            /**
             * @description True when the event has no native counterpart and was synthesised to keep the
             *     universal lifecycle complete.
             */
            synthetic: boolean;
            /**
             * Format: date-time
             * @description When the daemon recorded the event.
             */
            time: string;
        };
        /** @description Payload of `unknown`: a stored record served as it is, never dropped or rewritten. */
        UnknownEvent: {
            /** @description What went wrong reading it, when it did not parse. */
            error?: string | null;
            /** @description Why this build could not read it. */
            reason: components["schemas"]["UnknownReason"];
            /**
             * Format: int32
             * @description The schema version the record was written with.
             */
            schemaVersion: number;
            /** @description The stored event: its JSON when it is JSON, else the stored text as a string. */
            stored: unknown;
            /** @description The event type the record was stored with. */
            storedType: string;
        };
        /**
         * @description Why a stored event could not be read.
         * @enum {string}
         */
        UnknownReason: "newerVersion" | "unreadable";
        /** @description A stored session whose record this build cannot read. */
        UnreadableSession: {
            /**
             * Format: date-time
             * @description When the session was created.
             */
            createdAt: string;
            /** @description Why the record cannot be read. */
            error: string;
            /**
             * Format: int64
             * @description Number of events in its log.
             */
            eventCount: number;
            /** @description The session id. */
            sessionId: string;
        };
        /** @description `POST /sessions/{id}/files/upload`: what an archive put into the workspace. */
        UploadSummary: {
            /**
             * Format: int64
             * @description Bytes of file content written.
             */
            bytes: number;
            /**
             * Format: int64
             * @description Directory entries of the archive unpacked (created, or already there).
             */
            directories: number;
            /**
             * Format: int64
             * @description Regular files written.
             */
            files: number;
            /** @description The directory it was extracted into (relative to the working directory). */
            path: string;
            /**
             * Format: int64
             * @description Symbolic links created.
             */
            symlinks: number;
        };
        /** @description Token usage of a turn. */
        Usage: {
            /**
             * Format: int64
             * @description Input tokens written to the prompt cache.
             */
            cacheWriteTokens?: number | null;
            /**
             * Format: int64
             * @description Input tokens read from the prompt cache.
             */
            cachedInputTokens?: number | null;
            /**
             * Format: int64
             * @description Input (prompt) tokens, excluding cached ones where the agent separates them.
             */
            inputTokens: number;
            /**
             * Format: int64
             * @description Output (completion) tokens.
             */
            outputTokens: number;
            /**
             * Format: int64
             * @description Reasoning tokens, when reported separately.
             */
            reasoningTokens?: number | null;
            /**
             * Format: double
             * @description Cost in US dollars, when the agent reports it.
             */
            totalCostUsd?: number | null;
        };
        /** @description A webhook (its secret is never shown after its creation). */
        Webhook: {
            /**
             * Format: date-time
             * @description When it was created.
             */
            createdAt: string;
            /** @description The event types delivered (`["*"]`: all). */
            events: string[];
            /** @description Its id (`wh_...`). */
            id: string;
            /** @description The session it belongs to, for a session's own webhook; absent: every session. */
            sessionId?: string | null;
            /** @description Where deliveries go. */
            url: string;
        };
        /** @description One event's delivery to one webhook. */
        WebhookDelivery: {
            /**
             * Format: int32
             * @description Attempts made so far.
             */
            attempts: number;
            /**
             * Format: date-time
             * @description When the event was queued for delivery.
             */
            createdAt: string;
            /** @description The event's type. */
            eventType: components["schemas"]["EventType"];
            /**
             * Format: date-time
             * @description When it was delivered, or given up.
             */
            finishedAt?: string | null;
            /** @description Its id: `<sessionId>:<sequence>`, the `Webhook-Id` header of every attempt. */
            id: string;
            /** @description Why the last attempt failed, when it did. */
            lastError?: string | null;
            /**
             * Format: int32
             * @description The HTTP status of the last attempt, when the receiver answered.
             */
            lastStatusCode?: number | null;
            /**
             * Format: date-time
             * @description When the next attempt is due (pending deliveries).
             */
            nextAttemptAt?: string | null;
            /**
             * Format: int64
             * @description The event's sequence in its session's log.
             */
            sequence: number;
            /** @description The event's session. */
            sessionId: string;
            /** @description Where it stands. */
            status: components["schemas"]["DeliveryStatus"];
            /** @description The webhook. */
            webhookId: string;
        };
        /** @description `GET /webhooks/{webhookId}/deliveries`: a page, oldest first. */
        WebhookDeliveryList: {
            /** @description The deliveries of this page. */
            deliveries: components["schemas"]["WebhookDelivery"][];
            /** @description Pass as `cursor` for the next page; absent on the last. */
            nextCursor?: string | null;
        };
        /** @description `GET /webhooks`. */
        WebhookList: {
            /** @description Every webhook, the daemon-wide ones and the sessions' own, oldest first. */
            webhooks: components["schemas"]["Webhook"][];
        };
        /**
         * @description The body of each delivery's `POST`: the event, with where it comes from. It is signed
         *     in `Sandbox-Daemon-Signature` (`t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of
         *     "<t>.<body>">`, keyed by the webhook's secret) and keyed in `Webhook-Id`.
         */
        WebhookPayload: {
            /** @description The delivery's id, `<sessionId>:<sequence>` (also `Webhook-Id`). */
            deliveryId: string;
            /** @description The event, as the session's log holds it. */
            event: components["schemas"]["UniversalEvent"];
            /** @description The event's type. */
            type: components["schemas"]["EventType"];
            /** @description The webhook delivering it. */
            webhookId: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type AgentCapabilities = components['schemas']['AgentCapabilities'];
export type AgentCredentials = components['schemas']['AgentCredentials'];
export type AgentError = components['schemas']['AgentError'];
export type AgentId = components['schemas']['AgentId'];
export type AgentInfo = components['schemas']['AgentInfo'];
export type AgentModeInfo = components['schemas']['AgentModeInfo'];
export type AgentsResponse = components['schemas']['AgentsResponse'];
export type BinarySource = components['schemas']['BinarySource'];
export type CancelResponse = components['schemas']['CancelResponse'];
export type CapabilityProof = components['schemas']['CapabilityProof'];
export type ChangeCounts = components['schemas']['ChangeCounts'];
export type ContentPart = components['schemas']['ContentPart'];
export type CreateSessionRequest = components['schemas']['CreateSessionRequest'];
export type CreateSessionResponse = components['schemas']['CreateSessionResponse'];
export type CreateWebhookRequest = components['schemas']['CreateWebhookRequest'];
export type CreatedWebhook = components['schemas']['CreatedWebhook'];
export type CredentialKind = components['schemas']['CredentialKind'];
export type CredentialsResponse = components['schemas']['CredentialsResponse'];
export type DeliveryStatus = components['schemas']['DeliveryStatus'];
export type DiffOmitted = components['schemas']['DiffOmitted'];
export type EventPayload = components['schemas']['EventPayload'];
export type EventSource = components['schemas']['EventSource'];
export type EventType = components['schemas']['EventType'];
export type EventsResponse = components['schemas']['EventsResponse'];
export type ExportedSession = components['schemas']['ExportedSession'];
export type FileChange = components['schemas']['FileChange'];
export type FileChangeKind = components['schemas']['FileChangeKind'];
export type FileEncoding = components['schemas']['FileEncoding'];
export type FileEntry = components['schemas']['FileEntry'];
export type FileKind = components['schemas']['FileKind'];
export type FileListing = components['schemas']['FileListing'];
export type HandoverRequest = components['schemas']['HandoverRequest'];
export type HealthResponse = components['schemas']['HealthResponse'];
export type HostTool = components['schemas']['HostTool'];
export type HostToolCall = components['schemas']['HostToolCall'];
export type HostToolHandler = components['schemas']['HostToolHandler'];
export type InstallProgress = components['schemas']['InstallProgress'];
export type InstallRequest = components['schemas']['InstallRequest'];
export type InstallResponse = components['schemas']['InstallResponse'];
export type InstalledVersion = components['schemas']['InstalledVersion'];
export type Item = components['schemas']['Item'];
export type ItemDelta = components['schemas']['ItemDelta'];
export type ItemEvent = components['schemas']['ItemEvent'];
export type ItemKind = components['schemas']['ItemKind'];
export type ItemRole = components['schemas']['ItemRole'];
export type ItemStatus = components['schemas']['ItemStatus'];
export type LogChunk = components['schemas']['LogChunk'];
export type LogStream = components['schemas']['LogStream'];
export type LoginEntry = components['schemas']['LoginEntry'];
export type LoginEntryKind = components['schemas']['LoginEntryKind'];
export type McpServer = components['schemas']['McpServer'];
export type McpToolRef = components['schemas']['McpToolRef'];
export type McpTransport = components['schemas']['McpTransport'];
export type MessagePart = components['schemas']['MessagePart'];
export type ModelInfo = components['schemas']['ModelInfo'];
export type ModelsResponse = components['schemas']['ModelsResponse'];
export type ModesResponse = components['schemas']['ModesResponse'];
export type NativeBundle = components['schemas']['NativeBundle'];
export type NativeFile = components['schemas']['NativeFile'];
export type PermissionKind = components['schemas']['PermissionKind'];
export type PermissionMode = components['schemas']['PermissionMode'];
export type PermissionOutcome = components['schemas']['PermissionOutcome'];
export type PermissionReply = components['schemas']['PermissionReply'];
export type PermissionReplyRequest = components['schemas']['PermissionReplyRequest'];
export type PermissionRequest = components['schemas']['PermissionRequest'];
export type PermissionResolved = components['schemas']['PermissionResolved'];
export type PlanEntry = components['schemas']['PlanEntry'];
export type PlanEntryStatus = components['schemas']['PlanEntryStatus'];
export type PolicySupport = components['schemas']['PolicySupport'];
export type ProblemDetails = components['schemas']['ProblemDetails'];
export type ProcessInfo = components['schemas']['ProcessInfo'];
export type ProcessList = components['schemas']['ProcessList'];
export type ProcessLogs = components['schemas']['ProcessLogs'];
export type ProcessOutput = components['schemas']['ProcessOutput'];
export type ProcessRequest = components['schemas']['ProcessRequest'];
export type ProcessStatus = components['schemas']['ProcessStatus'];
export type PutCredentialRequest = components['schemas']['PutCredentialRequest'];
export type Question = components['schemas']['Question'];
export type QuestionOption = components['schemas']['QuestionOption'];
export type QuestionOutcome = components['schemas']['QuestionOutcome'];
export type QuestionRejectRequest = components['schemas']['QuestionRejectRequest'];
export type QuestionReplyRequest = components['schemas']['QuestionReplyRequest'];
export type QuestionRequest = components['schemas']['QuestionRequest'];
export type QuestionResolved = components['schemas']['QuestionResolved'];
export type SendMessageRequest = components['schemas']['SendMessageRequest'];
export type SendMessageResponse = components['schemas']['SendMessageResponse'];
export type SessionBundle = components['schemas']['SessionBundle'];
export type SessionEndReason = components['schemas']['SessionEndReason'];
export type SessionEnded = components['schemas']['SessionEnded'];
export type SessionHandedOver = components['schemas']['SessionHandedOver'];
export type SessionInfo = components['schemas']['SessionInfo'];
export type SessionListResponse = components['schemas']['SessionListResponse'];
export type SessionStarted = components['schemas']['SessionStarted'];
export type SessionStatus = components['schemas']['SessionStatus'];
export type SessionWebhook = components['schemas']['SessionWebhook'];
export type StopReason = components['schemas']['StopReason'];
export type StoreBackend = components['schemas']['StoreBackend'];
export type StoreHealth = components['schemas']['StoreHealth'];
export type StoreStatus = components['schemas']['StoreStatus'];
export type StoredLoginInfo = components['schemas']['StoredLoginInfo'];
export type SystemPromptMode = components['schemas']['SystemPromptMode'];
export type TerminalMessage = components['schemas']['TerminalMessage'];
export type TerminalSize = components['schemas']['TerminalSize'];
export type TerminalTicket = components['schemas']['TerminalTicket'];
export type ToolCallOutcome = components['schemas']['ToolCallOutcome'];
export type ToolCallRejectRequest = components['schemas']['ToolCallRejectRequest'];
export type ToolCallRequest = components['schemas']['ToolCallRequest'];
export type ToolCallResolved = components['schemas']['ToolCallResolved'];
export type ToolCallResultRequest = components['schemas']['ToolCallResultRequest'];
export type ToolOutput = components['schemas']['ToolOutput'];
export type ToolPolicy = components['schemas']['ToolPolicy'];
export type ToolRestriction = components['schemas']['ToolRestriction'];
export type TurnChanges = components['schemas']['TurnChanges'];
export type TurnEnded = components['schemas']['TurnEnded'];
export type TurnLimiter = components['schemas']['TurnLimiter'];
export type TurnStarted = components['schemas']['TurnStarted'];
export type UniversalEvent = components['schemas']['UniversalEvent'];
export type UnknownEvent = components['schemas']['UnknownEvent'];
export type UnknownReason = components['schemas']['UnknownReason'];
export type UnreadableSession = components['schemas']['UnreadableSession'];
export type UploadSummary = components['schemas']['UploadSummary'];
export type Usage = components['schemas']['Usage'];
export type Webhook = components['schemas']['Webhook'];
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type WebhookDeliveryList = components['schemas']['WebhookDeliveryList'];
export type WebhookList = components['schemas']['WebhookList'];
export type WebhookPayload = components['schemas']['WebhookPayload'];
export type $defs = Record<string, never>;
export interface operations {
    listAgents: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AgentsResponse"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    installAgent: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Agent id */
                agent: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
            };
            cookie?: never;
        };
        /** @description What to install (optional: no body installs the default version unless the agent is already here) */
        requestBody?: {
            content: {
                "application/json": components["schemas"]["InstallRequest"];
            };
        };
        responses: {
            /** @description Installed (or already there). With `Accept: text/event-stream`: frames `event: progress` (`data`: an InstallProgress), then `event: installed` (`data`: an InstallResponse) or `event: error` (`data`: problem details, e.g. `installFailed`); the HTTP status is then 200 whatever the outcome. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["InstallResponse"];
                    "text/event-stream": unknown;
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown agent */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Installing is off in this daemon, or `SANDBOX_DAEMON_<AGENT>_PATH` names the binary to use (and it is not the version asked for) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The install failed (`agentError.type` is `installFailed`): a download answered an error status or broke off after retries, a checksum did not match, the platform has no build, the binary did not report the version, the disk is full, or a tool (Node.js, npm) is missing. Nothing partial is left behind. */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    agentModels: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Agent id */
                agent: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelsResponse"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown agent */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent is not installed (its models are asked of its binary) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent failed to list its models */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    agentModes: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Agent id */
                agent: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModesResponse"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown agent */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent lists its modes live and is not installed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent failed to list its modes */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listCredentials: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CredentialsResponse"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getCredential: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Agent id */
                agent: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredLoginInfo"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown agent, or no login stored for it (`credential-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The stored login cannot be read */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    putCredential: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Agent id */
                agent: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PutCredentialRequest"];
            };
        };
        responses: {
            /** @description Stored, replacing the login stored before */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredLoginInfo"];
                };
            };
            /** @description Stored */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StoredLoginInfo"];
                };
            };
            /** @description Malformed JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown agent */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body breaks its schema, or has neither or both of `login` and `token` (`invalid-body`); or it is not a login of that agent (`invalid-credential`: the detail says why) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store could not be written */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description No space left in the data dir */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deleteCredential: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Agent id */
                agent: "claude" | "codex" | "opencode" | "amp" | "pi" | "mock";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown agent, or no login stored for it (`credential-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store could not be written */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    health: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The daemon is up */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["HealthResponse"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    openapi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI document */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": unknown;
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listSessions: {
        parameters: {
            query?: {
                /** @description The `nextCursor` of the previous page. */
                cursor?: string;
                /** @description Page size (1–1000, default 100). */
                limit?: number;
                /** @description Only sessions with this status (unreadable sessions are then not listed). */
                status?: components["schemas"]["SessionStatus"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionListResponse"];
                };
            };
            /** @description Bad cursor, limit or status */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionInfo"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The stored record cannot be read by this build */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    createSession: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: a request with the key of an earlier one (within 24 hours) gets that request's answer again, marked `Idempotent-Replayed: true`, instead of acting twice. 1 to 255 printable ASCII characters; one key, one request (method, path and body). */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description Client-chosen session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateSessionRequest"];
            };
        };
        responses: {
            /** @description Session ready */
            201: {
                headers: {
                    /** @description `true` when this is the kept answer of an earlier request with the same `Idempotency-Key` */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreateSessionResponse"];
                };
            };
            /** @description A bad session id, `Idempotency-Key` or malformed JSON; or a choice only the daemon can judge (`invalid-session-config`): an agent mode, model or variant the agent does not offer, a `cwd` that does not exist, is not a directory or is outside the workspace root */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown agent */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The id is taken (by any stored session, ended or unreadable ones too), or the agent is not installed or not supported by this build (`agentError`); or the first request with this `Idempotency-Key` is still running after 30 s (`idempotency-key-in-use`, with `Retry-After`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body breaks its schema (`invalid-body`: a type, or a constraint its fields state), asks for what the agent cannot honour (`invalid-body`: `validateToken` for an agent whose capabilities say `validateToken: false`; `policy-unsupported`: a policy field its `policy` in `GET /agents` does not list, the detail naming the field), names what does not exist (`invalid-body`: an MCP stdio `command` not found, a `tools` entry naming a server not in `mcpServers`, a protected `env` name), or the provider rejected the credential (`agentError`); or the `Idempotency-Key` was used for a different request (`idempotency-key-reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent failed to start (`agentError`) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable, or the id is still being restored */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deleteSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description No such session */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    cancelTurn: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        /** @description Nothing, or an empty JSON object */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Cancelling */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CancelResponse"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description No turn is running, or another daemon sharing the store owns the session; or the session has ended (`session-ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    endSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        /** @description Nothing, or an empty JSON object */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description The ended session */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionInfo"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description No such session */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getEvents: {
        parameters: {
            query?: {
                /** @description Return events with `sequence > offset` (default 0). */
                offset?: number;
                /** @description At most this many events (1–1000, default 100). */
                limit?: number;
                /** @description Include each event's native JSON as `raw`. */
                includeRaw?: boolean;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventsResponse"];
                };
            };
            /** @description Bad offset or limit */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    streamEvents: {
        parameters: {
            query?: {
                /** @description Start after this sequence (default 0); the `Last-Event-ID` header wins when present. */
                offset?: number;
                /** @description Include each event's native JSON as `raw`. */
                includeRaw?: boolean;
            };
            header?: {
                /** @description Resume after this sequence */
                "Last-Event-ID"?: string;
            };
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A stream of Server-Sent Events, one frame per event: `id: <sequence>`, `event: <type>` and `data: <the event as JSON, a UniversalEvent>` lines, then an empty line. Comment lines (`:` ...) are keep-alives, or say why events wait (the store cannot write). The stream ends after `sessionEnded`, or when the daemon stops (reconnect with `Last-Event-ID`). */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": unknown;
                };
            };
            /** @description Bad offset or Last-Event-ID */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    exportSession: {
        parameters: {
            query?: {
                /** @description Include each event's native `raw` payload (default false). */
                includeRaw?: boolean;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The bundle */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionBundle"];
                };
            };
            /** @description A bad session id or query */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A turn is running (`turn-in-progress`), another daemon sharing the store owns the session, the session's record is unusable here, or its agent is not supported by this build (`agentError`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent's native state could not be read (`agentError`) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is still being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listFiles: {
        parameters: {
            query?: {
                /**
                 * @description The directory to list, relative to the working directory (default: the working
                 *     directory itself).
                 */
                path?: string;
                /** @description How many levels down to list (1: its own entries; default 1, at most 32). */
                depth?: number;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The entries */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileListing"];
                };
            };
            /** @description A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path leads outside the workspace through a symlink (`outside-workspace`), or the workspace's user may not read it (`file-permission-denied`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session, or nothing at the path (`file-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path is not a directory (`wrong-file-kind`), or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The URL is over 8 KiB (a long `path`) */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deleteFile: {
        parameters: {
            query: {
                /** @description What to delete, relative to the working directory (never the directory itself). */
                path: string;
                /** @description Delete a directory with everything in it (default false: only an empty one). */
                recursive?: boolean;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path leads outside the workspace (`outside-workspace`), or the workspace's user may not delete it (`file-permission-denied`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session, or nothing at the path (`file-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A directory that is not empty without `recursive` (`directory-not-empty`), the workspace itself (`workspace-root`: `.`), or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The URL is over 8 KiB (a long `path`) */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    archiveFiles: {
        parameters: {
            query?: {
                /** @description The directory to snapshot (default: the working directory). */
                path?: string;
                /** @description Take `.git`, `node_modules` and `.gitignore`d paths too (default false). */
                all?: boolean;
                /**
                 * @description Leave out files larger than this (default `--archive-max-file-bytes`, 1 MiB; at
                 *     most 1 GiB).
                 */
                maxFileBytes?: number;
                /**
                 * @description Refuse (409 `archive-too-large`) when the files taken add up to more (default
                 *     `--archive-max-bytes`, 12 MiB; at most 1 GiB).
                 */
                maxBytes?: number;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The snapshot */
            200: {
                headers: {
                    /** @description Their bytes, uncompressed */
                    "X-Archive-Bytes"?: number;
                    /** @description Regular files in it */
                    "X-Archive-Files"?: number;
                    /** @description Paths left out: over maxFileBytes, unreadable, or not a file, directory or symlink */
                    "X-Archive-Skipped"?: number;
                    /** @description The first 50 of them, comma-separated, percent-encoded */
                    "X-Archive-Skipped-Paths"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/gzip": string;
                };
            };
            /** @description A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path leads outside the workspace (`outside-workspace`), or the workspace's user may not read it (`file-permission-denied`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session, or nothing at the path (`file-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The files taken add up to more than maxBytes (`archive-too-large`), the path is not a directory (`wrong-file-kind`), or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The URL is over 8 KiB (a long `path`) */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    readFile: {
        parameters: {
            query: {
                /** @description The file, relative to the working directory. */
                path: string;
            };
            header?: {
                /** @description One byte range: `bytes=a-b`, `bytes=a-` or `bytes=-n` */
                Range?: string | null;
            };
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The whole file */
            200: {
                headers: {
                    /** @description `bytes` */
                    "Accept-Ranges"?: string;
                    /** @description When the file last changed */
                    "Last-Modified"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description The range asked for */
            206: {
                headers: {
                    /** @description `bytes a-b/size` */
                    "Content-Range"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/octet-stream": string;
                };
            };
            /** @description A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path leads outside the workspace through a symlink (`outside-workspace`), or the workspace's user may not read it (`file-permission-denied`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session, or no such file (`file-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path is not a regular file (`wrong-file-kind`; `workspace-root` for the workspace itself), or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The URL is over 8 KiB (a long `path`) */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The range starts past the end (`range-not-satisfiable`; `Content-Range: bytes *\/size`) */
            416: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    writeFile: {
        parameters: {
            query: {
                /** @description The file, relative to the working directory. */
                path: string;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        /** @description The file's new content (none: an empty file) */
        requestBody?: {
            content: {
                "application/octet-stream": string;
            };
        };
        responses: {
            /** @description Replaced */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileEntry"];
                };
            };
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FileEntry"];
                };
            };
            /** @description A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path leads outside the workspace (`outside-workspace`), or the workspace's user may not write there (`file-permission-denied`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The path is a directory, or a parent is a file (`wrong-file-kind`; `workspace-root` for the workspace itself), or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is over `--max-upload-bytes` */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The URL is over 8 KiB (a long `path`) */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The workspace's disk is full (`workspace-full`) */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    uploadFiles: {
        parameters: {
            query?: {
                /** @description The directory to unpack into, created if missing (default: the working directory). */
                path?: string;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        /** @description A tar archive, or a gzip-compressed one (told apart by its first bytes); none unpacks nothing */
        requestBody?: {
            content: {
                "application/gzip": string;
                "application/octet-stream": string;
                "application/x-gzip": string;
                "application/x-tar": string;
            };
        };
        responses: {
            /** @description Unpacked */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadSummary"];
                };
            };
            /** @description A bad session id or query, or a path that is absolute, names `..` or holds a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The directory leads outside the workspace (`outside-workspace`), or the workspace's user may not write there (`file-permission-denied`) */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body did not arrive in time */
            408: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description An entry meets a directory where it is a file, or a file where it needs a directory (`wrong-file-kind`), or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body, the unpacked bytes or the entries are over the limits (`payload-too-large`, `files-limit-exceeded`) */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The URL is over 8 KiB (a long `path`) */
            414: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The content type is not a tar or gzip type */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Not a tar or tar.gz archive (`invalid-archive`), or an entry that is never extracted (`archive-entry-refused`; nothing was written) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The workspace's disk is full (`workspace-full`) */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    handoverSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["HandoverRequest"];
            };
        };
        responses: {
            /** @description Handed over; the session as it stands now */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionInfo"];
                };
            };
            /** @description A bad session id or malformed JSON; or a mode or model the new agent does not offer (`invalid-session-config`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A turn is running (`turn-in-progress`), the session has ended, another daemon sharing the store owns it, or the new agent is not installed and cannot be, or cannot take a conversation (`agentError`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body breaks its schema or names no known agent (`invalid-body`), or the new agent cannot honour the session's policy (`policy-unsupported`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The new agent's history could not be written (`agentError`) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable, or the session is being restored */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    importSession: {
        parameters: {
            query?: {
                /**
                 * @description The working directory of the imported session (absolute, existing; default: the
                 *     bundle's).
                 */
                cwd?: string;
            };
            header?: never;
            path: {
                /** @description Id of the imported session */
                sessionId: string;
            };
            cookie?: never;
        };
        /** @description A bundle as exported, at most 1 GiB */
        requestBody: {
            content: {
                "application/json": components["schemas"]["SessionBundle"];
            };
        };
        responses: {
            /** @description Imported */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SessionInfo"];
                };
            };
            /** @description A bad session id or query; or a `cwd` that is not absolute, does not exist, is not a directory or is outside the workspace root (`invalid-session-config`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The id is taken (`session-exists`), or the agent is not supported by this build */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The bundle is over 1 GiB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not JSON */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The bundle cannot be imported (`invalid-bundle`): not a bundle, a newer `format`, events that do not match `eventsSha256` or `eventCount` or are not numbered from 1, a native file that does not match its `sha256` */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent's native state could not be filed (`agentError`) */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    sendMessage: {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes a retry safe: a request with the key of an earlier one (within 24 hours) gets that request's answer again, marked `Idempotent-Replayed: true`, instead of acting twice. 1 to 255 printable ASCII characters; one key, one request (method, path and body). */
                "Idempotency-Key"?: string;
                /** @description W3C trace context: the caller's span, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`. With trace export on (`--otlp-endpoint`), the turn's `invoke_agent` span is its child, in its trace. A malformed value is ignored (a new trace starts), never refused. */
                traceparent?: string | null;
                /** @description W3C trace context: vendor entries carried along with `traceparent` (dropped alone when malformed). */
                tracestate?: string | null;
            };
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["SendMessageRequest"];
            };
        };
        responses: {
            /** @description Turn started */
            202: {
                headers: {
                    /** @description `true` when this is the kept answer of an earlier request with the same `Idempotency-Key` */
                    "Idempotent-Replayed"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SendMessageResponse"];
                };
            };
            /** @description A bad session id or `Idempotency-Key` */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A turn is running, or another daemon sharing the store owns the session; or the session has ended (`session-ended`); or the first request with this `Idempotency-Key` is still running after 30 s (`idempotency-key-in-use`, with `Retry-After`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body breaks its schema (`invalid-body`), an image is unusable (`invalid-body`: `data` that is not base64, bytes that are not its `mediaType`, over 5 MiB, a `path` missing or outside the working directory), or the agent takes no images of its type (`policy-unsupported`, naming the part); or the `Idempotency-Key` was used for a different request (`idempotency-key-reused`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent could not take the message */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable, or the session is being restored */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    replyPermission: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Permission request id */
                permissionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["PermissionReplyRequest"];
            };
        };
        responses: {
            /** @description Answered */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Already resolved, or the agent no longer has the request (`agent-request-gone`: it restarted or settled it), or another daemon sharing the store owns the session; or the session has ended (`session-ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent failed to take the answer */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is still being restored, or its store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listProcesses: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Its processes */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessList"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    startProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProcessRequest"];
            };
        };
        responses: {
            /** @description Started */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessInfo"];
                };
            };
            /** @description A bad session id, malformed JSON, or a `cwd` holding a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The `cwd` leads outside the workspace (`outside-workspace`) or the agent user may not enter it */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session, or no such `cwd` (`file-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session has ended, `--max-processes` run already (`too-many-processes`), the `cwd` is not a directory, or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body breaks its schema (a `cwd` that is absolute or names `..` among it) or sets a protected variable (`invalid-body`), or the program cannot be started (`process-not-started`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    runProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ProcessRequest"];
            };
        };
        responses: {
            /** @description It ended (or was killed at its timeout: `timedOut`) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessOutput"];
                };
            };
            /** @description A bad session id, malformed JSON, or a `cwd` holding a name over 255 bytes (`invalid-path`) */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The `cwd` leads outside the workspace (`outside-workspace`) or the agent user may not enter it */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session, or no such `cwd` (`file-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session has ended, `--max-processes` run already (`too-many-processes`), the `cwd` is not a directory, or another daemon sharing the store owns the session */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body breaks its schema (a `cwd` that is absolute or names `..` among it) or sets a protected variable (`invalid-body`), or the program cannot be started (`process-not-started`) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Process id */
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessInfo"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or process (`process-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deleteProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Process id */
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Forgotten */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or process (`process-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description It is still running (`process-running`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    killProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Process id */
                processId: string;
            };
            cookie?: never;
        };
        /** @description Nothing, or an empty JSON object */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Signalled; the process as it stands */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessInfo"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or process (`process-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    processLogs: {
        parameters: {
            query?: {
                /**
                 * @description Chunks with a sequence above this (default 0: from the start; with `follow`, a
                 *     `Last-Event-ID` header wins).
                 */
                offset?: number;
                /** @description Stream the log as SSE: what is kept, then live, until the process ends. */
                follow?: boolean;
            };
            header?: {
                /** @description With `follow`: the last sequence seen */
                "Last-Event-ID"?: string;
            };
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Process id */
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The log after `offset`; with `follow=true` an SSE stream of `log` (a LogChunk), `gap` (`{from, to}`) and `exit` (a ProcessInfo) frames */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessLogs"];
                    "text/event-stream": string;
                };
            };
            /** @description A bad query or `Last-Event-ID`, or a follow from past the log's last sequence */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or process (`process-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    stopProcess: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Process id */
                processId: string;
            };
            cookie?: never;
        };
        /** @description Nothing, or an empty JSON object */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Signalled; the process as it stands (its end shows in its log and info) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProcessInfo"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or process (`process-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    openTerminal: {
        parameters: {
            query?: {
                /**
                 * @description A ticket from `POST .../terminal-ticket` (needed unless the request carries the
                 *     daemon's token, or the daemon runs with `--no-token`).
                 */
                ticket?: string;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Process id */
                processId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Switched to the WebSocket protocol: the terminal, as described above */
            101: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Not a WebSocket handshake (`websocket-required`), or a bad query */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Neither the daemon's token nor a good ticket (`terminal-ticket-refused`: unknown, used, expired or for another process) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or process (`process-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The process runs without a terminal (`not-a-terminal`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    createTerminalTicket: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Process id */
                processId: string;
            };
            cookie?: never;
        };
        /** @description Nothing, or an empty JSON object */
        requestBody?: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description A ticket for `GET .../terminal?ticket=` */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TerminalTicket"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or process (`process-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The process runs without a terminal (`not-a-terminal`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    rejectQuestion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Question request id */
                questionId: string;
            };
            cookie?: never;
        };
        /** @description Empty object */
        requestBody: {
            content: {
                "application/json": components["schemas"]["QuestionRejectRequest"];
            };
        };
        responses: {
            /** @description Rejected */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Already resolved, or the agent no longer has the request (`agent-request-gone`: it restarted or settled it), or another daemon sharing the store owns the session; or the session has ended (`session-ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent failed to take the answer */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is still being restored, or its store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    replyQuestion: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Question request id */
                questionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["QuestionReplyRequest"];
            };
        };
        responses: {
            /** @description Answered */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Answers do not fit the questions */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Already resolved, or the agent no longer has the request (`agent-request-gone`: it restarted or settled it), or another daemon sharing the store owns the session; or the session has ended (`session-ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The agent failed to take the answer */
            502: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is still being restored, or its store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    toolCallReject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Tool call id (`toolCallRequested.callId`) */
                callId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ToolCallRejectRequest"];
            };
        };
        responses: {
            /** @description Rejected */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or call */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Already resolved (`tool-call-resolved`), or another daemon sharing the store owns the session; or the session has ended (`session-ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body does not match the schema */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is still being restored, or its store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    toolCallResult: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Tool call id (`toolCallRequested.callId`) */
                callId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ToolCallResultRequest"];
            };
        };
        responses: {
            /** @description Answered */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session or call */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Already resolved (`tool-call-resolved`: answered, rejected, or cancelled with its turn), or another daemon sharing the store owns the session; or the session has ended (`session-ended`) */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The output is unusable (`invalid-body`: an image of unknown type, over 5 MiB, not the type it claims, or outside the workspace) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The session is still being restored, or its store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    turnChanges: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
                /** @description Turn id (`turn_1`, ...) */
                turnId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description What the turn changed */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TurnChanges"];
                };
            };
            /** @description A bad session id */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session, or the turn's changes are not known (`changes-not-found`): no such turn, it ended before this daemon looked at the workspace (a restart mid-turn, an agent that failed to start), changes are not tracked (`--no-turn-changes`), or the workspace holds more files than tracked */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The turn is still running (`turn-in-progress`); its changes are known once it ends */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    uiMessageStream: {
        parameters: {
            query?: {
                /**
                 * @description The turn (`turn_1`, ...; a `sendMessage` answer's `turnId`). Absent: the running
                 *     turn, or 204 when none runs.
                 */
                turnId?: string;
            };
            header?: never;
            path: {
                /** @description Session id */
                sessionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The AI SDK UI message stream (header `x-vercel-ai-ui-message-stream: v1`): Server-Sent Events, each a `data: <chunk as JSON>` line and an empty line, ending with `data: [DONE]` once the turn ended (a stream cut short, as when the daemon stops, has no `[DONE]`: read it again). Comment lines (`:` ...) are keep-alives, or say why events wait (the store cannot write). Chunks, with the `ai` package's `uiMessageChunkSchema` fields: `start` (`messageId` = `msg_<turnId>`, `messageMetadata` `{turnId}`), `start-step`; the assistant's messages as `text-start` / `text-delta` / `text-end` and its reasoning as `reasoning-start` / `reasoning-delta` / `reasoning-end` (`id` = the item's id); its tool calls, commands (tool `commandExecution`: input `{command, cwd}`, output `{exitCode, output}`) and file changes (tool `fileChange`: `{changes: [{path, changeKind, diff}]}`) as dynamic, `providerExecuted` tool parts (`toolCallId` = the item's id): `tool-input-start`, `tool-input-available`, then `tool-output-available` or `tool-output-error`; a permission request as `tool-approval-request` (`approvalId` = the permission id, answered with `replyPermission`; `approvalDescriptor` = the `PermissionRequest`; on the part of the item it gates, or on a part of its own with the request's id) and its resolution as `tool-approval-response` (and `tool-output-denied` when rejected); a question request as a `data-question` part (`id` = the question id, `data` = the `QuestionRequest` with `status: pending`), replaced under the same id by its resolution (`status` `answered`, `rejected` or `cancelled`, with `answers`); a client host tool call as a tool part the client answers (`toolCallId` = the call id, for `toolCallResult`); an agent error as `error` (`errorText`); the turn's end as `finish-step`, then `finish` (`finishReason`: `stop`, `length` (maxTokens), `tool-calls` (toolStop), `error`, `other`; `messageMetadata` `{turnId, stopReason, usage, changes}`), or for a cancelled turn `message-metadata` and `abort`. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description No `turnId` was given and no turn is running: nothing to resume */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description An empty `turnId`, or an unknown query parameter */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Unknown session (`session-not-found`), or the session has no turn `turnId` (`turn-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Being restored, or the store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listWebhooks: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookList"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    createWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateWebhookRequest"];
            };
        };
        responses: {
            /** @description Registered */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CreatedWebhook"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is larger than the limit */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body is not declared as `application/json` */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The body breaks its schema (`invalid-body`): a URL that is not http(s), an event type that is unknown, repeated or `itemDelta`, a secret of the wrong length */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    getWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook id */
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Webhook"];
                };
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description No such webhook (`webhook-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    deleteWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description Webhook id */
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Invalid path or query parameter, or malformed JSON body */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description No such webhook (`webhook-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store has no space left */
            507: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description The `nextCursor` of the previous page. */
                cursor?: string;
                /** @description Page size (1–500, default 100). */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description Webhook id */
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            /** @description Bad cursor or limit */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description Missing or wrong bearer token */
            401: {
                headers: {
                    /** @description `Bearer` */
                    "WWW-Authenticate"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description No such webhook (`webhook-not-found`) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description A fault of the daemon */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
            /** @description The store is unavailable */
            503: {
                headers: {
                    /** @description Seconds to wait before retrying */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/problem+json": components["schemas"]["ProblemDetails"];
                };
            };
        };
    };
}
