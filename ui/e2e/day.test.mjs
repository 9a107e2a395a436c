// A reviewer's day, end to end, at the two sizes people use most (1024×700 and 1440×900): alice
// asks for a write with a multi-line argument and for a second one; bob denies the first with a
// reason and approves the second; alice is told both outcomes where she is; the audit filters
// the denied and the approved calls; Metrics counts both; a runbook run's steps open with their
// timings. Every view on the way is looked at (axe, light and dark).
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { workbench } from "./harness.mjs";
import { look } from "./look.mjs";

const suite = workbench();

for (const [width, height] of [
  [1024, 700],
  [1440, 900],
]) {
  test(`the reviewer's day at ${width}×${height}`, async () => {
    const size = { width, height };
    const tag = `day-${width}`;
    const first = `${tag}-notes.txt`;
    const second = `${tag}-ok.txt`;
    const alice = await suite.signIn("alice", size);
    const bob = await suite.signIn("bob", size);

    // Alice types a multi-line argument into the form: Enter makes a new line.
    const asker = alice.page;
    await asker.goto(`${suite.server.url}/#/tools/file_write`);
    await asker.getByRole("heading", { name: "file_write" }).waitFor();
    await asker.getByRole("textbox", { name: /^path/ }).fill(first);
    const content = asker.getByRole("textbox", { name: /^content/ });
    await content.click();
    await asker.keyboard.type("line one");
    await asker.keyboard.press("Enter");
    await asker.keyboard.type("line two");
    assert.equal(await content.inputValue(), "line one\nline two");
    // A boolean's box sits beside its name, not centred across the form above it.
    const box = await asker.getByRole("checkbox", { name: "create_dirs" }).boundingBox();
    const name = await asker
      .locator(".checkbox > label span", { hasText: "create_dirs" })
      .boundingBox();
    const middle = (r) => r.y + r.height / 2;
    assert.ok(
      Math.abs(middle(box) - middle(name)) < 6 &&
        name.x > box.x &&
        name.x - (box.x + box.width) < 24,
      `box ${JSON.stringify(box)}, name ${JSON.stringify(name)}`,
    );
    await asker.getByRole("status", { name: "Preview" }).getByText("needs approval").waitFor();
    await asker.getByRole("button", { name: "Run", exact: true }).click();
    await asker.getByRole("heading", { name: "Waiting for approval" }).waitFor();
    await look(asker, `${tag}-asked`);
    // The second request, made elsewhere (a terminal, a script): alice hears of it all the same.
    const asked = await suite.server.api("alice", "POST", "/api/calls", {
      tool: "file_write",
      args: { path: second, content: "approved\n" },
    });
    assert.equal(asked.status, 202);

    // Bob's queue: the multi-line argument as it will be written; deny it with a reason.
    await bob.page.goto(`${suite.server.url}/#/approvals`);
    const denyCard = bob.page.getByRole("listitem", { name: /file_write/ }).filter({
      hasText: first,
    });
    await denyCard.getByText(/line two/).waitFor();
    await look(bob.page, `${tag}-queue`);
    await denyCard.getByLabel(/Note for alice/).fill("keep notes in the wiki");
    await denyCard.getByRole("button", { name: "Deny" }).click();
    await denyCard.waitFor({ state: "detached" });
    const approveCard = bob.page.getByRole("listitem", { name: /file_write/ }).filter({
      hasText: second,
    });
    await approveCard.getByRole("button", { name: "Approve and run" }).click();
    await approveCard.waitFor({ state: "detached" });

    // Alice is told both, where she is; the panel of her own call says why it was denied.
    const notices = asker.getByRole("region", { name: "Notifications" });
    await notices.getByText("bob denied your file_write: keep notes in the wiki").waitFor();
    await notices.getByText("bob approved your file_write: it runs now").waitFor();
    await asker
      .getByText(/keep notes in the wiki/)
      .first()
      .waitFor();
    await look(asker, `${tag}-told`);
    assert.equal(existsSync(join(suite.server.project, first)), false, "the denied write");
    for (let i = 0; i < 50 && !existsSync(join(suite.server.project, second)); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(readFileSync(join(suite.server.project, second), "utf8"), "approved\n");

    // The audit, filtered by what happened: the denied call, and the approved one.
    await asker.goto(`${suite.server.url}/#/audit`);
    await asker.getByRole("heading", { name: "Audit" }).waitFor();
    for (const [state, path] of [
      ["denied", first],
      ["approved", second],
    ]) {
      const expected = await suite.server.api("alice", "GET", `/api/audit/runs?state=${state}`);
      const ours = expected.body.runs.filter((r) => r.tool === "file_write");
      assert.ok(ours.length > 0, `some ${state} call`);
      await asker.getByRole("combobox", { name: "State" }).selectOption(state);
      const rows = asker.getByRole("row", { name: /file_write/ });
      // The filter's own runs, not the previous filter's kept on screen while they load.
      await asker.waitForFunction(
        ([n]) =>
          !document.querySelector('[role="table"][aria-busy="true"]') &&
          document.querySelectorAll('[role="row"]').length - 1 === n,
        [expected.body.runs.length],
      );
      assert.equal(await rows.count(), ours.length, `${state}: ${path}`);
      await look(asker, `${tag}-audit-${state}`);
    }

    // Metrics counts both outcomes, as the store does.
    const series = await suite.server.api("alice", "GET", "/api/metrics/series?buckets=24");
    const counts = Object.fromEntries(series.body.approvals.map((c) => [c.name, c.count]));
    assert.ok(counts.approved >= 1 && counts.denied >= 1, JSON.stringify(counts));
    await asker.goto(`${suite.server.url}/#/metrics`);
    const table = asker.getByRole("region", { name: "Approvals by outcome" });
    for (const outcome of ["approved", "denied"]) {
      await table
        .getByRole("row", { name: new RegExp(`^${outcome} ${counts[outcome]}$`) })
        .waitFor();
    }
    await look(asker, `${tag}-metrics`);

    // A runbook run: its steps open, with how long each took.
    const started = await suite.server.api("alice", "POST", "/api/runbook-runs", {
      runbook: "incident/write-up",
      inputs: { incident: `INC-${width}`, week: 4 },
      stepwise: false,
    });
    assert.equal(started.status, 201);
    await asker.goto(`${suite.server.url}/#/runbooks/run/${started.body.id}`);
    const steps = asker.getByRole("region", { name: "Steps" });
    const rota = steps.getByRole("link", { name: /^rota / });
    assert.match(await rota.innerText(), /\d+(\.\d)? (ms|s)/);
    await rota.click();
    const detail = asker.getByRole("region", { name: "rota" });
    const took = await detail.locator("dt:text-is('Took') + dd").innerText();
    assert.match(took, /^\d+(\.\d)? (ms|s)$/, "the step's duration");
    await look(asker, `${tag}-runbook-step`);

    assert.deepEqual([...alice.problems, ...bob.problems], []);
    await alice.context.close();
    await bob.context.close();
  });
}
