// A reviewer steps through the example's incident write-up in the workbench: alice starts it
// step by step, answers the on-call step and the manual step's evidence; the write waits for a
// second person; bob approves it from the run; both see the outcome live, and the run's trace
// and calls are in the audit.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { workbench } from "./harness.mjs";
import { look } from "./look.mjs";

const suite = workbench();
const signIn = suite.signIn;

/** Open runbook `name` from the list (one just saved may take a moment to appear) and start it
 * to run through, not step by step. */
async function startRunThrough(page, name) {
  await page.goto(`${suite.server.url}/#/runbooks`);
  await page.getByRole("link", { name }).click({ timeout: 15000 });
  await page.getByRole("checkbox", { name: /Step by step/ }).uncheck();
  await page.getByRole("button", { name: "Start the run" }).click();
}

test("a runbook stepped through to its outcome: evidence, an approval by a second person, the audit", async () => {
  const alice = await signIn("alice");
  const { page } = alice;
  await page.goto(`${suite.server.url}/#/runbooks`);
  await page.getByRole("link", { name: "incident/write-up" }).click();
  await page.getByRole("img", { name: /tool step Who was on call: not reached/ }).waitFor();
  await look(page, "runbook");

  // Started empty: each field says what it needs, beside it (not the browser's popup).
  await page.getByRole("button", { name: "Start the run" }).click();
  await page.getByRole("alert").filter({ hasText: "is required" }).first().waitFor();
  assert.equal(await page.getByLabel("incident").getAttribute("aria-invalid"), "true");
  assert.match(page.url(), /#\/runbooks\/book\//, "nothing started");
  await look(page, "runbook-start-errors");
  await page.getByLabel("incident").fill("INC-4242");
  await page.getByLabel("week").fill("12");
  await page.getByRole("button", { name: "Start the run" }).click();
  await page.waitForURL(/#\/runbooks\/run\//);
  const runId = decodeURIComponent(page.url().split("/").pop());

  // Step by step: the on-call lookup waits for a go-ahead, with what it will call.
  const rota = page.getByRole("region", { name: "Step Who was on call" });
  await rota.getByText("oncall.who").waitFor();
  await rota.getByLabel("Policy verdict").getByText("allow").waitFor();
  await rota.getByRole("button", { name: "Run this step" }).click();

  // The manual step, rendered with the rota's answer; its evidence is required.
  const findings = page.getByRole("region", { name: "Step Write down what happened" });
  await findings.getByText(/was primary and .* secondary in week 12/).waitFor();
  // Paused, the run holds at the step until a person resumes it there.
  await page.getByRole("button", { name: "Pause" }).click();
  // Alice paused it: she reads that it was her, and the header says paused (not "waiting for
  // people").
  await findings.getByText(/You paused the run here/).waitFor();
  await page.locator(".page-head .badge").getByText("paused", { exact: true }).waitFor();
  await page
    .getByRole("status")
    .getByText(/Paused by/)
    .waitFor();
  await look(page, "runbook-run-paused");
  await findings.getByRole("button", { name: "Resume here" }).click();
  const submit = findings.getByRole("button", { name: "Submit the evidence" });
  await submit.waitFor();
  assert.equal(await submit.isDisabled(), true, "the summary is required");
  await findings
    .getByLabel("summary")
    .fill("A config push disabled retries; rolled back at 14:10.");
  await findings.getByRole("checkbox", { name: "dashboards" }).check();
  await findings.getByRole("checkbox", { name: "deploy log" }).check();
  await look(page, "runbook-run-evidence");
  await submit.click();

  // The write: a go-ahead, then the policy holds it for someone other than alice.
  const file = page.getByRole("region", { name: "Step File the write-up" });
  await file.getByText('"incidents/INC-4242.md"').waitFor();
  await file.getByRole("button", { name: "Run this step" }).click();
  await file.getByText("You started this run; someone else must approve its calls.").waitFor();
  assert.equal(await file.getByRole("button", { name: "Approve and run" }).isDisabled(), true);
  await page
    .getByRole("button", { name: /tool step File the write-up: waiting for you/ })
    .waitFor();
  await look(page, "runbook-run-approval");

  const bob = await signIn("bob");
  await bob.page.goto(`${suite.server.url}/#/runbooks/run/${runId}`);
  const held = bob.page.getByRole("region", { name: "Step File the write-up" });
  await held.getByText("needs approval").waitFor();
  await held.getByRole("button", { name: "Approve and run" }).click();
  await bob.page.getByRole("region", { name: "Outcome" }).getByText("write_up_filed").waitFor();

  // Alice's page follows without a reload.
  const outcome = page.getByRole("region", { name: "Outcome" });
  await outcome.getByText("resolved").waitFor({ timeout: 15000 });
  await outcome.getByText("write_up_filed").waitFor();
  await page.getByRole("button", { name: /end step filed_end: ended here/ }).waitFor();
  const written = readFileSync(join(suite.server.project, "incidents/INC-4242.md"), "utf8");
  assert.match(written, /A config push disabled retries/);

  // The trace: who did what, in the chain.
  await page.getByText(/^Trace \(\d+ events; \d+ packets in the audit chain\)$/).click();
  const trace = page.locator(".trace-table");
  await trace.getByText("person: evidence").waitFor();
  await trace.getByText("person: approve").waitFor();
  await trace.getByRole("cell", { name: "bob" }).first().waitFor();
  await trace.getByText("outcome_resolved").waitFor();
  // Each event says when, from the run's start; step keys are read whole.
  await trace.getByRole("cell", { name: /^\+\d/ }).first().waitFor();
  await look(page, "runbook-run-outcome");

  // Every step opens: from the list (like a CI run's jobs, with durations) and from the graph.
  const steps = page.getByRole("region", { name: "Steps" });
  const rotaRow = steps.getByRole("link", { name: /^rota / });
  assert.match(await rotaRow.innerText(), /\d+(\.\d)? (ms|s)/, "the step's duration");
  await rotaRow.click();
  await page.waitForURL(/#\/runbooks\/run\/[^/]+\/rota$/);
  const detail = page.getByRole("region", { name: "rota" });
  await detail.getByText("success").first().waitFor();
  await detail.getByRole("heading", { name: "Inputs, as sent" }).waitFor();
  await detail.getByRole("heading", { name: "Outputs" }).waitFor();
  await detail.getByText(/run by alice/).waitFor();
  await look(page, "runbook-run-step");
  // The write's step: who approved it, and the call it made (linked to the audit).
  // The graph pans and zooms by keys and by dragging, and a drag does not open the step under it.
  const canvas = page.getByRole("group", { name: "Step graph" });
  const scale = () =>
    canvas
      .locator(".graph-content")
      .evaluate((el) => new DOMMatrix(getComputedStyle(el).transform).a);
  const fitted = await scale();
  await canvas.focus();
  await page.keyboard.press("+");
  assert.ok((await scale()) > fitted * 1.2, "+ zooms in");
  await page.keyboard.press("0");
  assert.equal(await scale(), fitted, "0 fits again");
  const node = canvas.getByRole("button", { name: /^tool step File the write-up/ });
  const before = await node.boundingBox();
  await node.hover();
  await page.mouse.down();
  await page.mouse.move(before.x + 60, before.y + 40, { steps: 4 });
  await page.mouse.up();
  const after = await node.boundingBox();
  assert.equal(Math.round(after.x - before.x), 60 - Math.round(before.width / 2), "dragged");
  assert.match(page.url(), /\/rota$/, "a drag opens nothing");
  await node.click();
  await page.waitForURL(/file$/);
  const write = page.getByRole("region", { name: /file$/ });
  await write.getByText(/approve by bob/).waitFor();
  await write.getByRole("link", { name: /^[0-9a-f]{8}$/ }).waitFor();
  await write.getByText("succeeded").waitFor();
  // The link names the step: opened afresh (another person, a reload), it opens the same.
  await page.reload();
  await page
    .getByRole("region", { name: /file$/ })
    .getByText(/approve by bob/)
    .waitFor();
  await page.getByText(/^Trace \(\d+ events; \d+ packets in the audit chain\)$/).click();

  // Its calls in the audit view, filtered to the run's session.
  await page.getByRole("link", { name: /See its steps' tool calls in the Audit view/ }).click();
  await page.getByRole("heading", { name: "Audit" }).waitFor();
  await page
    .getByRole("row", { name: /file_write/ })
    .first()
    .waitFor();
  await page
    .getByRole("row", { name: /oncall/ })
    .first()
    .waitFor();
  const runs = await suite.server.api("ada", "GET", "/api/runbook-runs");
  assert.equal(runs.body[0].status, "completed");
  assert.deepEqual([...alice.problems, ...bob.problems], []);
  await alice.context.close();
  await bob.context.close();
});

test("a viewer sees a waiting run but cannot act on it", async () => {
  const started = await suite.server.api("alice", "POST", "/api/runbook-runs", {
    runbook: "incident/write-up",
    inputs: { incident: "INC-7", week: 3 },
    stepwise: false,
  });
  assert.equal(started.status, 201);
  const vera = await signIn("vera");
  await vera.page.goto(`${suite.server.url}/#/runbooks/run/${started.body.id}`);
  const findings = vera.page.getByRole("region", { name: "Step Write down what happened" });
  await findings.getByText("Your role (viewer) may look but not act.").waitFor();
  assert.equal(await findings.getByLabel("summary").isVisible(), true);
  assert.equal(
    await findings.getByRole("button", { name: "Submit the evidence" }).isDisabled(),
    true,
  );
  await vera.context.close();
});

test("a file attached as evidence is kept by its hash and downloads as it was", async () => {
  // A runbook saved into the served project appears without a restart.
  writeFileSync(
    join(suite.server.project, "playbooks/attach.runbook.yaml"),
    "apiVersion: kernel/v0\nmeta: { name: attach, description: Keep the service's log with the incident. }\nsteps:\n  - id: logs\n    type: manual\n    title: Attach the service's log\n    contract: { side_effects: false }\n    required_evidence: [{ kind: attachment, name: log }]\n  - id: done\n    type: end\n    outcome: { category: resolved, code: attached }\n",
  );
  const alice = await signIn("alice");
  const { page } = alice;
  await startRunThrough(page, "attach");
  const step = page.getByRole("region", { name: "Step Attach the service's log" });
  const content = "12:00 restarted\n<script>alert(1)</script>\n";
  await step.getByLabel("log (a file)").setInputFiles({
    name: "service.log",
    mimeType: "text/plain",
    buffer: Buffer.from(content),
  });
  await step.getByRole("button", { name: "Submit the evidence" }).click();
  const attachments = page.getByRole("region", { name: "Attachments" });
  await attachments.getByText(`log · ${Buffer.byteLength(content)} bytes`).waitFor();
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    attachments.getByRole("button", { name: "Save service.log" }).click(),
  ]);
  const saved = await download.path();
  assert.equal(readFileSync(saved, "utf8"), content);
  await look(page, "runbook-run-attachment");
  assert.deepEqual(alice.problems, []);
  await alice.context.close();
});

test("a step whose rule asks two approvers runs only after two different people approve", async () => {
  writeFileSync(
    join(suite.server.project, "playbooks/two-keys.runbook.yaml"),
    "apiVersion: kernel/v0\nmeta:\n  name: two-keys\n  description: A write two people must approve.\n  governance:\n    rules:\n      - { effects: [write], action: require-approval, min_approvers: 2 }\n      - default: allow\ntools: [std/file_write]\nsteps:\n  - id: write\n    type: tool\n    tool: std/file_write\n    inputs: { path: two-keys.txt, content: both approved }\n  - id: done\n    type: end\n    outcome: { category: resolved, code: written }\n",
  );
  const alice = await signIn("alice");
  await startRunThrough(alice.page, "two-keys");
  await alice.page.waitForURL(/#\/runbooks\/run\//);
  const runId = decodeURIComponent(alice.page.url().split("/").pop());

  // Bob approves in the queue: one of two; his button is spent, the call has not run.
  const bob = await signIn("bob");
  await bob.page.goto(`${suite.server.url}/#/approvals`);
  const item = bob.page.getByRole("listitem", { name: /file_write/ });
  await item.getByText("Needs 2 different approvers").waitFor();
  await item.getByRole("button", { name: "Approve", exact: true }).click();
  // It no longer waits for him; among everything pending, it waits for a second person.
  await item.waitFor({ state: "detached" });
  await bob.page.getByRole("radio", { name: /All pending/ }).click();
  await item.getByText("(1 of 2)").waitFor();
  // The next approval completes it, but not his: one person counts once.
  assert.equal(await item.getByRole("button", { name: "Approve and run" }).isDisabled(), true);
  await look(bob.page, "approvals-two-keys");

  // Ada, a second person, approves from the run itself: the step runs and the run ends.
  const ada = await signIn("ada");
  await ada.page.goto(`${suite.server.url}/#/runbooks/run/${runId}`);
  const step = ada.page.getByRole("region", { name: /Step write/ });
  await step.getByLabel("Approvers").getByText("bob").waitFor();
  await step.getByRole("button", { name: "Approve and run" }).click();
  await ada.page.getByRole("region", { name: "Outcome" }).getByText("resolved").waitFor();
  assert.equal(readFileSync(join(suite.server.project, "two-keys.txt"), "utf8"), "both approved");
  assert.deepEqual([...alice.problems, ...bob.problems, ...ada.problems], []);
  for (const person of [alice, bob, ada]) await person.context.close();
});

test("an ended run continues with the runbook its outcome names, its inputs prefilled", async () => {
  writeFileSync(
    join(suite.server.project, "playbooks/legacy/handoff.runbook.yaml"),
    "apiVersion: runbook/v0\nmeta:\n  name: handoff\n  inputs:\n    host: { from: prompt, default: checkout.acme.example }\nsteps:\n  - id: ask\n    type: manual\n    title: Is it still down?\n    instructions: |\n      Check the service:\n\n      1. open `https://{{ .host }}/healthz`\n      2. note the status code\n    outcomes:\n      - state: needs_rca\n        next_runbook: { file: ../service/restart-unhealthy, inputs: { host: '{{ .host }}' } }\n",
  );
  const alice = await signIn("alice");
  const { page } = alice;
  await startRunThrough(page, "legacy/handoff");
  const ask = page.getByRole("region", { name: /Step Is it/ });
  // The instructions are Markdown: a list, and code.
  await ask.getByRole("listitem").filter({ hasText: "note the status code" }).waitFor();
  assert.equal(
    await ask.locator(".instructions code").first().textContent(),
    "https://checkout.acme.example/healthz",
  );
  await look(page, "runbook-run-instructions");
  await ask.getByRole("button", { name: "Mark as done" }).click();

  const form = page.getByRole("form", { name: "Continue with service/restart-unhealthy" });
  await form.waitFor();
  assert.equal(await form.getByLabel(/^host/).inputValue(), "checkout.acme.example");
  await form.getByLabel(/^unit/).fill("checkout-api.service");
  await look(page, "runbook-run-continue");
  const ended = page.url();
  await form.getByRole("button", { name: "Continue" }).click();
  await page.waitForURL((url) => url.toString() !== ended);
  await page.getByRole("link", { name: "service/restart-unhealthy" }).waitFor();
  assert.deepEqual(alice.problems, []);
  await alice.context.close();
});

test("an ended run runs again with the same inputs, each still editable", async () => {
  writeFileSync(
    join(suite.server.project, "playbooks/again.runbook.yaml"),
    'apiVersion: kernel/v0\nmeta:\n  name: again\n  inputs:\n    who: { type: string }\n    times: { type: integer, default: 1 }\nsteps:\n  - id: done\n    type: end\n    outcome: { category: resolved, code: greeted, meta: { who: "{{ .who }}" } }\n',
  );
  const alice = await signIn("alice");
  const { page } = alice;
  let started;
  for (let i = 0; i < 50; i++) {
    started = await suite.server.api("alice", "POST", "/api/runbook-runs", {
      runbook: "again",
      inputs: { who: "ada", times: 3 },
      stepwise: false,
    });
    if (started.status === 201) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(started.status, 201, JSON.stringify(started.body));
  await page.goto(`${suite.server.url}/#/runbooks/run/${started.body.id}`);
  await page.getByRole("region", { name: "Outcome" }).getByText("greeted").waitFor();
  await page.getByText("Run again with the same inputs").click();
  const form = page.getByRole("form", { name: "Run again" });
  assert.equal(await form.getByLabel(/^who/).inputValue(), "ada");
  assert.equal(await form.getByLabel(/^times/).inputValue(), "3");
  await form.getByLabel(/^who/).fill("grace");
  await form.getByRole("checkbox", { name: /Step by step/ }).uncheck();
  await form.getByRole("button", { name: "Start the run" }).click();
  await page.waitForURL((url) => !url.hash.includes(started.body.id));
  await page.getByRole("region", { name: "Outcome" }).getByText("greeted").waitFor();
  const again = decodeURIComponent(page.url().split("/").pop());
  const shown = await suite.server.api("alice", "GET", `/api/runbook-runs/${again}`);
  assert.equal(shown.body.progress.outcome.meta.who, "grace");
  assert.equal(shown.body.progress.variables.times, 3);
  await look(page, "runbook-run-again");
  assert.deepEqual(alice.problems, []);
  await alice.context.close();
});
