// A small W3C WebDriver client for the desktop app: tauri-driver in front of WebKitWebDriver.
// Only the handful of commands the desktop suite needs; each throws with the driver's message.
import { execFileSync, spawn } from "node:child_process";
import { homedir } from "node:os";
import { join } from "node:path";
import { freePort } from "../ports.mjs";

const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

/** A debug binary of the workspace: `$<env>` when set, else the shared target directory's. */
export function built(name, env) {
  if (process.env[env]) return process.env[env];
  const target = process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache/jig-target");
  return join(target, "debug", name);
}

/** Start tauri-driver with `env`; resolves once it answers. */
export async function startDriver(env) {
  const port = await freePort();
  const nativePort = await freePort();
  const child = spawn(
    "tauri-driver",
    ["--port", String(port), "--native-port", String(nativePort)],
    { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let log = "";
  child.stdout.on("data", (chunk) => (log += chunk));
  child.stderr.on("data", (chunk) => (log += chunk));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(`${base}/status`);
      break;
    } catch {
      if (i > 100 || child.exitCode !== null) throw new Error(`tauri-driver did not start: ${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { base, log: () => log, stop: () => child.kill() };
}

async function call(base, method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) {
    throw new Error(`${method} ${path}: ${answer.value?.error}: ${answer.value?.message}`);
  }
  return answer.value;
}

/** A session: the app started with `args`. */
export async function openApp(driver, application, args) {
  const value = await call(driver.base, "POST", "/session", {
    capabilities: { alwaysMatch: { "tauri:options": { application, args } } },
  });
  return new Session(driver.base, value.sessionId);
}

export class Session {
  constructor(base, id) {
    this.base = base;
    this.path = `/session/${id}`;
  }

  send(method, path, body) {
    return call(this.base, method, this.path + path, body);
  }

  /** The first element matching `css`, or null. */
  async find(css) {
    try {
      const value = await this.send("POST", "/element", { using: "css selector", value: css });
      return value[ELEMENT];
    } catch (e) {
      if (String(e).includes("no such element")) return null;
      throw e;
    }
  }

  /** Run `fn` in the page (a function's source, called with `args`). */
  execute(fn, ...args) {
    return this.send("POST", "/execute/sync", { script: `return (${fn})(...arguments)`, args });
  }

  /** Wait until `fn` (run in the page) returns something truthy; returns it. */
  async waitFor(what, fn, ...args) {
    const deadline = Date.now() + 20000;
    for (;;) {
      const value = await this.execute(fn, ...args);
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Wait for an element matching `css`. */
  async element(css) {
    const deadline = Date.now() + 20000;
    for (;;) {
      const found = await this.find(css);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${css}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async click(css) {
    const id = await this.element(css);
    await this.send("POST", `/element/${id}/click`, {});
  }

  /** Type into the element (real key events). */
  async type(css, text) {
    const id = await this.element(css);
    await this.send("POST", `/element/${id}/value`, { text });
  }

  async clear(css) {
    const id = await this.element(css);
    await this.send("POST", `/element/${id}/clear`, {});
  }

  /**
   * A PNG of the screen the app is on (the window fills Xvfb's 1280×800), as a Buffer: taken
   * from the X server, as a person would see it. WebKitWebDriver's own screenshot asks WebKit
   * for a snapshot, which never came for some views when the page is drawn without GPU
   * compositing (the app's default): the suite hung on it.
   */
  async screenshot() {
    return execFileSync("import", ["-window", "root", "png:-"], { maxBuffer: 64 << 20 });
  }

  close() {
    return this.send("DELETE", "");
  }
}

/** The Enter key, for `type`. */
export const ENTER = "\uE007";
