"""A JSON-RPC 2.0 server on stdin/stdout, one request per line: unit conversions."""

import json
import sys

FACTORS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def convert(params):
    if params["from"] not in FACTORS or params["to"] not in FACTORS:
        raise ValueError("unknown unit; use one of " + ", ".join(FACTORS))
    return {"value": params["value"] * FACTORS[params["from"]] / FACTORS[params["to"]]}


print("READY", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    try:
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": convert(request["params"])}
    except Exception as error:  # the caller gets the error, the server keeps serving
        answer = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32602, "message": str(error)}}
    print(json.dumps(answer), flush=True)
