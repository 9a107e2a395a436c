"""Jig's MCP server against the reference servers, side by side, with the official MCP Python
SDK (PyPI `mcp`) as the client over stdio: what an agent waits for (issue #29, section 3).

Measured in each run, on the same small file and the same git repository:

- the SDK client's floor: a server that answers each line at once (bench/mcp/noop_server.py),
  the fastest any server can be answered through this client;
- a small file's read: Jig's `file_read` (`jig mcp`, every call validated, decided, audited and
  chained in SQLite) against `@modelcontextprotocol/server-filesystem`'s `read_text_file`, and
  the same `read_text_file` through Jig's gateway (`mcp_servers:`, the server in its sandbox);
- `git_status`: Jig's against PyPI `mcp-server-git`'s;
- startup + `initialize`: spawning the server until its `initialize` answer (median of STARTS).

Calls are CALLS `tools/call` on one session, one at a time and 8 in flight; the last column uses
a minimal JSON-RPC client instead of the SDK (a line out, a line in): the server's own time per
call. Every figure is the median of RUNS runs; the ratios are taken within each run and listed
per run. Prints Markdown for docs/benchmarks.md.

Run on demand, not in CI: scripts/bench-mcp [CALLS] [RUNS] (a release build).
"""

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

JIG = os.environ["JIG_BIN"]
MODULES = Path(os.environ["JIG_MCP_NODE_MODULES"])
NODE = shutil.which("node")
FILESYSTEM = MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js"
NOOP = Path(__file__).with_name("noop_server.py")
CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
STARTS = 10
CONCURRENCY = 8

FLOOR = "SDK client floor (no-op server)"
DIRECT = "server-filesystem"
JIG_MCP = "jig mcp"
GATEWAY = "jig mcp → server-filesystem"
GIT = "mcp-server-git"


def project(name: str, manifest: str) -> Path:
    """A git repository with a small file and `manifest` as its jig.yaml."""
    root = Path(tempfile.mkdtemp(prefix=f"jig-mcp-bench-{name}-"))
    (root / "small.txt").write_text("a small file, read over MCP\n" * 4)
    (root / "jig.yaml").write_text(manifest)
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "init"]):
        subprocess.run(["git", *command], cwd=root, check=True)
    return root


def servers():
    """(label, parameters, read call, git call) per server, each on a fresh project."""
    jig_root = project("jig", "name: mcp-bench\n")
    gateway = {
        "fs": {
            "command": NODE,
            "args": [str(FILESYSTEM), "."],
            "grants": {"paths": ["."], "programs": [str(MODULES), str(Path(NODE).parent)]},
        }
    }
    gateway_root = project("gateway", f"name: mcp-bench-gateway\nmcp_servers: {json.dumps(gateway)}\n")
    # A person's consent starts an upstream server: what `jig mcp discover` gives.
    subprocess.run([JIG, "--project", str(gateway_root), "mcp", "discover"], check=True, stdout=subprocess.DEVNULL)
    plain = project("plain", "name: plain\n")
    yield (
        FLOOR,
        StdioServerParameters(command=sys.executable, args=[str(NOOP)]),
        ("noop", {}),
        None,
    )
    yield (
        DIRECT,
        StdioServerParameters(command=NODE, args=[str(FILESYSTEM), str(plain)]),
        ("read_text_file", {"path": str(plain / "small.txt")}),
        None,
    )
    yield (
        JIG_MCP,
        StdioServerParameters(command=JIG, args=["--project", str(jig_root), "mcp"]),
        ("file_read", {"path": "small.txt"}),
        ("git_status", {}),
    )
    yield (
        GATEWAY,
        StdioServerParameters(command=JIG, args=["--project", str(gateway_root), "mcp"]),
        ("fs.read_text_file", {"path": str(gateway_root / "small.txt")}),
        None,
    )
    yield (
        GIT,
        StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(plain)]),
        None,
        ("git_status", {"repo_path": str(plain)}),
    )


async def started(params: StdioServerParameters) -> float:
    begin = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return time.perf_counter() - begin


async def calls(params: StdioServerParameters, call, concurrency: int) -> float:
    """Calls per second over CALLS calls, `concurrency` in flight."""
    name, args = call
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            first = await session.call_tool(name, args)
            assert not first.is_error, first
            remaining = CALLS

            async def worker():
                nonlocal remaining
                while remaining > 0:
                    remaining -= 1
                    result = await session.call_tool(name, args)
                    assert not result.is_error, result

            begin = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return CALLS / (time.perf_counter() - begin)


def raw_calls(params: StdioServerParameters, call) -> float:
    """Calls per second, sequential, from a minimal JSON-RPC client (a line out, a line in): the
    server's own time per call, without the SDK client's."""
    import json

    name, args = call
    server = subprocess.Popen(
        [params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, bufsize=1,
    )

    def send(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
    server.stdout.readline()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    request = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": name, "arguments": args}}
    begin = time.perf_counter()
    for n in range(CALLS):
        send({**request, "id": n + 1})
        answer = json.loads(server.stdout.readline())
        assert not answer["result"].get("isError"), answer
    rate = CALLS / (time.perf_counter() - begin)
    server.kill()
    server.wait()
    return rate


async def one_run() -> dict:
    """{label: {measure: value}} for every server, measured once."""
    rows = {}
    for label, params, read, git in servers():
        row = {"startup_ms": statistics.median([await started(params) for _ in range(STARTS)]) * 1000}
        if read:
            row["read_raw"] = raw_calls(params, read)
            row["read_seq"] = await calls(params, read, 1)
            row["read_conc"] = await calls(params, read, CONCURRENCY)
        if git:
            row["git_seq"] = await calls(params, git, 1)
        rows[label] = row
        print(label, {k: round(v, 1) for k, v in row.items()}, file=sys.stderr)
    return rows


RATIOS = (
    ("`jig mcp` / server-filesystem, sequential", lambda r: r[JIG_MCP]["read_seq"] / r[DIRECT]["read_seq"], "≥ 1.5×"),
    ("`jig mcp` / server-filesystem, 8 in flight", lambda r: r[JIG_MCP]["read_conc"] / r[DIRECT]["read_conc"], "≥ 1.2×"),
    ("`jig mcp` / SDK floor, sequential", lambda r: r[JIG_MCP]["read_seq"] / r[FLOOR]["read_seq"], ""),
    ("server-filesystem / SDK floor, sequential", lambda r: r[DIRECT]["read_seq"] / r[FLOOR]["read_seq"], ""),
    # What the gateway adds to a call of the server: time through Jig over time direct, minus 1.
    ("gateway's cost, sequential", lambda r: r[DIRECT]["read_seq"] / r[GATEWAY]["read_seq"] - 1, "≤ +15 %"),
    ("gateway's cost, 8 in flight", lambda r: r[DIRECT]["read_conc"] / r[GATEWAY]["read_conc"] - 1, "≤ +15 %"),
    ("`jig mcp` / mcp-server-git, git_status", lambda r: r[JIG_MCP]["git_seq"] / r[GIT]["git_seq"], ""),
)


async def main():
    runs = [await one_run() for _ in range(RUNS)]
    print(f"\n{CALLS} calls a measure, {RUNS} runs, medians; startup: median of {STARTS} a run\n")
    print(
        "| server | startup + initialize | file read, sequential | file read, 8 in flight "
        "| git_status, sequential | file read, minimal client |"
    )
    print("|---|---:|---:|---:|---:|---:|")

    def cell(label, key, unit):
        values = [run[label][key] for run in runs if key in run[label]]
        return f"{statistics.median(values):,.0f} {unit}" if values else "—"

    for label in runs[0]:
        print(
            f"| {label} | {cell(label, 'startup_ms', 'ms')} | {cell(label, 'read_seq', 'calls/s')} | "
            f"{cell(label, 'read_conc', 'calls/s')} | {cell(label, 'git_seq', 'calls/s')} | "
            f"{cell(label, 'read_raw', 'calls/s')} |"
        )
    print("\n| ratio | " + " | ".join(f"run {n + 1}" for n in range(RUNS)) + " | goal |")
    print("|---|" + "---:|" * RUNS + "---|")
    for name, ratio, goal in RATIOS:
        values = [ratio(run) for run in runs]
        shown = [f"{v:+.0%}" if "cost" in name else f"{v:.2f}×" for v in values]
        print(f"| {name} | " + " | ".join(shown) + f" | {goal} |")


if __name__ == "__main__":
    asyncio.run(main())
