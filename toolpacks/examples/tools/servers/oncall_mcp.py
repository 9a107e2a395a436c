"""A minimal Model Context Protocol server (stdio transport) with one tool."""

import json
import sys

ROTA = ["ada", "grace", "linus", "barbara"]
TOOL = {
    "name": "who_is_on_call",
    "description": "Primary and secondary on-call engineer of an ISO week.",
    "inputSchema": {"type": "object", "properties": {"week": {"type": "integer"}}, "required": ["week"]},
}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "oncall", "version": "1.0.0"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [TOOL]}})
    elif method == "tools/call":
        week = message["params"]["arguments"]["week"]
        rota = {"primary": ROTA[week % len(ROTA)], "secondary": ROTA[(week + 1) % len(ROTA)]}
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "content": [{"type": "text", "text": json.dumps(rota)}],
            "structuredContent": rota,
        }})
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": "unknown method"}})
