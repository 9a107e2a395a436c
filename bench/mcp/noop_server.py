"""The client's floor: an MCP server over stdio that does nothing, as fast as a line can be
answered (a line in, a line out, no SDK on this side). What the official SDK's client measures
against it is that client's own cost per call, the ceiling no server can beat from that client.

(A no-op server written with the SDK's own low-level server is slower than
`@modelcontextprotocol/server-filesystem` with SDK 2.3.0, so it would measure the SDK's server
side, not the client's floor.)
"""

import json
import sys

TOOL = {"name": "noop", "description": "Answers ok.", "inputSchema": {"type": "object"}}


def answer(request: dict) -> dict | None:
    method = request.get("method")
    if "id" not in request:
        return None  # a notification
    if method == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "noop", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "ok"}], "isError": False}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": method}}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        response = answer(json.loads(line))
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
