// sandbox-daemon's MCP bridge for Pi (written into the session's agent dir and loaded with
// `--extension`). Pi has no MCP client of its own; this is one, over Streamable HTTP only:
// JSON-RPC 2.0 POSTs whose answers come as JSON or as a server-sent event stream. At load
// it reads its servers from the JSON file `$SANDBOX_PI_MCP_CONFIG` names,
//
//   {"servers": {"<name>": {"url": "…", "headers": {…}, "allow": ["tool"]?, "deny": ["tool"]?}},
//    "builtinTools": ["read", …]?}
//
// lists each server's tools and registers each one it may offer as the Pi tool
// `mcp__<server>__<tool>`. A server that cannot be reached is reported on stderr and left
// out; Pi goes on. `builtinTools`, when given, are the only built-in tools left active
// (Pi's `--tools` allow-list would drop this extension's tools, so the daemon passes the
// list here instead). Header values are secrets: they are sent to their server and never
// written anywhere else. Nothing here writes to stdout, which is Pi's RPC channel.
//
// Pi's own `tool_call` hooks (the daemon's permission extension) gate these tools like any
// other. A call has no time limit of its own (a human may be answering it, and Pi's CLI
// makes Node's HTTP client wait without one: undici's headersTimeout and bodyTimeout 0):
// only Pi's abort signal ends it early, and the server is told (`notifications/cancelled`).
import { readFileSync } from "node:fs";

const CONFIG_VAR = "SANDBOX_PI_MCP_CONFIG";
const PROTOCOL_VERSION = "2025-06-18";
const CLIENT_INFO = { name: "sandbox-daemon-pi", version: "1" };
// How long connecting to a server and listing its tools may take at start-up.
const LIST_LIMIT_MS = 20_000;
// The most pages of `tools/list` followed (a server whose cursors never end).
const MAX_PAGES = 100;
// The most characters of a server's error answer quoted in a message.
const QUOTE_LIMIT = 500;
// What `send` answers for an HTTP 404: the server forgot the session.
const STALE = Symbol("stale session");

function log(message) {
  process.stderr.write(`sandbox-daemon mcp: ${message}\n`);
}

function describe(error) {
  const cause = error?.cause;
  const detail = cause?.code ?? cause?.message;
  const message = error?.message ?? String(error);
  return detail && !message.includes(detail) ? `${message} (${detail})` : message;
}

// A tool name the model's providers take: `[A-Za-z0-9_-]`, anything else as `_`.
function sanitize(name) {
  return String(name).replace(/[^A-Za-z0-9_-]/g, "_");
}

// An error the server answered (a JSON-RPC error object).
class RpcError extends Error {
  constructor(method, error) {
    super(`${method}: ${error?.message ?? "error"}${error?.code !== undefined ? ` (code ${error.code})` : ""}`);
  }
}

// Reads the JSON-RPC response with `id` from a server-sent event stream: events are
// separated by blank lines, an event's `data:` lines are joined by newlines; events that
// are not JSON (a stream's priming event) and other messages are skipped, requests the
// server makes are answered through `answer`.
async function readEventStream(body, id, answer) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let data = [];
  // One line of the stream; the response once a blank line ends the event holding it.
  const line = (text) => {
    if (text === "") {
      const event = data.join("\n");
      data = [];
      if (event.trim() === "") return undefined;
      try {
        return pick(JSON.parse(event), id, answer);
      } catch {
        return undefined;
      }
    }
    const colon = text.indexOf(":");
    if (colon === 0) return undefined;
    const field = colon < 0 ? text : text.slice(0, colon);
    if (field === "data") {
      const value = colon < 0 ? "" : text.slice(colon + 1);
      data.push(value.startsWith(" ") ? value.slice(1) : value);
    }
    return undefined;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      for (;;) {
        const end = buffer.search(/\r\n|\r|\n/);
        // A `\r` at the end may be the first half of `\r\n`: wait for the next chunk.
        if (end < 0 || (end === buffer.length - 1 && buffer[end] === "\r")) break;
        const found = line(buffer.slice(0, end));
        buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
        if (found) return found;
      }
    }
    // The stream ended: its last line and event, even without their line ends.
    const found = (buffer !== "" && line(buffer.replace(/\r$/, ""))) || line("");
    if (found) return found;
    throw new Error("the server ended its event stream without answering");
  } finally {
    reader.cancel().catch(() => {});
  }
}

// The response with `id` among one message or a batch; requests the server makes are
// handed to `answer`.
function pick(parsed, id, answer) {
  for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
    if (!message || typeof message !== "object") continue;
    if (message.id === id && ("result" in message || "error" in message)) return message;
    if (typeof message.method === "string" && message.id !== undefined && message.id !== null) {
      answer(message);
    }
  }
  return undefined;
}

// One MCP server, spoken to over Streamable HTTP.
class McpServer {
  constructor(name, config) {
    this.name = name;
    this.url = config.url;
    this.extraHeaders = config.headers ?? {};
    // A header Node refuses would throw with its value in the message: found here, by name.
    for (const [header, value] of Object.entries(this.extraHeaders)) {
      try {
        new Headers([[header, String(value)]]);
      } catch {
        this.invalid = `its header "${header}" is not a valid HTTP header`;
      }
    }
    this.session = undefined;
    this.protocol = undefined;
    this.nextId = 1;
    this.connecting = undefined;
  }

  headers() {
    const headers = new Headers(this.extraHeaders);
    headers.set("content-type", "application/json");
    headers.set("accept", "application/json, text/event-stream");
    if (this.session !== undefined) headers.set("mcp-session-id", this.session);
    if (this.protocol !== undefined) headers.set("mcp-protocol-version", this.protocol);
    return headers;
  }

  post(message, signal) {
    return fetch(this.url, {
      method: "POST",
      headers: this.headers(),
      body: JSON.stringify(message),
      signal,
    });
  }

  // `initialize`, then `notifications/initialized`: a new MCP session.
  async connect(signal) {
    if (this.invalid) throw new Error(this.invalid);
    this.session = undefined;
    this.protocol = undefined;
    const result = await this.request(
      "initialize",
      { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO },
      signal,
      false,
    );
    this.protocol = typeof result?.protocolVersion === "string" ? result.protocolVersion : PROTOCOL_VERSION;
    await this.notify("notifications/initialized", undefined, signal);
  }

  // A new MCP session after the server forgot `stale` (HTTP 404), shared by the calls
  // that found out at once.
  async reconnect(stale) {
    if (this.connecting) return this.connecting;
    if (this.session !== stale) return undefined;
    this.connecting = this.connect(AbortSignal.timeout(LIST_LIMIT_MS)).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  async notify(method, params, signal) {
    const message = { jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) };
    const response = await this.post(message, signal);
    await response.body?.cancel().catch(() => {});
    if (!response.ok) throw new Error(`${method}: HTTP ${response.status}`);
  }

  // One request and its result; a JSON-RPC error throws. A session the server no longer
  // knows (HTTP 404) is started again, once.
  async request(method, params, signal, retry = true) {
    const session = this.session;
    const answered = await this.send(method, params, signal);
    if (answered !== STALE) return answered;
    if (session === undefined || !retry) throw new Error(`${method}: HTTP 404`);
    await this.reconnect(session);
    return this.request(method, params, signal, false);
  }

  // Sends one request: its result, or `STALE` for an HTTP 404.
  async send(method, params, signal) {
    const id = this.nextId++;
    // An aborted request is cancelled for the server too (never `initialize`).
    const cancel = () => {
      const reason = { requestId: id, reason: "Pi aborted the call" };
      this.notify("notifications/cancelled", reason, AbortSignal.timeout(5_000)).catch(() => {});
    };
    if (method !== "initialize") signal?.addEventListener("abort", cancel, { once: true });
    try {
      const response = await this.post({ jsonrpc: "2.0", id, method, params }, signal);
      if (response.status === 404) {
        await response.body?.cancel().catch(() => {});
        return STALE;
      }
      if (!response.ok) {
        const text = (await response.text().catch(() => "")).slice(0, QUOTE_LIMIT).trim();
        throw new Error(`${method}: HTTP ${response.status}${text ? `: ${text}` : ""}`);
      }
      const sessionId = response.headers.get("mcp-session-id");
      if (sessionId) this.session = sessionId;
      const type = (response.headers.get("content-type") ?? "").toLowerCase();
      const answer = (request) => this.answer(request);
      let message;
      if (type.startsWith("text/event-stream")) {
        message = await readEventStream(response.body, id, answer);
      } else {
        message = pick(await response.json(), id, answer);
        if (!message) throw new Error(`${method}: the server's answer has no response to request ${id}`);
      }
      if (message.error) throw new RpcError(method, message.error);
      return message.result;
    } finally {
      signal?.removeEventListener("abort", cancel);
    }
  }

  // Answers a request the server makes on a response stream: `ping`, and nothing else
  // (this client offers no capabilities).
  answer(request) {
    const reply =
      request.method === "ping"
        ? { jsonrpc: "2.0", id: request.id, result: {} }
        : { jsonrpc: "2.0", id: request.id, error: { code: -32601, message: `${request.method} is not supported` } };
    this.post(reply, AbortSignal.timeout(5_000))
      .then((response) => response.body?.cancel())
      .catch(() => {});
  }

  // Every tool the server lists, following `nextCursor`.
  async listTools(signal) {
    const tools = [];
    let cursor;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.request("tools/list", cursor === undefined ? {} : { cursor }, signal);
      if (Array.isArray(result?.tools)) tools.push(...result.tools);
      cursor = result?.nextCursor;
      if (typeof cursor !== "string" || cursor === "") return tools;
    }
    log(`server "${this.name}": more than ${MAX_PAGES} pages of tools; the rest are left out`);
    return tools;
  }

  callTool(name, args, signal) {
    return this.request("tools/call", { name, arguments: args ?? {} }, signal);
  }
}

// An MCP tool result's content as Pi's: text and images as they are, anything else as
// text describing it.
function piContent(result) {
  const parts = [];
  for (const part of Array.isArray(result?.content) ? result.content : []) {
    switch (part?.type) {
      case "text":
        parts.push({ type: "text", text: String(part.text ?? "") });
        break;
      case "image":
        parts.push({ type: "image", data: part.data, mimeType: part.mimeType });
        break;
      case "resource": {
        const resource = part.resource ?? {};
        if (typeof resource.text === "string") {
          parts.push({ type: "text", text: resource.text });
        } else if (typeof resource.blob === "string" && /^image\//.test(resource.mimeType ?? "")) {
          parts.push({ type: "image", data: resource.blob, mimeType: resource.mimeType });
        } else {
          parts.push({ type: "text", text: `[resource ${resource.uri ?? ""} (${resource.mimeType ?? "binary"})]` });
        }
        break;
      }
      case "resource_link":
        parts.push({ type: "text", text: `[resource ${part.uri ?? ""}${part.name ? ` "${part.name}"` : ""}]` });
        break;
      default:
        parts.push({ type: "text", text: `[${part?.type ?? "unknown"} content${part?.mimeType ? ` (${part.mimeType})` : ""}]` });
    }
  }
  if (parts.length === 0 && result?.structuredContent !== undefined) {
    parts.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  if (parts.length === 0) parts.push({ type: "text", text: "(no output)" });
  return parts;
}

// A tool's input schema as Pi's parameters: the server's JSON Schema, an object schema.
function parameters(schema) {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) {
    return { type: "object", properties: {} };
  }
  return schema.type === undefined ? { ...schema, type: "object" } : schema;
}

// Whether the session's tool policy lets the model have `tool` of `config`'s server.
function offered(config, tool) {
  const allow = Array.isArray(config.allow) ? config.allow : undefined;
  const deny = Array.isArray(config.deny) ? config.deny : [];
  return (allow === undefined || allow.includes(tool)) && !deny.includes(tool);
}

// Connects to one server and lists its tools, within the start-up limit; `[]` when it
// cannot be reached.
async function discover(server) {
  try {
    const signal = AbortSignal.timeout(LIST_LIMIT_MS);
    await server.connect(signal);
    return await server.listTools(signal);
  } catch (error) {
    log(`server "${server.name}" is left out: ${describe(error)}`);
    return [];
  }
}

function readConfig() {
  const path = process.env[CONFIG_VAR];
  if (!path) {
    log(`${CONFIG_VAR} is not set: no MCP servers`);
    return undefined;
  }
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    log(`the MCP config cannot be read: ${describe(error)}`);
    return undefined;
  }
}

export default async function (pi) {
  const config = readConfig();
  if (!config) return;
  const entries = Object.entries(config.servers ?? {}).filter(
    ([, server]) => server && typeof server.url === "string",
  );
  const servers = entries.map(([name, server]) => [new McpServer(name, server), server]);
  const listed = await Promise.all(servers.map(([server]) => discover(server)));
  const registered = [];
  servers.forEach(([server, serverConfig], index) => {
    for (const tool of listed[index]) {
      if (!tool || typeof tool.name !== "string" || !offered(serverConfig, tool.name)) continue;
      const name = `mcp__${sanitize(server.name)}__${sanitize(tool.name)}`;
      if (registered.includes(name)) {
        log(`server "${server.name}": a second tool named ${name} is left out`);
        continue;
      }
      registered.push(name);
      pi.registerTool({
        name,
        label: tool.title ?? `${tool.name} (${server.name})`,
        description: tool.description ?? `The tool ${tool.name} of the MCP server ${server.name}.`,
        parameters: parameters(tool.inputSchema),
        async execute(_toolCallId, params, signal) {
          const result = await server.callTool(tool.name, params, signal);
          return {
            content: piContent(result),
            details: { mcp: { server: server.name, tool: tool.name, isError: result?.isError === true } },
          };
        },
      });
    }
  });
  // A result the server marked `isError` is an error result for the model (a tool that
  // returns cannot say so itself; throwing would lose its images).
  pi.on("tool_result", (event) => {
    if (registered.includes(event.toolName) && event.details?.mcp?.isError === true) {
      return { isError: true };
    }
    return undefined;
  });
  if (Array.isArray(config.builtinTools)) {
    pi.on("session_start", () => {
      pi.setActiveTools([...config.builtinTools, ...registered]);
    });
  }
}
