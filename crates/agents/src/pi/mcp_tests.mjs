// The MCP bridge (`mcp.js`) against a small Streamable HTTP server of its own, on
// 127.0.0.1, with a stand-in for Pi's extension API: `node mcp_tests.mjs <bridge.mjs>
// <dir>`. Run by `pi::mcp::tests` when Node is on PATH; prints `ok` or fails.
import assert from "node:assert/strict";
import http from "node:http";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [bridgePath, dir] = process.argv.slice(2);

// A server answering as JSON or as an event stream (split across chunks, with a priming
// event, a comment, a notification and a ping before the response), forgetting its
// sessions on demand.
function server(mode) {
  const state = { seen: [], sessions: 0, forget: false, held: [] };
  const reply = (res, message) => {
    const text = JSON.stringify(message);
    if (mode === "json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify([message]));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("id: 0\nretry: 100\ndata:\n\n: a comment\r\n");
    res.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n');
    res.write('data: {"jsonrpc":"2.0","id":"srv-1","method":"ping"}\n\n');
    const half = Math.floor(text.length / 2);
    res.write(`event: message\r\ndata: ${text.slice(0, half)}`);
    // Chained, not two timers: a late event loop runs timers of different durations out
    // of order, and an end before the second half cut the answer in two (a CI flake).
    setTimeout(() => {
      res.write(`${text.slice(half)}\r`);
      setTimeout(() => res.end("\n\r\n"), 10);
    }, 10);
  };
  const tools = [
    [{ name: "echo", description: "Echo", inputSchema: { type: "object", properties: { text: { type: "string" } } } }],
    [{ name: "fail" }, { name: "delete_everything" }, { name: "img" }, { name: "my.tool" }, { name: "slow" }, { name: "bad" }],
  ];
  const http_ = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const msg = JSON.parse(body);
      const session = req.headers["mcp-session-id"];
      state.seen.push({
        method: msg.method ?? (msg.result ? "result" : "error"),
        session,
        auth: req.headers.authorization,
        version: req.headers["mcp-protocol-version"],
        accept: req.headers.accept,
        params: msg.params,
      });
      if (state.forget && session !== undefined && session !== `s${state.sessions}`) {
        res.writeHead(404);
        res.end();
        return;
      }
      if (msg.method === undefined || msg.id === undefined) {
        res.writeHead(202);
        res.end();
        return;
      }
      const answer = (result) => reply(res, { jsonrpc: "2.0", id: msg.id, result });
      switch (msg.method) {
        case "initialize":
          res.setHeader("mcp-session-id", `s${++state.sessions}`);
          return answer({ protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "t", version: "1" } });
        case "tools/list":
          return msg.params.cursor === "p2" ? answer({ tools: tools[1] }) : answer({ tools: tools[0], nextCursor: "p2" });
        case "tools/call":
          switch (msg.params.name) {
            case "echo":
              return answer({ content: [{ type: "text", text: `echo:${msg.params.arguments.text}` }] });
            case "fail":
              return answer({ content: [{ type: "text", text: "it broke" }], isError: true });
            case "img":
              return answer({ content: [{ type: "image", data: "AAAA", mimeType: "image/png" }, { type: "text", text: "a picture" }] });
            case "my.tool":
              return answer({ content: [], structuredContent: { a: 1 } });
            case "slow":
              res.writeHead(200, { "content-type": "text/event-stream" });
              res.write(": waiting\n\n");
              state.held.push(res);
              return undefined;
            default:
              return reply(res, { jsonrpc: "2.0", id: msg.id, error: { code: -32602, message: "unknown tool" } });
          }
        default:
          return reply(res, { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no such method" } });
      }
    });
  });
  return new Promise((resolve) =>
    http_.listen(0, "127.0.0.1", () => resolve({ state, url: `http://127.0.0.1:${http_.address().port}/mcp` })),
  );
}

const sse = await server("sse");
const json = await server("json");
const config = join(dir, "config.json");
writeFileSync(
  config,
  JSON.stringify({
    servers: {
      s: { url: sse.url, headers: { Authorization: "Bearer secret-1" }, deny: ["delete_everything"] },
      j: { url: json.url, allow: ["echo", "bad"] },
      dead: { url: "http://127.0.0.1:1/mcp" },
      badheader: { url: json.url, headers: { "X-Bad": "secret-2\nx" } },
    },
    builtinTools: ["read"],
  }),
);
process.env.SANDBOX_PI_MCP_CONFIG = config;

const logged = [];
const write = process.stderr.write.bind(process.stderr);
process.stderr.write = (text) => logged.push(String(text)) && true;
const { default: bridge } = await import(pathToFileURL(bridgePath).href);
const tools = {};
const handlers = {};
let active;
await bridge({
  registerTool: (tool) => (tools[tool.name] = tool),
  on: (event, handler) => (handlers[event] = handler),
  setActiveTools: (names) => (active = names),
});
process.stderr.write = write;

// Registration: every page, the policy's allow and deny, names sanitized; dead and
// broken servers left out with a word on stderr that holds no secret.
const names = Object.keys(tools).sort();
assert.deepEqual(names, [
  "mcp__j__bad",
  "mcp__j__echo",
  "mcp__s__bad",
  "mcp__s__echo",
  "mcp__s__fail",
  "mcp__s__img",
  "mcp__s__my_tool",
  "mcp__s__slow",
]);
assert.deepEqual(tools.mcp__s__fail.parameters, { type: "object", properties: {} });
assert.equal(tools.mcp__s__echo.description, "Echo");
handlers.session_start({}, {});
assert.deepEqual(active.slice(0, 1), ["read"]);
assert.deepEqual(active.slice(1).sort(), names);
const log = logged.join("");
assert.match(log, /server "dead" is left out/);
assert.match(log, /server "badheader" is left out: its header "X-Bad"/);
assert.ok(!log.includes("secret"), log);

// The handshake: session id and protocol version sent back, the headers on every request.
const first = sse.state.seen
  .filter((r) => r.method !== "result")
  .slice(0, 4)
  .map((r) => [r.method, r.session, r.version]);
assert.deepEqual(first, [
  ["initialize", undefined, undefined],
  ["notifications/initialized", "s1", "2025-06-18"],
  ["tools/list", "s1", "2025-06-18"],
  ["tools/list", "s1", "2025-06-18"],
]);
assert.ok(sse.state.seen.every((r) => r.auth === "Bearer secret-1"));
assert.ok(sse.state.seen.every((r) => r.accept === "application/json, text/event-stream"));

// Results: text, images, structured content; `isError` marked for the tool_result hook;
// a JSON-RPC error thrown.
const call = async (name, args = {}, signal) => tools[name].execute("c", args, signal);
assert.deepEqual((await call("mcp__s__echo", { text: "hi" })).content, [{ type: "text", text: "echo:hi" }]);
assert.deepEqual((await call("mcp__j__echo", { text: "yo" })).content, [{ type: "text", text: "echo:yo" }]);
const failed = await call("mcp__s__fail");
assert.deepEqual(handlers.tool_result({ toolName: "mcp__s__fail", details: failed.details }), { isError: true });
const image = await call("mcp__s__img");
assert.deepEqual(image.content[0], { type: "image", data: "AAAA", mimeType: "image/png" });
assert.equal(handlers.tool_result({ toolName: "mcp__s__img", details: image.details }), undefined);
assert.deepEqual((await call("mcp__s__my_tool")).content, [{ type: "text", text: '{"a":1}' }]);
await assert.rejects(call("mcp__j__bad"), /tools\/call: unknown tool \(code -32602\)/);
const pinged = sse.state.seen.find((r) => r.method === "result");
assert.ok(pinged, "the server's ping was answered");

// A forgotten session: a new one, once, for calls that find out together.
sse.state.forget = true;
sse.state.sessions += 1;
await Promise.all([call("mcp__s__echo", { text: "a" }), call("mcp__s__echo", { text: "b" })]);
assert.equal(sse.state.seen.filter((r) => r.method === "initialize").length, 2);

// An aborted call ends at once and is cancelled for the server.
// It is aborted once the server holds it (a fixed timer raced the request on a busy machine).
const abort = new AbortController();
const held = sse.state.held.length;
const abortWhenHeld = setInterval(() => {
  if (sse.state.held.length > held) {
    clearInterval(abortWhenHeld);
    abort.abort();
  }
}, 5);
await assert.rejects(call("mcp__s__slow", {}, abort.signal), { name: "AbortError" });
for (let i = 0; i < 400 && !sse.state.seen.some((r) => r.method === "notifications/cancelled"); i++) {
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const slow = sse.state.seen.findLast((r) => r.method === "tools/call");
const cancelled = sse.state.seen.filter((r) => r.method === "notifications/cancelled");
assert.equal(cancelled.length, 1);
assert.equal(slow.params.name, "slow");
assert.ok(Number.isInteger(cancelled[0].params.requestId));

console.log("ok");
process.exit(0);
