// The reviewer's queue when many requests wait: several picked (one by one, or every request
// asking the same) and decided with one note; one decided meanwhile by someone else leaves the
// selection.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
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
