// Seed 001's plans in the workbench: a Slurm batch job asked for, approved by another person,
// followed live from queued to its collected outputs, on the Slurm cluster scripts/test starts.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { test } from "node:test";
import { workbench } from "./harness.mjs";
import { look } from "./look.mjs";

const suite = workbench();

test("a batch job is approved, shown queued on Slurm, and followed to its outputs", async () => {
  assert.ok(process.env.JIG_TEST_SLURM_CONF, "scripts/test starts Slurm (scripts/engines/env)");
  const alice = await suite.signIn("alice");
  await alice.page.goto(`${suite.server.url}/#/tools/acme.latency_report`);
  await alice.page.getByRole("heading", { name: "acme.latency_report" }).waitFor();
  await alice.page.getByRole("radio", { name: "JSON" }).click();
  await alice.page
    .getByLabel("Arguments (JSON)")
    .fill(JSON.stringify({ samples: "data/latency-2026-11.csv" }));
  await alice.page.getByRole("status", { name: "Preview" }).getByText("needs approval").waitFor();
  await alice.page.getByRole("button", { name: "Run", exact: true }).click();
  await alice.page.getByRole("heading", { name: "Waiting for approval" }).waitFor();

  const bob = await suite.signIn("bob");
  await bob.page.goto(`${suite.server.url}/#/approvals`);
  const item = bob.page.getByRole("listitem", { name: /acme\.latency_report/ });
  await item.getByText('"data/latency-2026-11.csv"').waitFor();
  await item.getByRole("button", { name: "Approve and run" }).click();

  // Alice's panel: the job on Slurm, then its result once Jig collected it — no reload.
  const call = alice.page.getByRole("region", { name: "Call" });
  await call.getByRole("heading", { name: "On Slurm" }).waitFor({ timeout: 15000 });
  await call
    .getByText(/slurm job \d+/)
    .first()
    .waitFor();
  await alice.page.getByRole("button", { name: "Cancel" }).waitFor();
  await look(alice.page, "tool-run-queued");
  await call.getByRole("heading", { name: "Succeeded" }).waitFor({ timeout: 60000 });
  await call.getByText("matches the output schema").waitFor();
  // What it produced, opened in place and saved as a file.
  const artifacts = call.getByRole("region", { name: /Artifacts/ });
  await artifacts.getByRole("button", { name: "View summary" }).click();
  const summary = artifacts.getByLabel("summary: Latency percentiles per service");
  await summary.getByText("service,count,p50_ms,p95_ms,p99_ms,max_ms", { exact: false }).waitFor();
  await artifacts.getByRole("button", { name: "View log" }).click();
  await artifacts.getByText(/summarised \d+ samples/).waitFor();
  const [download] = await Promise.all([
    alice.page.waitForEvent("download"),
    artifacts.getByRole("button", { name: "Save summary as summary.csv" }).click(),
  ]);
  assert.equal(download.suggestedFilename(), "summary.csv");
  const saved = await readFile(await download.path(), "utf8");
  assert.match(saved, /^service,count,p50_ms/, saved);
  assert.equal(saved, await summary.innerText(), "the file is what the panel shows");
  await look(alice.page, "tool-run-collected");

  // The Jobs view: the job collected, its detail with the job's id, its artifacts, no reload.
  await alice.page.keyboard.press("g");
  await alice.page.keyboard.press("j");
  await alice.page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
  const jobs = alice.page.getByRole("table", { name: /Jobs/ });
  const row = jobs.getByRole("row", { name: /acme\.latency_report/ }).first();
  await row.getByText("succeeded").waitFor();
  await row.getByRole("link", { name: "acme.latency_report" }).click();
  const detail = alice.page.getByRole("complementary", { name: /^Run / });
  await detail.getByText(/slurm \d+/).waitFor();
  await detail.getByText("collected").waitFor();
  await detail.getByRole("button", { name: "View summary" }).waitFor();
  await look(alice.page, "jobs");

  // The record: submitted, then collected, in the audit.
  const runs = await suite.server.api("ada", "GET", "/api/audit/runs?tool=acme.latency_report");
  assert.equal(runs.status, 200, JSON.stringify(runs.body));
  const states = JSON.stringify(runs.body);
  assert.match(states, /"state":"succeeded"/, states);
  assert.deepEqual([...alice.problems, ...bob.problems], []);
  await alice.context.close();
  await bob.context.close();
});
