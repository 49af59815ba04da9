#!/usr/bin/env python3
"""A stand-in for the `claude` CLI speaking just enough stream-json to test the driver's
process handling without the real binary: answers `initialize`, turns each user message
into init/assistant/result lines, records its argv, and exits on request."""
import json
import os
import sys

log = os.environ.get("HOME", "/tmp") + "/fake-claude-argv.jsonl"
with open(log, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
with open(os.environ.get("HOME", "/tmp") + "/fake-claude.pid", "w") as f:
    f.write(str(os.getpid()))
args = sys.argv[1:]
session = args[args.index("--session-id") + 1] if "--session-id" in args else args[args.index("--resume") + 1]


def out(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "control_request" and msg["request"]["subtype"] == "initialize":
        out({"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"],
             "response": {"claude_code_version": "9.9.9",
                          "models": [{"value": "default", "resolvedModel": "fake-model", "displayName": "Default"}]}}})
    elif msg["type"] == "control_request" and msg["request"]["subtype"] == "interrupt":
        out({"type": "control_response", "response": {"subtype": "success", "request_id": msg["request_id"], "response": {}}})
        out({"type": "result", "subtype": "error_during_execution", "is_error": True, "session_id": session})
    elif msg["type"] == "user":
        text = msg["message"]["content"][0]["text"]
        if text == "exit":
            sys.stderr.write("fake claude: asked to exit\n")
            sys.exit(3)
        out({"type": "system", "subtype": "init", "session_id": session})
        if text == "hang":
            continue
        out({"type": "assistant", "message": {"id": "m1", "content": [{"type": "text", "text": "echo " + text}]}, "session_id": session})
        out({"type": "result", "subtype": "success", "is_error": False, "result": "echo " + text,
             "usage": {"input_tokens": 1, "output_tokens": 2}, "session_id": session})
