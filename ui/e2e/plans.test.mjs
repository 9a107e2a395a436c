// Seed 001's plans in the workbench: a Slurm batch job asked for, approved by another person,
// followed live from queued to its collected outputs, on the Slurm cluster scripts/test starts.
import assert from "node:assert/strict";
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
  await alice.page.getByRole("button", { name: "Run" }).click();
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
  await call.getByText("artifacts", { exact: false }).first().waitFor();
  await look(alice.page, "tool-run-collected");

  // The record: submitted, then collected, in the audit.
  const runs = await suite.server.api("ada", "GET", "/api/audit/runs?tool=acme.latency_report");
  assert.equal(runs.status, 200, JSON.stringify(runs.body));
  const states = JSON.stringify(runs.body);
  assert.match(states, /"state":"succeeded"/, states);
  assert.deepEqual([...alice.problems, ...bob.problems], []);
  await alice.context.close();
  await bob.context.close();
});
