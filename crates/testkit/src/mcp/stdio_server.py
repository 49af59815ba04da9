#!/usr/bin/env python3
"""A tiny MCP server on stdio for sandbox-testkit (no dependencies beyond Python 3).

Speaks newline-delimited JSON-RPC 2.0: `initialize` (the client's protocolVersion is
echoed back when supported, else the newest supported one), notifications (ignored),
`tools/list`, `tools/call`, `ping`; anything else with an id gets -32601.

Tools: `echo {text}` -> `<MCP_ECHO_PREFIX>echo:<text>`; `delete_everything {}` (marked
destructive) -> `nothing deleted`. Each `tools/call` is appended as one JSON line
`{"tool", "arguments", "prefix"}` to the calls file: argv[1], else $MCP_CALLS_FILE, else
nowhere. `prefix` is the value of $MCP_ECHO_PREFIX (null when unset), so a test can tell
that per-server environment reached this process.
"""

import json
import os
import sys

SUPPORTED = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

TOOLS = [
    {
        "name": "echo",
        "title": "Echo",
        "description": "Echoes the given text back, prefixed with 'echo:'.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "Text to echo"}},
            "required": ["text"],
        },
        # Not read-only, open world: Codex asks before calling it.
        "annotations": {"readOnlyHint": False, "openWorldHint": True},
    },
    {
        "name": "delete_everything",
        "title": "Delete everything",
        "description": "Pretends to delete everything (does nothing).",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": False, "destructiveHint": True},
    },
]


def calls_file():
    if len(sys.argv) > 1 and sys.argv[1]:
        return sys.argv[1]
    return os.environ.get("MCP_CALLS_FILE")


def record(tool, arguments):
    path = calls_file()
    if not path:
        return
    line = {"tool": tool, "arguments": arguments, "prefix": os.environ.get("MCP_ECHO_PREFIX")}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")


def text_result(text, is_error=False):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def call_tool(params):
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "echo":
        record(name, arguments)
        prefix = os.environ.get("MCP_ECHO_PREFIX", "")
        return text_result(prefix + "echo:" + str(arguments.get("text", "")))
    if name == "delete_everything":
        record(name, arguments)
        return text_result("nothing deleted")
    return None


def handle(message):
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in SUPPORTED else SUPPORTED[0]
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "sandbox-testkit-stdio", "version": "1.0.0"},
        }, None
    if method == "ping":
        return {}, None
    if method == "tools/list":
        return {"tools": TOOLS}, None
    if method == "tools/call":
        result = call_tool(params)
        if result is None:
            return None, (-32602, "unknown tool: %s" % params.get("name"))
        return result, None
    return None, (-32601, "method not found: %s" % method)


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        if not isinstance(message, dict) or "method" not in message:
            continue  # a response to nothing we asked, or a batch: ignore
        if "id" not in message:
            continue  # a notification
        result, error = handle(message)
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        if error is None:
            reply["result"] = result
        else:
            reply["error"] = {"code": error[0], "message": error[1]}
        send(reply)


if __name__ == "__main__":
    main()
