"""Seed 001's plans on real engines: what the user waits for, against the bare engine.

Every figure is a whole process, start to exit, as a user or a script runs it:
- docker: `jig call` of a trivial docker plan (`true` in the pinned test image, no inputs or
  outputs) against `docker-bare`, the same API client (bollard) doing create, start, wait and
  remove with nothing else;
- slurm: `jig call --wait` of a trivial slurm plan (`true`), submit to collected, against
  `sbatch --wait --wrap true`;
- 20 concurrent calls of each (throughput and p99), against 20 concurrent bare ones.
Runs alternate between Jig and the reference, so drift hits both. Prints a Markdown table.

Environment: JIG_BIN, DOCKER_BARE_BIN, JIG_TEST_DOCKER_HOST, JIG_TEST_IMAGE, JIG_TEST_SLURM_CONF
(scripts/bench-plans sets them).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

JIG = os.environ["JIG_BIN"]
BARE = os.environ["DOCKER_BARE_BIN"]
DOCKER_HOST = os.environ["JIG_TEST_DOCKER_HOST"]
IMAGE = os.environ["JIG_TEST_IMAGE"]
SLURM_CONF = os.environ["JIG_TEST_SLURM_CONF"]

COMMON = """abiVersion: v1
version: 1.0.0
deterministic: false
sideEffects: [exec]
timeoutMs: 120000
limits: {maxInputBytes: 4096, maxOutputBytes: 65536}
inputSchema: {type: object, properties: {nonce: {type: integer}}}
outputSchema: {type: object}
templating: {engine: jinja2}
"""

DOCKER_TOOL = COMMON + f"""id: bench.docker_noop
execution:
  kind: docker
  image: '{IMAGE}'
  command: ['true']
  args: ["{{{{ nonce }}}}"]
"""

SLURM_TOOL = COMMON + """id: bench.slurm_noop
execution:
  kind: slurm
  script: |
    true
  args: ["{{ nonce }}"]
  io: {}
"""


def project():
    root = tempfile.mkdtemp(prefix="jig-bp-", dir="/tmp")
    os.makedirs(os.path.join(root, "tools"))
    with open(os.path.join(root, "jig.yaml"), "w") as f:
        f.write(
            "name: bench-plans\npolicy:\n  rules:\n    - { effects: [exec], action: allow }\n"
            f"  plans:\n    docker: {{ host: '{DOCKER_HOST}' }}\n    slurm: {{ conf: '{SLURM_CONF}' }}\n"
        )
    with open(os.path.join(root, "tools", "docker.tool.yaml"), "w") as f:
        f.write(DOCKER_TOOL)
    with open(os.path.join(root, "tools", "slurm.tool.yaml"), "w") as f:
        f.write(SLURM_TOOL)
    return root


def timed(argv, cwd, env=None, check_json=False):
    started = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if out.returncode != 0:
        raise SystemExit(f"{argv} failed ({out.returncode}): {out.stdout}\n{out.stderr}")
    if check_json:
        response = json.loads(out.stdout)
        if not response.get("ok") or response.get("job"):
            raise SystemExit(f"{argv}: not a finished success: {out.stdout}")
    return elapsed


NONCE = iter(range(10**9))


def jig_docker(root):
    return timed([JIG, "call", "bench.docker_noop", "--args", json.dumps({"nonce": next(NONCE)})], root, check_json=True)


def bare_docker(root):
    return timed([BARE, IMAGE, DOCKER_HOST], root)


def jig_slurm(root):
    args = json.dumps({"nonce": next(NONCE)})
    return timed([JIG, "call", "bench.slurm_noop", "--wait", "--args", args], root, check_json=True)


def bare_slurm(root):
    env = dict(os.environ, SLURM_CONF=SLURM_CONF)
    return timed(["sbatch", "--wait", "--export=NONE", "-o", "/dev/null", "--wrap", "true"], root, env=env)


def p(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def sequential(name, jig, bare, root, rounds):
    for _ in range(2):  # warm-up: the engine's caches, the image, the scheduler
        jig(root)
        bare(root)
    mine, theirs = [], []
    for _ in range(rounds):
        mine.append(jig(root))
        theirs.append(bare(root))
    m, t = statistics.median(mine), statistics.median(theirs)
    return (name, m, t, p(mine, 0.9), p(theirs, 0.9), (m / t - 1) * 100)


def concurrent(fn, root, n=20):
    with ThreadPoolExecutor(max_workers=n) as pool:
        started = time.perf_counter()
        latencies = list(pool.map(lambda _: fn(root), range(n)))
        wall = time.perf_counter() - started
    return n / wall, p(latencies, 0.99), wall


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    root = project()
    try:
        rows = [
            sequential("docker: `jig call` vs bare create/start/wait/remove", jig_docker, bare_docker, root, rounds),
            sequential("slurm: `jig call --wait` (submit → collected) vs `sbatch --wait`", jig_slurm, bare_slurm, root, max(5, rounds // 2)),
        ]
        print(f"Sequential, {rounds} rounds (slurm {max(5, rounds // 2)}), whole processes, median (p90):\n")
        print("| what | Jig | reference | overhead |")
        print("|---|---|---|---|")
        for name, m, t, mp, tp, over in rows:
            print(f"| {name} | {m * 1000:.0f} ms ({mp * 1000:.0f}) | {t * 1000:.0f} ms ({tp * 1000:.0f}) | {over:+.1f} % |")
        print("\n20 concurrent calls, whole processes:\n")
        print("| what | Jig: calls/s, p99 | reference: calls/s, p99 |")
        print("|---|---|---|")
        for name, jig, bare in [("docker", jig_docker, bare_docker), ("slurm", jig_slurm, bare_slurm)]:
            jt, jp, _ = concurrent(jig, root)
            bt, bp, _ = concurrent(bare, root)
            print(f"| {name} | {jt:.2f}/s, {jp * 1000:.0f} ms | {bt:.2f}/s, {bp * 1000:.0f} ms |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
