// The workbench end to end: a real `jig serve` on a scratch copy of the example project, Debian's
// chromium through Playwright, one browser context per person.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { askToWrite } from "./asking.mjs";
import { workbench } from "./harness.mjs";
import { look } from "./look.mjs";

const suite = workbench();
const signIn = suite.signIn;

test("a runner finds a tool by search, fills its $ref/oneOf form, previews and runs it", async () => {
  const { page, context, problems } = await signIn("alice");
  await look(page, "tools");
  await page.getByRole("combobox", { name: "Search tools" }).fill("maint window");
  const first = page.getByRole("listbox", { name: "Tools" }).getByRole("option").first();
  await first.getByText("acme.maintenance_window").waitFor();
  await page.getByRole("combobox", { name: "Search tools" }).press("Enter");
  await page.getByRole("heading", { name: "acme.maintenance_window" }).waitFor();
  await look(page, "tool-page");

  // oneOf: choose the second option, then its field appears.
  await page
    .getByRole("combobox", { name: /start/ })
    .first()
    .selectOption({ label: "After a delay from the reference time" });
  await page.getByLabel(/^after_minutes/).fill("30");
  // A date-time reads as the app writes times, in the person's zone, which is named.
  const reference = page.getByRole("textbox", { name: /^reference/ });
  assert.equal(await reference.inputValue(), "2026-01-05 09:00");
  assert.match(
    await page
      .locator(`#${(await reference.getAttribute("aria-describedby")).split(" ")[0]}`)
      .innerText(),
    /\(UTC[+-]\d\d:\d\d\)$/,
  );
  // An array of objects ($ref to $defs/service, minItems 1): its first item is there to fill,
  // named by its array and number (not rjsf's `services-1*`).
  await page.getByText("services, item 1", { exact: true }).waitFor();
  assert.equal(await page.getByText("services-1").count(), 0);
  await page.getByLabel(/^name/).fill("checkout-api");
  await page.getByLabel(/^environment/).selectOption("staging");
  // A constraint broken shows inline as you type; fixing it clears it.
  await page.getByLabel("ticket", { exact: true }).fill("ops 12");
  await page
    .getByRole("alert")
    .filter({ hasText: /pattern/ })
    .waitFor();
  await page.getByLabel("ticket", { exact: true }).fill("OPS-12");

  const preview = page.getByRole("status", { name: "Preview" });
  await preview.getByText("allow").waitFor();
  await preview.getByText("rules[1]").waitFor();

  // Watch for the progress bar while the call runs (it may be brief).
  await page.evaluate(() => {
    window.__sawProgress = false;
    new MutationObserver(() => {
      if (document.querySelector('[role="progressbar"][aria-label="Progress"]'))
        window.__sawProgress = true;
    }).observe(document.body, { childList: true, subtree: true });
  });
  await page.getByRole("button", { name: "Run", exact: true }).click();
  const call = page.getByRole("region", { name: "Call" });
  await call.getByRole("heading", { name: "Succeeded" }).waitFor();
  assert.equal(await page.evaluate(() => window.__sawProgress), true, "the progress bar showed");
  await call.getByText('"2026-01-05T09:30:00.000Z"').first().waitFor();
  await call.getByText("matches the output schema").waitFor();
  await look(page, "tool-run-result");
  assert.deepEqual(problems, []);
  await context.close();
});

test("an array's items take the form's width, and an item nobody reached yet is not red", async () => {
  const { page, context, problems } = await signIn("alice", { width: 1024, height: 700 });
  await page.goto(`${suite.server.url}/#/tools/acme.maintenance_window`);
  await page.getByRole("heading", { name: "acme.maintenance_window" }).waitFor();
  const services = page.getByRole("group", { name: /^services/ }).first();
  await page.getByLabel(/^name/).first().fill("checkout-api");
  await services.getByRole("button", { name: "Add" }).click();
  const second = page.getByRole("group", { name: "services, item 2" });
  await second.waitFor();
  // The items fill the array's box (they were squeezed to about 250 px beside their buttons).
  const outer = await services.boundingBox();
  for (const name of ["services, item 1", "services, item 2"]) {
    const item = await page.getByRole("group", { name }).boundingBox();
    assert.ok(item.width > outer.width * 0.75, `${name}: ${item.width} of ${outer.width}`);
  }
  // Adding an item turned every empty required field red; now only what was reached is.
  const alerts = page.locator(".rjsf-host").getByRole("alert");
  assert.equal(await alerts.count(), 0, await alerts.allInnerTexts().then(String));
  assert.equal(await second.getByLabel(/^name/).getAttribute("aria-invalid"), null);
  // The preview says what is still missing, every field of it.
  await page
    .getByRole("status", { name: "Preview" })
    .getByText(/Not valid yet/)
    .waitFor();
  // Reaching a field and leaving it empty shows its error; the untouched one below stays calm.
  await second.getByLabel(/^name/).focus();
  await second.getByLabel(/^name/).blur();
  await second.getByRole("alert").getByText("is required").waitFor();
  assert.equal(await second.getByLabel(/^environment/).getAttribute("aria-invalid"), null);
  await look(page, "tool-array-items");
  assert.deepEqual(problems, []);
  await context.close();
});

test("the JSON editor completes from the tool's schema and marks a wrong value where it is", async () => {
  const { page, context, problems } = await signIn("alice");
  await page.goto(`${suite.server.url}/#/tools/acme.maintenance_window`);
  await page.getByRole("heading", { name: "acme.maintenance_window" }).waitFor();
  await page.getByRole("radio", { name: "JSON" }).click();
  const editor = page.getByLabel("Arguments (JSON)");
  await editor.click();
  await page.keyboard.press("Control+a");
  await page.keyboard.press("Delete");
  // Keys come from the schema (through $ref and oneOf), required ones first.
  await page.keyboard.type('{"serv');
  const list = page.getByRole("listbox").filter({ hasText: '"services"' });
  await list.waitFor();
  // CodeMirror takes no Enter for a completion list in its first 75 ms (`interactionDelay`:
  // a list that opens under someone typing is not accepted by accident). A test that presses
  // Enter the moment the list shows gets a new line instead, on a machine fast enough.
  await page.waitForTimeout(150);
  await page.keyboard.press("Enter");
  await page.keyboard.type('[{"environment": ');
  // Asked for once the editor holds what was typed. On a busy machine (a release build beside
  // the suite) a Control+Space was seen to open nothing within 30 s, cause not found; the
  // values are asked for again, at most thrice, before the test gives up.
  await editor.filter({ hasText: '"environment": ' }).waitFor();
  const values = page.getByRole("listbox").filter({ hasText: '"staging"' });
  for (let tries = 0; tries < 3 && !(await values.isVisible()); tries++) {
    await page.keyboard.press("Control+Space");
    await values.waitFor({ timeout: 5000 }).catch(() => {});
  }
  await values.waitFor();
  assert.deepEqual(await values.locator(".cm-completionLabel").allInnerTexts(), [
    '"dev"',
    '"staging"',
    '"production"',
  ]);
  await look(page, "tool-json-completion");
  await page.keyboard.press("Escape");
  await page.keyboard.type('"moon"');
  // The wrong value is marked where it is, with the path and what the schema wants.
  const mark = page.locator(".cm-lintRange-error").filter({ hasText: '"moon"' });
  await mark.waitFor();
  await mark.hover();
  await page
    .getByText(/\/services\/0\/environment: /)
    .first()
    .waitFor();
  const typed = (await editor.innerText()).replace(/\s+/g, "");
  assert.ok(typed.startsWith('{"services":[{"environment":"moon"'), typed);
  await look(page, "tool-json-mark");
  // Tab leaves the editor, as it leaves any field.
  await editor.focus();
  await page.keyboard.press("Tab");
  assert.equal(
    await page.evaluate(() => document.activeElement?.classList.contains("cm-content")),
    false,
  );
  assert.deepEqual(problems, []);
  await context.close();
});

test("a preset is saved beside the tool and loads back into the form", async () => {
  const { page, context } = await signIn("alice");
  await page.goto(`${suite.server.url}/#/tools/acme.slugify`);
  await page.getByRole("heading", { name: "acme.slugify" }).waitFor();
  await page.getByLabel(/^title/).fill("Release 2.0: presets");
  await page.getByRole("button", { name: "Save as preset" }).click();
  await page.getByLabel("Preset name").fill("release-two");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page
    .getByRole("combobox", { name: "Load a preset" })
    .getByRole("option", { name: "release-two" })
    .waitFor({ state: "attached" });
  const file = join(suite.server.project, "tools/acme.slugify.release-two.preset.json");
  assert.equal(JSON.parse(readFileSync(file, "utf8")).args.title, "Release 2.0: presets");

  await page.reload();
  await page.getByLabel(/^title/).waitFor();
  assert.equal(await page.getByLabel(/^title/).inputValue(), "");
  await page.getByRole("combobox", { name: "Load a preset" }).selectOption("release-two");
  assert.equal(await page.getByLabel(/^title/).inputValue(), "Release 2.0: presets");
  await context.close();
});

test("an approval round trip between two people: alice asks, bob approves, alice's call runs", async () => {
  // Bob is at work elsewhere in the workbench when alice asks: he is told.
  const bob = await signIn("bob");
  const alice = await signIn("alice");
  await alice.page.goto(`${suite.server.url}/#/tools/file_write`);
  await alice.page.getByRole("heading", { name: "file_write" }).waitFor();
  await alice.page.getByRole("radio", { name: "JSON" }).click();
  await alice.page
    .getByLabel("Arguments (JSON)")
    .fill(JSON.stringify({ path: "review.txt", content: "approved by bob\n" }));
  const preview = alice.page.getByRole("status", { name: "Preview" });
  await preview.getByText("needs approval").waitFor();
  await preview.getByText(/Someone else must approve/).waitFor();
  await alice.page.getByRole("button", { name: "Run", exact: true }).click();
  await alice.page.getByRole("heading", { name: "Waiting for approval" }).waitFor();

  const notices = bob.page.getByRole("region", { name: "Notifications" });
  await notices.getByText("alice asks to run file_write").waitFor();
  await look(bob.page, "notice-waiting");
  await notices.getByRole("link", { name: "Review" }).click();
  await bob.page.getByRole("radio", { name: /Waiting for me/, checked: true }).waitFor();
  const item = bob.page.getByRole("listitem", { name: /file_write/ });
  await item.getByText("asked by").waitFor();
  await item.getByText("alice").first().waitFor();
  await item.getByText('"review.txt"').waitFor();
  await item.getByText(/expires in \d+ min/).waitFor();
  await look(bob.page, "approvals");
  await item.getByLabel(/Note for alice/).fill("checked the path");
  await item.getByRole("button", { name: "Approve and run" }).click();

  // Alice's panel follows the resumed call to its result, with no reload.
  await alice.page.getByRole("heading", { name: "Succeeded" }).waitFor({ timeout: 15000 });
  assert.equal(readFileSync(join(suite.server.project, "review.txt"), "utf8"), "approved by bob\n");
  const approvals = await suite.server.api("ada", "GET", "/api/approvals?all=true");
  const decided = approvals.body.find((a) => a.tool === "file_write");
  assert.equal(decided.principal, "alice");
  assert.equal(decided.decided_by, "bob");
  assert.equal(decided.note, "checked the path");
  // Alice finds it among what she asked, with bob's note.
  await alice.page.goto(`${suite.server.url}/#/approvals`);
  const asked = alice.page.getByRole("listitem", { name: /file_write/ });
  await alice.page.getByRole("radio", { name: /Asked by me/, checked: true }).waitFor();
  await asked.getByText("checked the path").waitFor();
  assert.deepEqual([...alice.problems, ...bob.problems], []);
  await alice.context.close();
  await bob.context.close();
});

test("a denial needs a reason, and the asker reads it", async () => {
  const alice = await signIn("alice");
  await askToWrite(alice.page, suite.server.url, { path: "frozen.txt", content: "x" });
  // Waiting already: the same request is not asked twice.
  assert.equal(
    await alice.page.getByRole("button", { name: "Run", exact: true }).isDisabled(),
    true,
  );
  await alice.page.getByText("This request waits for a reviewer already").waitFor();

  const bob = await signIn("bob");
  await bob.page.goto(`${suite.server.url}/#/approvals`);
  const item = bob.page.getByRole("listitem", { name: /file_write/ }).filter({
    hasText: "frozen.txt",
  });
  // Deny without a word asks for one; nothing is decided.
  await item.getByRole("button", { name: "Deny" }).click();
  await item
    .getByRole("alert")
    .getByText(/Say why you deny it/)
    .waitFor();
  await look(bob.page, "approvals-deny-reason");
  const pending = await suite.server.api("bob", "GET", "/api/approvals");
  assert.ok(
    pending.body.some((a) => a.request?.args?.path === "frozen.txt"),
    "still pending",
  );
  await item.getByLabel(/Note for alice/).fill("not during the release freeze");
  await item.getByRole("button", { name: "Deny" }).click();
  await item.waitFor({ state: "detached" });

  await alice.page
    .getByText(/not during the release freeze/)
    .first()
    .waitFor({ timeout: 15000 });
  await look(alice.page, "call-denied");
  assert.equal(existsSync(join(suite.server.project, "frozen.txt")), false);
  assert.deepEqual([...alice.problems, ...bob.problems], []);
  await alice.context.close();
  await bob.context.close();
});

test("the same request asked twice waits once for the reviewer and runs once", async () => {
  // Two tabs (two sessions) ask for the same write: two approvals, one card.
  for (const session of ["tab-1", "tab-2"]) {
    const asked = await suite.server.api("alice", "POST", "/api/calls", {
      tool: "file_write",
      args: { path: "twice.txt", content: "once\n" },
      session,
    });
    assert.equal(asked.status, 202);
  }
  const bob = await signIn("bob");
  await bob.page.goto(`${suite.server.url}/#/approvals`);
  const card = bob.page
    .getByRole("listitem", { name: /file_write/ })
    .filter({ hasText: "twice.txt" });
  await card.getByText(/Asked 2 times, the same request each time/).waitFor();
  assert.equal(await card.count(), 1, "one card for both");
  await look(bob.page, "approvals-repeats");
  await card.getByRole("button", { name: "Approve and run" }).click();
  await card.waitFor({ state: "detached" });
  const decided = await suite.server.api("ada", "GET", "/api/approvals?all=true");
  const states = decided.body
    .filter((a) => JSON.stringify(a.request).includes("twice.txt"))
    .map((a) => a.state)
    .sort();
  assert.deepEqual(
    states,
    ["consumed", "denied"],
    "one ran (its approval used); the repeat ends, saying why",
  );
  for (let i = 0; i < 50 && !existsSync(join(suite.server.project, "twice.txt")); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(readFileSync(join(suite.server.project, "twice.txt"), "utf8"), "once\n");
  await bob.context.close();
});

test("alice cannot approve her own request: the policy refuses self-approval", async () => {
  const started = await suite.server.api("alice", "POST", "/api/calls", {
    tool: "file_write",
    args: { path: "self.txt", content: "x" },
  });
  assert.equal(started.status, 202);
  // Alice is a runner, so the UI offers no decision; ada (an admin) asks for her own call and
  // cannot approve it either.
  const mine = await suite.server.api("ada", "POST", "/api/calls", {
    tool: "file_write",
    args: { path: "own.txt", content: "x" },
  });
  assert.equal(mine.status, 202);
  const ada = await signIn("ada");
  await ada.page.goto(`${suite.server.url}/#/approvals`);
  // Her own request does not wait for her; it is among all that is pending.
  await ada.page.getByRole("radio", { name: /All pending/ }).click();
  const own = ada.page.getByRole("listitem", { name: /file_write/ }).filter({ hasText: "(you)" });
  // The card says so instead of offering what the server would refuse…
  await own.getByText("You asked for this one: someone else approves it.").waitFor();
  assert.equal(await own.getByRole("button", { name: "Approve and run" }).isDisabled(), true);
  // …and the server refuses it all the same.
  const listed = await suite.server.api("ada", "GET", "/api/approvals");
  const approval = listed.body.find((a) => JSON.stringify(a.request).includes("own.txt"));
  const refused = await suite.server.api(
    "ada",
    "POST",
    `/api/approvals/${approval.id}/approve`,
    {},
  );
  assert.equal(refused.status, 403);
  assert.equal(refused.body.code, "E_POLICY");
  assert.equal(existsSync(join(suite.server.project, "own.txt")), false);
  await ada.context.close();
});

test("a viewer can look but not run", async () => {
  const vera = await signIn("vera");
  await vera.page.goto(`${suite.server.url}/#/tools/acme.slugify`);
  await vera.page.getByRole("heading", { name: "acme.slugify" }).waitFor();
  await vera.page.getByLabel("title").fill("Hello");
  await vera.page
    .getByRole("note")
    .getByText(/may look but not run/)
    .waitFor();
  assert.equal(
    await vera.page.getByRole("button", { name: "Run", exact: true }).isDisabled(),
    true,
  );
  const refused = await suite.server.api("vera", "POST", "/api/calls", {
    tool: "acme.slugify",
    args: { title: "x" },
  });
  assert.equal(refused.status, 403);
  await vera.context.close();
});

test("a denied call shows the rule that denies it", async () => {
  const alice = await signIn("alice");
  await alice.page.goto(`${suite.server.url}/#/tools/shell_exec`);
  await alice.page.getByRole("heading", { name: "shell_exec" }).waitFor();
  await alice.page.getByLabel("cmd").fill("curl http://example.com");
  const preview = alice.page.getByRole("status", { name: "Preview" });
  await preview.getByText("deny").waitFor();
  await preview.getByText("sec.shell.allowlist").waitFor();
  assert.equal(
    await alice.page.getByRole("button", { name: "Run", exact: true }).isDisabled(),
    true,
  );
  await look(alice.page, "tool-denied");
  await alice.context.close();
});

test("the tool list follows the files on disk; a broken save shows its problem", async () => {
  const ada = await signIn("ada");
  const before = await ada.page
    .getByRole("combobox", { name: "Search tools" })
    .getAttribute("placeholder");
  const source = readFileSync(join(suite.server.project, "tools/slugify.tool.yaml"), "utf8");
  writeFileSync(
    join(suite.server.project, "tools/kebab.tool.yaml"),
    source
      .replace("id: acme.slugify", "id: acme.kebab")
      .replace("Turn a release", "Kebab-case a release"),
  );
  await ada.page.getByRole("option", { name: /acme\.kebab/ }).waitFor({ timeout: 15000 });
  const afterAdd = await ada.page
    .getByRole("combobox", { name: "Search tools" })
    .getAttribute("placeholder");
  assert.notEqual(afterAdd, before);

  writeFileSync(
    join(suite.server.project, "tools/kebab.tool.yaml"),
    "id: acme.kebab\nversion: [oops\n",
  );
  await ada.page
    .getByRole("link", { name: /Problems/ })
    .getByLabel(/problems/)
    .waitFor({ timeout: 15000 });
  await ada.page.goto(`${suite.server.url}/#/problems`);
  await ada.page
    .getByRole("table", { name: "Problems" })
    .getByText("tools/kebab.tool.yaml")
    .first()
    .waitFor();
  await look(ada.page, "problems");
  // The last valid registry keeps serving.
  await ada.page.goto(`${suite.server.url}/#/tools/acme.kebab`);
  await ada.page.getByRole("heading", { name: "acme.kebab" }).waitFor();
  await ada.context.close();
});

test("a tool's history refills the form and runs a call again; the request copies as a working curl", async () => {
  const asked = await suite.server.api("alice", "POST", "/api/calls", {
    tool: "file_read",
    args: { path: "jig.yaml" },
  });
  assert.equal(asked.status, 202, JSON.stringify(asked.body));
  const alice = await signIn("alice");
  const { page } = alice;
  await alice.context.grantPermissions(["clipboard-read", "clipboard-write"], {
    origin: suite.server.url,
  });
  await page.goto(`${suite.server.url}/#/tools/file_read`);
  await page.getByRole("heading", { name: "file_read" }).waitFor();
  await page.getByText(/^History/).click();
  const use = page.getByRole("button", { name: /^Use the arguments of the call at/ }).first();
  await use.click();
  await page.getByRole("radio", { name: "JSON" }).click();
  // The arguments as the call was made (the form fills in the schema's defaults).
  const refilled = JSON.parse(await page.getByLabel("Arguments (JSON)").innerText());
  assert.equal(refilled.path, "jig.yaml");
  await look(page, "tool-history");

  const before = await suite.server.api("ada", "GET", "/api/audit/runs?tool=file_read");
  await page
    .getByRole("button", { name: /^Run the call at .* again$/ })
    .first()
    .click();
  await page.getByText("Succeeded").first().waitFor();
  const after = await suite.server.api("ada", "GET", "/api/audit/runs?tool=file_read");
  assert.equal(after.body.runs.length, before.body.runs.length + 1, "one more call, run again");

  // Copy as curl, then run what was copied: the API takes it as alice's call of the same
  // request, which succeeds.
  await page.getByRole("button", { name: "Copy as curl" }).click();
  await page.getByRole("status").getByText("curl copied").waitFor();
  const curl = await page.evaluate(() => navigator.clipboard.readText());
  const output = execFileSync("sh", ["-c", curl], {
    env: { ...process.env, JIG_TOKEN: suite.server.token("alice") },
    encoding: "utf8",
  });
  const { request_id: copied } = JSON.parse(output);
  let state = "";
  for (let i = 0; i < 50 && state !== "succeeded"; i++) {
    const call = await suite.server.api("alice", "GET", `/api/calls/${copied}`);
    state = call.body.state;
    if (state !== "succeeded") await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(state, "succeeded", output);
  const shown = JSON.parse(await page.getByLabel("Arguments (JSON)").innerText());
  const mcp = page.getByRole("button", { name: "Copy as MCP" });
  await mcp.click();
  const request = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
  assert.deepEqual(request.params, { name: "file_read", arguments: shown });
  assert.deepEqual(alice.problems, []);
  await alice.context.close();
});

test("the palette finds by words, not scattered letters; runbooks and runs too; ? opens it empty", async () => {
  const started = await suite.server.api("alice", "POST", "/api/runbook-runs", {
    runbook: "incident/write-up",
    inputs: { incident: "INC-9", week: 2 },
    stepwise: false,
  });
  assert.equal(started.status, 201);
  const ada = await signIn("ada");
  const { page } = ada;
  await page.goto(`${suite.server.url}/#/audit`);
  await page.getByRole("heading", { name: "Audit" }).waitFor();
  await page.keyboard.press("?");
  const input = page.getByRole("combobox", { name: "Command" });
  await input.waitFor();
  assert.equal(await input.inputValue(), "", "the ? is not typed into it");
  const options = page.getByRole("option");
  const shown = async () => (await options.allInnerTexts()).map((t) => t.split("\n")[0].trim());

  await input.fill("maint");
  await page.getByRole("option", { name: /^acme\.maintenance_window Plan/ }).waitFor();
  const maint = await shown();
  for (const loose of ["git_merge", "fs_move", "curl"])
    assert.ok(!maint.some((t) => t.includes(loose)), `${loose} in ${maint.join(", ")}`);

  await input.fill("write-up");
  await page
    .getByRole("option", { name: /incident\/write-up/ })
    .first()
    .waitFor();
  assert.ok(!(await shown()).some((t) => t.includes("git_status")));

  // A runbook run, by its runbook or its id; Enter opens it.
  await input.fill(started.body.id.slice(0, 8));
  await page.getByRole("option", { name: new RegExp(started.body.id.slice(0, 8)) }).waitFor();
  await look(page, "palette-runs");
  await page.keyboard.press("Enter");
  await page.waitForURL(new RegExp(`#/runbooks/run/${started.body.id}`));

  // The arrows move the choice; Escape closes it and gives the keys back to the page.
  await page.keyboard.press("Control+k");
  await input.waitFor();
  assert.equal(await input.inputValue(), "", "it opens afresh");
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("ArrowDown");
  // The palette's own options: the page may still hold the audit view's selected native
  // <option>s, which role=option matches too.
  const chosen = page.locator('[role="option"][aria-selected="true"]');
  assert.match(await chosen.innerText(), /^Jobs/);
  assert.equal(await input.getAttribute("aria-activedescendant"), await chosen.getAttribute("id"));
  await page.keyboard.press("Escape");
  await input.waitFor({ state: "hidden" });
  await page.keyboard.press("g");
  await page.keyboard.press("a");
  await page.waitForURL(/#\/approvals/);
  assert.deepEqual(ada.problems, []);
  await ada.context.close();
});

test("every view at 1024×700 and 1280×800 passes axe and is captured, light and dark", async () => {
  // Each view by its address and the heading that says it is drawn (one view's heading can
  // still be on screen a moment after the address changed).
  const views = [
    ["tools", "Tools"],
    ["approvals", "Approvals"],
    ["jobs", "Jobs"],
    ["audit", "Audit"],
    ["runbooks", "Runbooks"],
    ["problems", "Problems"],
    ["policy", "Policy"],
    ["metrics", "Metrics"],
    ["tokens", "Personal tokens"],
    ["tools/acme.maintenance_window", "acme.maintenance_window"],
  ];
  for (const [width, height] of [
    [1024, 700],
    [1280, 800],
  ]) {
    const ada = await signIn("ada", { width, height });
    for (const [view, heading] of views) {
      await ada.page.goto(`${suite.server.url}/#/${view}`);
      await ada.page.getByRole("heading", { level: 1, name: heading, exact: true }).waitFor();
      // Nothing runs off the side at this size: the page scrolls down, never across.
      const across = await ada.page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert.equal(across, 0, `${view} at ${width}×${height} scrolls sideways by ${across} px`);
      await look(ada.page, `view-${width}-${view.replace("/", "-")}`);
    }
    await ada.page.keyboard.press("Control+k");
    await ada.page.getByRole("dialog").waitFor();
    await look(ada.page, `view-${width}-palette`);
    assert.deepEqual(ada.problems, []);
    await ada.context.close();
  }
});
