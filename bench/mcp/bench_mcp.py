"""Jig's MCP server against the reference servers, side by side, with the official MCP Python
SDK (PyPI `mcp`) as the client over stdio: what an agent waits for.

Measured, in one run, on the same small file and the same git repository:

- startup + `initialize`: spawning the server until its `initialize` answer (median of RUNS);
- `tools/call` of a small file's read, N sequential calls, and N calls 8 at a time on one
  session: Jig's `file_read` against `@modelcontextprotocol/server-filesystem`'s
  `read_text_file`;
- `tools/call` of `git_status`, sequential: Jig's against PyPI `mcp-server-git`'s.

Every Jig call is audited (hash-chained packets in SQLite); Jig runs once per
`audit.durability` mode (`full`, `effects`). Prints a Markdown table (docs/benchmarks.md).

Run on demand, not in CI: scripts/bench-mcp (release build; pass the call count).
"""

import asyncio
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
import mcp_types as types

JIG = os.environ["JIG_BIN"]
MODULES = Path(os.environ["JIG_MCP_NODE_MODULES"])
NODE = shutil.which("node")
CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
STARTS = 20
CONCURRENCY = 8


def project(durability: str) -> Path:
    """A git repository with a small file, as a Jig project with this durability."""
    root = Path(tempfile.mkdtemp(prefix=f"jig-mcp-bench-{durability}-"))
    (root / "small.txt").write_text("a small file, read over MCP\n" * 4)
    (root / "jig.yaml").write_text(
        "name: mcp-bench\n"
        "policy:\n"
        f"  audit: {{ durability: {durability} }}\n"
    )
    for command in (["init", "-q"], ["add", "."], ["-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "init"]):
        subprocess.run(["git", *command], cwd=root, check=True)
    return root


def servers(jig_root: Path, durability: str, plain_root: Path):
    """(label, parameters, read call, git call) per server."""
    small = str(plain_root / "small.txt")
    yield (
        f"jig ({durability})",
        StdioServerParameters(command=JIG, args=["--project", str(jig_root), "mcp"]),
        ("file_read", {"path": "small.txt"}),
        ("git_status", {}),
    )
    yield (
        "server-filesystem",
        StdioServerParameters(
            command=NODE,
            args=[str(MODULES / "@modelcontextprotocol/server-filesystem/dist/index.js"), str(plain_root)],
        ),
        ("read_text_file", {"path": small}),
        None,
    )
    yield (
        "mcp-server-git",
        StdioServerParameters(command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(plain_root)]),
        None,
        ("git_status", {"repo_path": str(plain_root)}),
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


async def main():
    plain = project("plain")
    rows = []
    for durability in ("full", "effects"):
        root = project(durability)
        for label, params, read, git in servers(root, durability, plain):
            if label != f"jig ({durability})" and durability == "effects":
                continue  # the references once
            startup = statistics.median([await started(params) for _ in range(STARTS)])
            row = {"server": label, "startup_ms": startup * 1000}
            if read:
                row["read_raw"] = raw_calls(params, read)
                row["read_seq"] = await calls(params, read, 1)
                row["read_conc"] = await calls(params, read, CONCURRENCY)
            if git:
                row["git_seq"] = await calls(params, git, 1)
            rows.append(row)
            print(row, file=sys.stderr)
    print(f"\n{CALLS} calls each; startup: median of {STARTS}\n")
    print(
        "| server | startup + initialize | file read, sequential | file read, 8 concurrent "
        "| git_status, sequential | file read, minimal client |"
    )
    print("|---|---|---|---|---|---|")
    for row in rows:
        cell = lambda key, unit: f"{row[key]:,.0f} {unit}" if key in row else "—"
        print(
            f"| {row['server']} | {row['startup_ms']:.1f} ms | {cell('read_seq', 'calls/s')} | "
            f"{cell('read_conc', 'calls/s')} | {cell('git_seq', 'calls/s')} | {cell('read_raw', 'calls/s')} |"
        )


if __name__ == "__main__":
    asyncio.run(main())
