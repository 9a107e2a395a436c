// The desktop app as a team client: it signs in to a team's `jig serve` in the person's own
// browser (RFC 8252: the server's consent page, a loopback redirect, PKCE), then shows the
// server's workbench with its events. alice asks for a write in chromium on the server; bob,
// in the desktop app, sees it waiting for him, approves it there, and alice's call runs on the
// server. Signing out in the app ends its session and leaves it on the welcome page.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { askToWrite } from "../asking.mjs";
import { launch } from "../browser.mjs";
import { OIDC_SECRET, signIn, startProvider, withSignIn } from "../oidc.mjs";
import { freePort } from "../ports.mjs";
import { startServer } from "../server.mjs";
import { shoot, shots } from "./fixtures.mjs";
import { built, openApp, startDriver } from "./webdriver.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), "jig-desktop-team-"));
const suite = {};

before(async () => {
  const providerPort = await freePort();
  const issuer = `http://127.0.0.1:${providerPort}`;
  suite.server = await startServer({
    configure: withSignIn(issuer),
    env: { JIG_E2E_OIDC_SECRET: OIDC_SECRET },
  });
  suite.provider = await startProvider(providerPort, [`${suite.server.url}/auth/callback`]);
  suite.browser = await launch();
  // The person's browser as the app starts it: bob signs in and allows the app.
  const wrapper = join(scratch, "browser");
  suite.browserLog = join(scratch, "browser.log");
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec "${process.execPath}" "${join(here, "system-browser.mjs")}" bob "${shots}" "$@" >>"${suite.browserLog}" 2>&1\n`,
  );
  chmodSync(wrapper, 0o755);
  mkdirSync(join(scratch, "empty"));
  suite.driver = await startDriver({
    XDG_CONFIG_HOME: join(scratch, "config"),
    XDG_DATA_HOME: join(scratch, "data"),
    BROWSER: wrapper,
  });
});

after(async () => {
  suite.driver?.stop();
  await suite.browser?.close();
  suite.provider?.kill("SIGTERM");
  suite.server?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test("bob signs the desktop app in to the team server and approves there what alice asked", async () => {
  const alice = await signIn(suite.browser, suite.server, "alice");
  await askToWrite(alice.page, suite.server.url, {
    path: "from-desktop.txt",
    content: "approved in the desktop app\n",
  });

  const app = await openApp(suite.driver, built("jig-desktop", "JIG_DESKTOP_BIN"), [
    join(scratch, "empty"),
  ]);
  try {
    await app.element('input[inputmode="url"]');
    await app.type('input[inputmode="url"]', suite.server.url);
    await shoot(app, "desktop-team-address");
    await app.click('.server-chooser button[type="submit"]');
    // The app waits for the browser meanwhile, and says so.
    // Chromium starting and two sign-in pages take a while on a busy machine.
    for (let i = 0; i < 60; i++) {
      const shown = await app.execute(
        () => !!document.querySelector('[role="listbox"][aria-label="Tools"] [role="option"]'),
      );
      if (shown) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    await app.element('[role="listbox"][aria-label="Tools"] [role="option"]');
    const who = await app.waitFor("who", () => document.querySelector(".who")?.textContent ?? "");
    assert.match(who, /bob@acme\.example/, "the app acts as bob, signed in");
    assert.match(who, /approver/);
    const project = await app.execute(() =>
      document.querySelector('button[aria-label^="Project"]')?.getAttribute("title"),
    );
    assert.equal(project, suite.server.url.replace(/\/$/, ""), "the server, not a folder");

    await app.execute(() => {
      window.location.hash = "#/approvals";
      return true;
    });
    const card = await app.waitFor("alice's request, waiting for bob", () => {
      const item = document.querySelector('li[aria-label*="for file_write"]');
      return item?.textContent?.includes("from-desktop.txt") ? item.textContent : "";
    });
    assert.match(card, /alice@acme\.example/);
    await shoot(app, "desktop-team-approvals");
    await app.click('li[aria-label*="for file_write"] button.primary');

    // alice's call runs on the server, where it waited; her page shows it finish.
    await alice.page.getByRole("heading", { name: "Succeeded" }).waitFor({ timeout: 20000 });
    assert.equal(
      readFileSync(join(suite.server.project, "from-desktop.txt"), "utf8"),
      "approved in the desktop app\n",
    );

    // Signing out in the app: back on the welcome page, the server remembered (not the session).
    await app.click("button.who");
    await app.execute(() => {
      [...document.querySelectorAll("button")]
        .find((b) => b.textContent.includes("Sign out"))
        .click();
      return true;
    });
    await app.waitFor("the welcome page, the server remembered", () =>
      document.querySelector('.welcome ul[aria-label="Team servers"] button'),
    );
    const servers = JSON.parse(readFileSync(join(scratch, "config/jig/servers.json"), "utf8"));
    assert.deepEqual(servers, [suite.server.url.replace(/\/$/, "")]);
    assert.doesNotMatch(
      readFileSync(join(scratch, "config/jig/servers.json"), "utf8"),
      /session/,
      "no session is written down",
    );
  } catch (error) {
    writeFileSync(join(shots, "FAILED-team.png"), await app.screenshot());
    let log = "";
    try {
      log = readFileSync(suite.browserLog, "utf8");
    } catch {
      log = "(the browser never started)";
    }
    throw new Error(`${error.message}\nthe system browser said: ${log}`, { cause: error });
  } finally {
    await app.close().catch(() => {});
    await alice.context.close();
  }
});
