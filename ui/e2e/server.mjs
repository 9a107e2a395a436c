// A real `jig serve` on a scratch copy of the example project, with one token per person.
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The jig binary the tests drive (built by scripts/test before the UI suites). */
export function jigBinary() {
  if (process.env.JIG_BIN) return process.env.JIG_BIN;
  const target = process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache/jig-target");
  return join(target, "debug/jig");
}

/** The people of the `--users` file: name → token. */
export const people = {
  alice: { role: "runner", token: "alice-token-0123456789abcdef0123" },
  bob: { role: "approver", token: "bob-token-0123456789abcdef0123456" },
  vera: { role: "viewer", token: "vera-token-0123456789abcdef012345" },
  ada: { role: "admin", token: "ada-token-0123456789abcdef0123456" },
};

/**
 * Start `jig serve`; resolves once it printed its URL. Options: `configure(project)` edits the
 * scratch copy before it starts; `global` adds options before `serve` (`--db URL`: several
 * instances, each on its own checkout, on one team's store); `env` adds variables.
 */
export async function startServer({ configure, global = [], env = {} } = {}) {
  const scratch = mkdtempSync(join(tmpdir(), "jig-e2e-"));
  const project = join(scratch, "acme");
  cpSync(join(repo, "toolpacks/examples"), project, { recursive: true });
  configure?.(project);
  const users = join(scratch, "users.yaml");
  writeFileSync(
    users,
    "users:\n" +
      Object.entries(people)
        .map(([name, p]) => `  - { name: ${name}, role: ${p.role}, token: ${p.token} }\n`)
        .join(""),
  );
  // The example's plan tools name no engine: the engines scripts/test started, as a team's
  // DOCKER_HOST and SLURM_CONF would name theirs.
  const engines = {};
  if (process.env.JIG_TEST_DOCKER_HOST) engines.DOCKER_HOST = process.env.JIG_TEST_DOCKER_HOST;
  if (process.env.JIG_TEST_SLURM_CONF) engines.SLURM_CONF = process.env.JIG_TEST_SLURM_CONF;
  const args = (addr) => [
    "--project",
    project,
    ...global,
    "serve",
    "--addr",
    addr,
    "--users",
    users,
  ];
  const environment = { ...process.env, ...engines, ...env };
  const started = await launch(args("127.0.0.1:0"), environment);
  const url = started.url;
  let child = started.child;
  return {
    url: new URL(url).origin,
    project,
    /** `name`'s personal token (for a command a test runs as that person). */
    token: (name) => people[name].token,
    /** The URL that signs `name` in. */
    signIn: (name) => `${new URL(url).origin}/?token=${people[name].token}`,
    /** Call the API as `name` (for setting up state quickly; the UI is what is tested). */
    api: async (name, method, path, body) => {
      const response = await fetch(new URL(path, url), {
        method,
        headers: {
          authorization: `Bearer ${people[name].token}`,
          "content-type": "application/json",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    },
    /** Kill the process with SIGKILL (nothing it holds survives) and start it again on the
     * same address, project and store; resolves once it serves again. */
    restart: async () => {
      const gone = new Promise((resolveExit) => child.once("exit", resolveExit));
      child.kill("SIGKILL");
      await gone;
      ({ child } = await launch(args(new URL(url).host), environment));
    },
    stop: () => {
      child.kill("SIGTERM");
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/** Spawn `jig` with `args`; resolves with the process once it printed its URL. */
async function launch(args, env) {
  const child = spawn(jigBinary(), args, { stdio: ["ignore", "pipe", "pipe"], env });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const url = await new Promise((resolveUrl, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`jig serve printed no URL: ${stderr}`)), 20000);
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const match = /http:\/\/[^\s]+/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[0]);
      }
    });
    child.on("exit", (code) => reject(new Error(`jig serve exited ${code}: ${stderr}`)));
  });
  return { child, url };
}
