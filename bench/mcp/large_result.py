"""A large result through Jig's MCP server: the whole tools/call request as a client waits for it.

`grep` of `unsafe` over a tree (make one as scripts/bench-large-result does) answered over stdio
JSON-RPC, N calls per binary, each with a different `max_results` so that every call runs the
search and stores its result (no replay). Binaries given together are measured in turns, so a
before/after comparison shares the machine's state. Prints the median per binary.

  python3 bench/mcp/large_result.py PROJECT N JIG [JIG ...]
"""
import json
import statistics
import subprocess
import sys
import time


def measure(jig, project, calls):
    server = subprocess.Popen([jig, "--project", project, "mcp"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(message):
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()

    def answer(wanted):
        while True:
            line = server.stdout.readline()
            if not line:
                sys.exit(f"{jig}: the server closed its output")
            message = json.loads(line)
            if message.get("id") == wanted:
                return message

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "large-result", "version": "0"}}})
    answer(0)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    times = []
    for i in range(calls):
        args = {"pattern": "unsafe", "max_results": 100000 - i, "include_vendor": True,
                "include_hidden": True}
        began = time.perf_counter()
        send({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
              "params": {"name": "grep", "arguments": args}})
        result = answer(i + 1).get("result", {})
        times.append((time.perf_counter() - began) * 1000)
        if result.get("isError"):
            sys.exit(f"{jig}: {json.dumps(result)[:300]}")
    server.stdin.close()
    server.wait()
    return times


def main():
    project, calls, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    for _ in range(3):
        for jig in binaries:
            times = measure(jig, project, calls)
            print(f"{jig}: median {statistics.median(times):.0f} ms, min {min(times):.0f}, "
                  f"max {max(times):.0f} over {calls} calls")


if __name__ == "__main__":
    main()
