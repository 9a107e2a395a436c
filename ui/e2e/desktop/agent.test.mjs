// An agent and a person on one machine, in two processes on one SQLite store: an agent calls
// through `jig mcp` (the official MCP TypeScript SDK, over stdio) while the person has the
// desktop app open on the same project. The agent's request for a write appears in the app's
// open Approvals view without a reload, the person approves it there, and the agent's own
// request (held open, its client without elicitation) answers with the tool's result. With
// another window in front, the app tells the person through the system's notifications (on a
// private D-Bus session bus, read by dbus-monitor).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { shoot, shots, soloProject } from "./fixtures.mjs";
import { built, openApp, startDriver } from "./webdriver.mjs";

const modules =
  process.env.JIG_MCP_NODE_MODULES ?? join(homedir(), ".cache/jig-mcp-node/node_modules");
const sdk = (path) =>
  import(pathToFileURL(join(modules, "@modelcontextprotocol/sdk/dist/esm", path)).href);

const scratch = mkdtempSync(join(tmpdir(), "jig-desktop-agent-"));
const project = join(scratch, "acme");
let driver;
let bus;
let monitor;
let heard = "";

/** A private session bus: its address, once it answers. */
async function sessionBus() {
  const daemon = spawn("dbus-daemon", ["--session", "--nofork", "--print-address=1"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  const address = await new Promise((done, fail) => {
    daemon.stdout.once("data", (chunk) => done(String(chunk).trim()));
    daemon.once("exit", (code) => fail(new Error(`dbus-daemon exited with ${code}`)));
  });
  return { address, stop: () => daemon.kill() };
}

/** Put another window in front of the app (as when the person works elsewhere). */
async function elsewhere(display) {
  const other = spawn("xmessage", ["-name", "jig-elsewhere", "another application"], {
    stdio: "ignore",
  });
  execFileSync(
    "xdotool",
    ["search", "--sync", "--classname", "jig-elsewhere", "windowfocus", "--sync"],
    {
      env: { ...process.env, DISPLAY: display },
    },
  );
  return () => other.kill();
}

before(async () => {
  // One person and their agent (which acts for the person who runs it).
  soloProject(project);
  bus = await sessionBus();
  // The monitor sees the app's Notify call whether or not a notification server answers it.
  monitor = spawn(
    "dbus-monitor",
    ["--address", bus.address, "interface='org.freedesktop.Notifications',member='Notify'"],
    { stdio: ["ignore", "pipe", "ignore"] },
  );
  monitor.stdout.on("data", (chunk) => (heard += chunk));
  driver = await startDriver({
    XDG_CONFIG_HOME: join(scratch, "config"),
    XDG_DATA_HOME: join(scratch, "data"),
    DBUS_SESSION_BUS_ADDRESS: bus.address,
  });
});

after(() => {
  driver?.stop();
  monitor?.kill();
  bus?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** An agent on `jig mcp` (stdio, the official SDK) for the project; what jig mcp printed. */
async function agentOnMcp() {
  const { Client } = await sdk("client/index.js");
  const { StdioClientTransport } = await sdk("client/stdio.js");
  const agent = new Client({ name: "test-agent", version: "1.0.0" });
  const said = { stderr: "" };
  const transport = new StdioClientTransport({
    command: built("jig", "JIG_BIN"),
    args: ["--project", project, "mcp"],
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk) => (said.stderr += chunk));
  await agent.connect(transport);
  return { agent, said };
}

/** The app, open on the project's Approvals view. */
async function appOnApprovals() {
  const app = await openApp(driver, built("jig-desktop", "JIG_DESKTOP_BIN"), [project]);
  await app.element('[role="listbox"][aria-label="Tools"] [role="option"]');
  await app.execute(() => {
    window.location.hash = "#/approvals";
    return true;
  });
  return app;
}

test("an agent's request on jig mcp appears live in the desktop app, is approved there and completes", async () => {
  // The person has the queue open before anything is asked: what arrives, arrives live.
  const app = await appOnApprovals();
  let agent;
  let said = { stderr: "" };
  try {
    await app.waitFor("the empty queue", () =>
      document.querySelector(".empty")?.textContent?.includes("Nothing waits for you"),
    );
    // The person is in another application when the agent asks.
    const back = await elsewhere(process.env.DISPLAY);
    await app.waitFor("the app to lose the focus", () => !document.hasFocus());

    ({ agent, said } = await agentOnMcp());
    const call = agent.callTool(
      { name: "file_write", arguments: { path: "agent.txt", content: "written by the agent" } },
      undefined,
      { timeout: 120000 },
    );
    let settled = false;
    call.finally(() => (settled = true)).catch(() => {});

    const card = await app.waitFor("the agent's request in the open queue", () => {
      const item = document.querySelector('li[aria-label*="for file_write"]');
      return item?.textContent?.includes("agent.txt") ? item.textContent : "";
    });
    assert.match(
      card,
      /asked by root \(via test-agent\) \(your agent\)/,
      "asked by the agent for its person",
    );
    assert.equal(settled, false, "the agent's request is held open meanwhile");
    for (let i = 0; i < 100 && !heard.includes("asks to run file_write"); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(heard, /string "Jig: waiting for you"/, "a system notification was sent");
    assert.match(heard, /string "root \(via test-agent\) asks to run file_write"/);
    back();
    assert.equal(
      existsSync(join(project, "agent.txt")),
      false,
      "nothing is written before approval",
    );
    await shoot(app, "desktop-agent-request");

    await app.click('li[aria-label*="for file_write"] button.primary');
    const result = await call;
    assert.equal(result.isError ?? false, false, JSON.stringify(result.content));
    assert.equal(readFileSync(join(project, "agent.txt"), "utf8"), "written by the agent");
    // The app's queue empties as the decision is recorded.
    await app.waitFor(
      "the queue to empty",
      () => !document.querySelector('li[aria-label*="for file_write"]'),
    );
  } catch (error) {
    writeFileSync(join(shots, "FAILED-agent.png"), await app.screenshot());
    throw new Error(`${error.message}\njig mcp said: ${said.stderr}`, { cause: error });
  } finally {
    await agent?.close().catch(() => {});
    await app.close().catch(() => {});
  }
});

test("a request denied in the desktop app with a reason: the agent reads the reason, the audit says denied", async () => {
  const app = await appOnApprovals();
  let agent;
  let said = { stderr: "" };
  try {
    ({ agent, said } = await agentOnMcp());
    const call = agent.callTool(
      { name: "file_write", arguments: { path: "refused.txt", content: "not now" } },
      undefined,
      { timeout: 120000 },
    );
    const card = 'li[aria-label*="for file_write"]';
    await app.waitFor(
      "the agent's request in the queue",
      (css) => {
        return document.querySelector(css)?.textContent?.includes("refused.txt") ?? false;
      },
      card,
    );
    // Deny asks for a reason first; with one, the decision is made and the agent reads it.
    await app.click(`${card} button.danger`);
    await app.waitFor(
      "the reason asked for",
      (css) => document.querySelector(`${css} [role="alert"]`)?.textContent?.includes("Say why"),
      card,
    );
    await app.type(`${card} textarea`, "not during the freeze");
    await shoot(app, "desktop-deny-reason");
    await app.click(`${card} button.danger`);
    const result = await call;
    assert.equal(result.isError, true, JSON.stringify(result));
    assert.match(
      JSON.stringify(result.content),
      /not during the freeze/,
      "the reason reaches the agent",
    );
    assert.equal(existsSync(join(project, "refused.txt")), false, "nothing written");

    // The app's audit tells the call as denied, with who and why.
    await app.execute(() => {
      window.location.hash = "#/audit";
      return true;
    });
    const denied = await app.waitFor("the denied call in the audit", () => {
      const rows = [...document.querySelectorAll('[role="row"]')].map((r) => r.textContent ?? "");
      const found = rows.filter((text) => text.includes("file_write") && text.includes("denied"));
      return found.length > 0 ? found : null;
    });
    // One row: the call that waited ends denied; learning that made no second request.
    assert.equal(denied.length, 1, denied.join("\n"));
    await shoot(app, "desktop-audit-denied");
  } catch (error) {
    writeFileSync(join(shots, "FAILED-agent-deny.png"), await app.screenshot());
    throw new Error(`${error.message}\njig mcp said: ${said.stderr}`, { cause: error });
  } finally {
    await agent?.close().catch(() => {});
    await app.close().catch(() => {});
  }
});
