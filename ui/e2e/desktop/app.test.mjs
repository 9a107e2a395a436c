// The desktop app itself: the built jig-desktop under Xvfb, driven through tauri-driver and
// WebKitWebDriver. Open the example project, search a tool, run it, see the result and its
// run in the audit; switch projects from the recent list; a broken one shows its diagnostics.
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { example, shoot as shootApp, shots, soloProject } from "./fixtures.mjs";
import { ENTER, built, openApp, startDriver } from "./webdriver.mjs";

const desktopBinary = () => built("jig-desktop", "JIG_DESKTOP_BIN");

const scratch = mkdtempSync(join(tmpdir(), "jig-desktop-"));
const acme = join(scratch, "acme");
const second = join(scratch, "second");
const broken = join(scratch, "broken");
// One person on their own machine: the example's policy with self-approval allowed.
const solo = join(scratch, "solo");
const empty = join(scratch, "empty");
let driver;
let brokenFile;
let app;
// A SIEM's HTTP intake (Splunk HEC's shape) the acme project forwards its audit to: what it
// was sent, one event a line.
const siem = { events: [], server: undefined };

/** Run `body` with the app open on `args`; on failure, a screenshot of where it stopped. */
async function withApp(name, args, body) {
  app = await openApp(driver, desktopBinary(), args);
  try {
    await body();
  } catch (error) {
    writeFileSync(join(shots, `FAILED-${name}.png`), await app.screenshot());
    throw error;
  } finally {
    await app.close().catch(() => {});
    app = undefined;
  }
}

before(async () => {
  for (const dir of [acme, second, broken]) example(dir);
  siem.server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      for (const line of body.split("\n").filter(Boolean)) siem.events.push(JSON.parse(line));
      response.writeHead(200, { "content-type": "application/json" });
      response.end('{"text":"Success","code":0}');
    });
  });
  await new Promise((resolve) => siem.server.listen(0, "127.0.0.1", resolve));
  const intake = `http://127.0.0.1:${siem.server.address().port}/services/collector/event`;
  const manifest = join(acme, "jig.yaml");
  writeFileSync(
    manifest,
    readFileSync(manifest, "utf8")
      .replace(
        "\nconfig:\n",
        `\nconfig:\n  audit:\n    forward:\n      - { name: siem, url: "${intake}", shape: hec, format: jsonl }\n`,
      )
      // The intake is on loopback, which Jig reaches only where the policy allows it.
      .replace(
        "    allowed_domains: [status.acme.example, api.github.com, internal.acme.example]\n",
        '    allowed_domains: [status.acme.example, api.github.com, internal.acme.example, "127.0.0.1"]\n    allow_private: true\n',
      ),
  );
  // The person read the forwarder and consented; before, nothing is forwarded (consent.rs).
  execFileSync(built("jig", "JIG_BIN"), ["--project", acme, "trust", "--yes"], { stdio: "pipe" });
  soloProject(solo);
  mkdirSync(empty);
  // The second project has one tool more, so its list is told from the first's.
  writeFileSync(
    join(second, "tools/pager.tool.yaml"),
    readFileSync(join(second, "tools/oncall.tool.yaml"), "utf8").replace(
      "name: oncall",
      "name: pager",
    ),
  );
  // A tool file with a field the loader refuses: the project does not open.
  brokenFile = readdirSync(join(broken, "tools")).find((n) => n.endsWith(".tool.yaml"));
  const path = join(broken, "tools", brokenFile);
  writeFileSync(path, readFileSync(path, "utf8") + "\nno_such_field: 1\n");
  // What the person opened before: the recent list offers these.
  const config = join(scratch, "config/jig");
  mkdirSync(config, { recursive: true });
  writeFileSync(join(config, "recent.json"), JSON.stringify([second, broken]));
  driver = await startDriver({
    XDG_CONFIG_HOME: join(scratch, "config"),
    XDG_DATA_HOME: join(scratch, "data"),
  });
});

after(() => {
  driver?.stop();
  siem.server?.closeAllConnections();
  siem.server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

const shoot = (name) => shootApp(app, name);

const TOOLS = '[role="listbox"][aria-label="Tools"] [role="option"]';

/** Go to a view of the app, as its links do. */
function go(hash) {
  return app.execute((h) => {
    window.location.hash = h;
    return true;
  }, hash);
}

test("the app opens a project, finds a tool by search, runs it and shows the result", () =>
  withApp("run", [acme], async () => {
    await app.element(TOOLS);
    // The project forwards its audit: the header says where, always in sight.
    const forwarded = await app.waitFor(
      "the forwarding badge",
      () =>
        document
          .querySelector('[role="note"][aria-label^="The audit is forwarded"]')
          ?.getAttribute("aria-label") ?? "",
    );
    assert.match(forwarded, /siem \(http:\/\/127\.0\.0\.1:\d+\/services\/collector\/event\)/);
    await shoot("desktop-tools");
    const who = await app.waitFor("who", () => document.querySelector(".who")?.textContent ?? "");
    assert.match(who, /admin/, "the desktop acts as the OS user, with every role");

    await app.type('input[aria-label="Search tools"]', "file read");
    await app.waitFor("file_read first", () =>
      document
        .querySelector('[role="listbox"][aria-label="Tools"] [role="option"]')
        ?.textContent?.includes("file_read"),
    );
    await app.type('input[aria-label="Search tools"]', ENTER);
    await app.waitFor("the tool page", () =>
      [...document.querySelectorAll("h1, h2")].some((h) => h.textContent.trim() === "file_read"),
    );
    await app.type("#root_path", "jig.yaml");
    await app.waitFor("the preview", () =>
      document
        .querySelector('[role="status"][aria-label="Preview"]')
        ?.textContent?.includes("allow"),
    );
    await app.click('button.primary[aria-keyshortcuts="Control+Enter"]');
    const outcome = await app.waitFor("the result", () => {
      const call = document.querySelector('[aria-label="Call"]');
      return call?.querySelector("h2")?.textContent === "Succeeded" ? call.textContent : "";
    });
    assert.match(outcome, /policy/, "the result shows the file's content");
    await shoot("desktop-result");

    // The call is in the audit, made by the OS user through the in-process API.
    await go("#/audit");
    const row = await app.waitFor(
      "the run in the timeline",
      () =>
        [...document.querySelectorAll('[role="row"]')].find((r) =>
          r.textContent.includes("file_read"),
        )?.textContent,
    );
    assert.match(row, /succeeded/i);
    await shoot("desktop-audit");

    // The project forwards its audit while it is open in the app, as `jig serve` does: the
    // call's packets reach the SIEM.
    const deadline = Date.now() + 30000;
    const kinds = () =>
      siem.events.filter((e) => JSON.stringify(e.event).includes("file_read")).map((e) => e.event);
    while (kinds().length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    const sent = JSON.stringify(kinds());
    for (const kind of ["tool.call.request", "tool.call.decision", "tool.call.result"])
      assert.ok(sent.includes(kind), `${kind} forwarded: ${sent.slice(0, 400)}`);
  }));

/** Type `title` into the open slugify form and run it; resolves with the call's short id. */
async function runSlugify(title, slug) {
  await app.clear("#root_title");
  await app.type("#root_title", title);
  await app.waitFor("the preview", () =>
    document.querySelector('[role="status"][aria-label="Preview"]')?.textContent?.includes("allow"),
  );
  // The progress bar shows while the call runs, however briefly.
  await app.execute(() => {
    window.__sawProgress = false;
    const seen = () => {
      if (document.querySelector('[role="progressbar"][aria-label="Progress"]'))
        window.__sawProgress = true;
    };
    new MutationObserver(seen).observe(document.body, { childList: true, subtree: true });
    return true;
  });
  await app.click('button.primary[aria-keyshortcuts="Control+Enter"]');
  const id = await app.waitFor(
    "the result",
    (slug) => {
      const call = document.querySelector('[aria-label="Call"]');
      const done = call?.querySelector("h2")?.textContent === "Succeeded";
      return done && call.textContent.includes(slug)
        ? call.querySelector("a.mono")?.textContent
        : "";
    },
    slug,
  );
  assert.equal(await app.execute(() => window.__sawProgress), true, "the progress bar showed");
  return id.split(" ")[0];
}

test("a write waits for approval, is approved in the app and runs; two runs compare in the audit", () =>
  withApp("approval", [solo], async () => {
    await app.element(TOOLS);
    await go("#/tools/file_write");
    await app.type("#root_path", "review.txt");
    await app.type("#root_content", "approved in the app");
    const preview = await app.waitFor("the preview to ask", () => {
      const text = document.querySelector('[role="status"][aria-label="Preview"]')?.textContent;
      return text?.includes("needs approval") ? text : "";
    });
    assert.match(preview, /approve it yourself/, "this policy lets the person approve their own");
    await app.click('button.primary[aria-keyshortcuts="Control+Enter"]');
    await app.waitFor(
      "the call to wait",
      () =>
        document.querySelector('[aria-label="Call"] h2')?.textContent === "Waiting for approval",
    );
    assert.equal(existsSync(join(solo, "review.txt")), false, "nothing is written before approval");

    await go("#/approvals");
    const card = await app.waitFor("the approval", () => {
      const item = document.querySelector('li[aria-label*="for file_write"]');
      return item?.textContent?.includes("review.txt") ? item.textContent : "";
    });
    assert.match(card, /\(you\)/, "the desktop acts as the OS user, who asked");
    await shoot("desktop-approvals");
    await app.click('li[aria-label*="for file_write"] button.primary');
    for (let i = 0; i < 100 && !existsSync(join(solo, "review.txt")); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(readFileSync(join(solo, "review.txt"), "utf8"), "approved in the app");

    // Two runs of one tool from its form, then compared side by side.
    await go("#/tools/acme.slugify");
    const first = await runSlugify("Release 1.2", "release-1-2");
    const second = await runSlugify("Release 1.3", "release-1-3");
    assert.notEqual(first, second);
    await go("#/audit");
    for (const id of [first, second]) {
      await app.click(`input[type="checkbox"][aria-label="Mark run ${id} to compare"]`);
    }
    await app.execute(() => {
      [...document.querySelectorAll("button")]
        .find((b) => b.textContent.startsWith("Compare 2/2"))
        .click();
      return true;
    });
    const args = await app.waitFor("the arguments' difference", () => {
      const text = document.querySelector('section[aria-label="Arguments"]')?.textContent ?? "";
      return text.includes("Release 1.2") && text.includes("Release 1.3") ? text : "";
    });
    assert.match(args, /\/title/);
    await shoot("desktop-audit-diff");
  }));

test("a runbook's step graph draws in the app and a run waits at its manual step", () =>
  withApp("runbook", [acme], async () => {
    await app.element(TOOLS);
    // The palette (a modal <dialog> with a combobox) in WebKit: found by words, opened by Enter.
    await app.click('button[aria-keyshortcuts="Control+K"]');
    await app.type('dialog[open] input[role="combobox"]', "incident write");
    await app.waitFor("the runbook offered first", () =>
      document
        .querySelector('dialog[open] [role="option"][aria-selected="true"]')
        ?.textContent?.includes("incident/write-up"),
    );
    await app.type('dialog[open] input[role="combobox"]', ENTER);
    await app.waitFor(
      "the palette closed on the runbook's page",
      () => !document.querySelector("dialog[open]") && location.hash.startsWith("#/runbooks/book/"),
    );
    // dagre lays the graph out inside the app's webview (its chunk loads from the app's assets).
    const steps = await app.waitFor("the laid-out graph", () => {
      const nodes = document.querySelectorAll(".graph-content .step-node");
      const ys = [...nodes].map((n) => n.getBoundingClientRect().top);
      return nodes.length === 6 && new Set(ys).size > 3 ? nodes.length : 0;
    });
    assert.equal(steps, 6);
    await app.type("#input-incident", "INC-9");
    await app.type("#input-week", "12");
    await app.click('input[type="checkbox"]');
    await app.click('form[aria-label="Start a run"] button[type="submit"]');
    const waiting = await app.waitFor(
      "the manual step waiting",
      () => document.querySelector('[aria-label="Step Write down what happened"]')?.textContent,
    );
    assert.match(waiting, /was primary and .* secondary in week 12/);
    await shoot("desktop-runbook-run");
  }));

test("projects: a recent one opens in place; a broken one shows why and the open one stays", () =>
  withApp("projects", [acme], async () => {
    await app.element(TOOLS);
    await app.click('button[aria-haspopup="dialog"][aria-label^="Project"]');
    await app.element(`button[aria-label="Open ${broken}"]`);
    await shoot("desktop-projects");

    await app.click(`button[aria-label="Open ${broken}"]`);
    const failure = await app.waitFor(
      "the failure",
      () => document.querySelector('.project-dialog [role="alert"]')?.textContent ?? "",
    );
    assert.ok(failure.includes(brokenFile), `names the file: ${failure}`);
    assert.match(failure, /no_such_field/, "names the field");
    const still = await app.execute(() =>
      document.querySelector('button[aria-label^="Project"]')?.getAttribute("aria-label"),
    );
    assert.match(still, /Project acme/, "the open project stays open");
    await app.waitFor("the button to say the last attempt failed", () =>
      document
        .querySelector('button[aria-label^="Project"]')
        ?.getAttribute("aria-label")
        ?.includes("did not open"),
    );

    await app.click(`button[aria-label="Open ${second}"]`);
    await app.waitFor("the second project", () =>
      document
        .querySelector('button[aria-label^="Project"]')
        ?.getAttribute("aria-label")
        ?.includes("Project second"),
    );
    await app.waitFor("the second project's tools", () =>
      document
        .querySelector('[role="listbox"][aria-label="Tools"]')
        ?.textContent?.includes("pager.who"),
    );
    const count = await app.execute(() => document.querySelector(".count-line")?.textContent);
    assert.equal(count, "48 tools", "the list is the second project's");
    const recent = JSON.parse(readFileSync(join(scratch, "config/jig/recent.json"), "utf8"));
    assert.equal(recent[0], second, "the opened project goes first in the recent list");
    assert.ok(recent.includes(acme));
  }));

test("a folder that is not a project opens on the welcome page, which teaches and recovers", () =>
  withApp("welcome", [empty], async () => {
    const failure = await app.waitFor(
      "the welcome page",
      () => document.querySelector('.welcome [role="alert"]')?.textContent ?? "",
    );
    assert.match(failure, /no jig\.yaml/);
    await shoot("desktop-welcome");
    // The example project, written out to the (scratch) data folder and opened.
    await app.execute(() => {
      [...document.querySelectorAll("button")]
        .find((b) => b.textContent.trim() === "Open the example project")
        .click();
      return true;
    });
    await app.element(TOOLS);
    const title = await app.execute(() =>
      document.querySelector('button[aria-label^="Project"]')?.getAttribute("title"),
    );
    assert.equal(title, join(scratch, "data/jig/example"));
    assert.ok(readFileSync(join(scratch, "data/jig/example/jig.yaml"), "utf8").includes("policy"));
  }));
