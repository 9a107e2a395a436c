// The reviewer's queue when many requests wait: several picked (one by one, or every request
// asking the same) and decided with one note; one decided meanwhile by someone else leaves the
// selection. And an asker whose `jig serve` died while the call waited: the page catches up.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { askToWrite } from "./asking.mjs";
import { workbench } from "./harness.mjs";
import { look } from "./look.mjs";

const suite = workbench();

/** `who` asks to write `path` through the API. */
async function ask(who, path) {
  const asked = await suite.server.api(who, "POST", "/api/calls", {
    tool: "file_write",
    args: { path, content: "x" },
  });
  assert.equal(asked.status, 202);
}

/** The approvals (all of them) asking to write `path`. */
async function approvalsOf(path) {
  const all = await suite.server.api("bob", "GET", "/api/approvals?all=true");
  return all.body.filter((a) => a.request?.args?.path === path);
}

test("a reviewer picks several requests and denies them with one reason each asker reads", async () => {
  const alice = await suite.signIn("alice");
  await ask("alice", "same.txt");
  await ask("ada", "same.txt");
  await ask("alice", "other.txt");

  const bob = await suite.signIn("bob");
  await bob.page.goto(`${suite.server.url}/#/approvals`);
  const cards = bob.page.getByRole("list", { name: "Approvals" }).getByRole("listitem");
  const same = cards.filter({ hasText: "same.txt" });
  await same.first().waitFor();
  assert.equal(await same.count(), 2, "two people ask the same: two cards");
  // Nothing picked: no decision bar.
  assert.equal(await bob.page.getByRole("region", { name: /Decide the selected/ }).count(), 0);

  // Every request asking the same, from one card; then one more by its box.
  await same
    .first()
    .getByText(/1 other person asks the same/)
    .waitFor();
  await same.first().getByRole("button", { name: "Select all 2" }).click();
  await cards
    .filter({ hasText: "other.txt" })
    .getByRole("checkbox", { name: /Select file_write asked by alice/ })
    .check();
  const bar = bob.page.getByRole("region", { name: "Decide the selected approvals" });
  await bar.getByText("3 selected").waitFor();
  await look(bob.page, "approvals-bulk");

  // Denying needs the reason; nothing is decided without it.
  await bar.getByRole("button", { name: "Deny 3" }).click();
  await bar
    .getByRole("alert")
    .getByText(/Say why you deny them/)
    .waitFor();
  assert.equal((await approvalsOf("same.txt")).filter((a) => a.state === "pending").length, 2);
  await bar.getByLabel(/one note for every asker/).fill("the release is frozen until Monday");
  await bar.getByRole("button", { name: "Deny 3" }).click();
  await bob.page.getByRole("status").getByText("Denied 3 of 3.").waitFor();
  await same.first().waitFor({ state: "detached" });

  for (const path of ["same.txt", "other.txt"]) {
    for (const approval of await approvalsOf(path)) {
      assert.equal(approval.state, "denied", path);
      assert.equal(approval.decided_by, "bob", path);
      assert.equal(approval.note, "the release is frozen until Monday", path);
    }
  }
  // The asker reads the one reason.
  await alice.page
    .getByText(/the release is frozen until Monday/)
    .first()
    .waitFor({ timeout: 15000 });
  assert.deepEqual([...alice.problems, ...bob.problems], []);
  await alice.context.close();
  await bob.context.close();
});

test("approving several runs each once; one decided meanwhile leaves the selection", async () => {
  await ask("alice", "run-1.txt");
  await ask("alice", "run-2.txt");
  await ask("alice", "gone.txt");
  const bob = await suite.signIn("bob");
  await bob.page.goto(`${suite.server.url}/#/approvals`);
  const cards = bob.page.getByRole("list", { name: "Approvals" }).getByRole("listitem");
  for (const path of ["run-1.txt", "run-2.txt", "gone.txt"]) {
    await cards.filter({ hasText: path }).getByRole("checkbox").check();
  }
  const bar = bob.page.getByRole("region", { name: "Decide the selected approvals" });
  await bar.getByText("3 selected").waitFor();
  // Someone else decides one while bob reads: it leaves his queue and his selection, so he
  // approves only what still waits.
  const [gone] = await approvalsOf("gone.txt");
  const denied = await suite.server.api("ada", "POST", `/api/approvals/${gone.id}/deny`, {
    reason: "not this one",
  });
  assert.equal(denied.status, 204);
  await cards.filter({ hasText: "gone.txt" }).waitFor({ state: "detached" });
  await bar.getByText("2 selected").waitFor();
  await bar.getByRole("button", { name: "Approve 2" }).click();
  await bob.page.getByRole("status").getByText("Approved 2 of 2.").waitFor();
  await look(bob.page, "approvals-bulk-told");
  for (const path of ["run-1.txt", "run-2.txt"]) {
    for (let i = 0; i < 50 && !existsSync(join(suite.server.project, path)); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(existsSync(join(suite.server.project, path)), `${path} was written`);
    const [approval] = await approvalsOf(path);
    assert.equal(approval.decided_by, "bob");
  }
  assert.equal(existsSync(join(suite.server.project, "gone.txt")), false);
  assert.equal((await approvalsOf("gone.txt"))[0].decided_by, "ada");
  assert.deepEqual(bob.problems, []);
  await bob.context.close();
});

test("the process holding an asked call is killed: the asker's page learns the approval and runs it once", async () => {
  const alice = await suite.signIn("alice");
  await askToWrite(alice.page, suite.server.url, { path: "held.txt", content: "kept\n" });
  const waits = alice.page.getByRole("link", { name: /^Approvals/ }).getByText("1");
  await waits.waitFor();
  // SIGKILL: the request kept for the approval dies with the process; the store keeps the ask.
  await suite.server.restart();
  const [asked] = await approvalsOf("held.txt");
  assert.equal(asked.state, "pending");
  const approved = await suite.server.api("bob", "POST", `/api/approvals/${asked.id}/approve`, {});
  assert.equal(approved.status, 200);
  // Nothing runs it (no process holds it): alice's page, reconnected, is told so.
  await alice.page.getByRole("heading", { name: "Approved, not run" }).waitFor({ timeout: 15000 });
  await alice.page.getByText(/Run it again with the same arguments/).waitFor();
  // The preview of these very arguments says the same, not that someone must still approve.
  await alice.page
    .getByRole("status", { name: "Preview" })
    .getByText(/Already approved and not yet run/)
    .waitFor();
  assert.equal(existsSync(join(suite.server.project, "held.txt")), false);
  // What the stream missed while it was down is read again: no request waits any more.
  await waits.waitFor({ state: "detached" });
  await look(alice.page, "call-approved-not-run");
  // Running the identical call uses the approval: it runs, and nobody is asked again.
  await alice.page.getByRole("button", { name: "Run", exact: true }).click();
  await alice.page.getByRole("heading", { name: "Succeeded" }).waitFor();
  assert.equal(readFileSync(join(suite.server.project, "held.txt"), "utf8"), "kept\n");
  const after = await approvalsOf("held.txt");
  assert.deepEqual(
    after.map((a) => a.state),
    ["consumed"],
  );
  // The page retries its event stream while the server is down (this test killed it): a
  // connection refused in that moment is the restart's, not a problem of the page.
  const restart = /WebSocket connection to '[^']*\/api\/events' failed: .*ERR_CONNECTION_REFUSED/;
  assert.deepEqual(
    alice.problems.filter((p) => !restart.test(p)),
    [],
  );
  await alice.context.close();
});
