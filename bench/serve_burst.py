#!/usr/bin/env python3
"""What a burst of an agent's calls leaves behind in `jig serve` (issue #29): the serve
process's memory (RSS, from /proc) when idle, right after N `file_read` calls of the same
4.5 KB file through the HTTP API, and after it has been idle again; and the store's growth a
call. Each call is in a session of its own, so each runs (none is a replay).

    python3 bench/serve_burst.py --jig target/release/jig --calls 30000

Standard library only.
"""

import argparse
import http.client
import json
import os
import subprocess
import tempfile
import threading
import time
import urllib.parse


def rss_mib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def rss(pid):
    """Resident memory, and how much of it is the process's own (anonymous) memory."""
    return f"{rss_mib(pid):.0f} MiB ({rss_mib(pid, 'RssAnon'):.0f} anon)"


def store_bytes(project):
    total = 0
    for name in ("audit.db", "audit.db-wal"):
        path = os.path.join(project, ".jig", name)
        if os.path.exists(path):
            total += os.path.getsize(path)
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jig", required=True)
    parser.add_argument("--calls", type=int, default=30000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--one-session", action="store_true",
                        help="every call in one session, each in a thread of its own")
    options = parser.parse_args()

    project = tempfile.mkdtemp()
    with open(os.path.join(project, "jig.yaml"), "w") as manifest:
        manifest.write("name: burst\n")
    with open(os.path.join(project, "notes.txt"), "w") as notes:
        notes.write(("the release is on Monday; " * 180)[:4500])
    serve = subprocess.Popen(
        [options.jig, "--project", project, "serve", "--addr", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = urllib.parse.urlsplit(serve.stdout.readline().strip())
        token = urllib.parse.parse_qs(url.query)["token"][0]
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        time.sleep(2)
        idle = rss(serve.pid)
        before = store_bytes(project)

        counter = iter(range(options.calls))
        lock = threading.Lock()
        last = []

        def caller():
            connection = http.client.HTTPConnection(url.hostname, url.port)
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                where = ({"session": "burst", "thread": f"t-{n}"} if options.one_session
                         else {"session": f"burst-{n}"})
                body = json.dumps({"tool": "file_read", "args": {"path": "notes.txt"}, **where})
                connection.request("POST", "/api/calls", body, headers)
                answer = connection.getresponse()
                started = json.loads(answer.read())
                if answer.status != 202:
                    raise SystemExit(f"call {n}: {answer.status} {started}")
                with lock:
                    last[:] = [started["request_id"]]

        started = time.time()
        threads = [threading.Thread(target=caller) for _ in range(options.connections)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # The last call started; wait until it is recorded as done.
        connection = http.client.HTTPConnection(url.hostname, url.port)
        while True:
            connection.request("GET", f"/api/calls/{last[0]}", headers=headers)
            answer = connection.getresponse()
            state = json.loads(answer.read()).get("state")
            if state not in (None, "running", "queued"):
                break
            time.sleep(0.1)
        elapsed = time.time() - started
        after = rss(serve.pid)
        time.sleep(30)
        rested = rss(serve.pid)
        grown = store_bytes(project) - before
        print(f"| calls | calls/s | RSS idle | right after | after 30 s idle | store a call |")
        print(f"|---:|---:|---:|---:|---:|---:|")
        print(f"| {options.calls} | {options.calls / elapsed:.0f} | {idle} | {after} "
              f"| {rested} | {grown / options.calls:.0f} B |")
    finally:
        serve.terminate()
        serve.wait()


if __name__ == "__main__":
    main()
