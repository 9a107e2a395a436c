// A policy layer above the project (issue #44), in the workbench: the machine's managed file
// sends a tool the project allows to a person, and narrows the project's network allow-list.
// The server and the CLI run beside each other on the same project and the same layer, and
// agree on the policy; the browser shows which layer decided.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launch, person } from "./browser.mjs";
import { look } from "./look.mjs";
import { jigBinary, startServer } from "./server.mjs";

const layer = join(mkdtempSync(join(tmpdir(), "jig-layer-")), "policy.yaml");
writeFileSync(
  layer,
  "policy:\n" +
    "  rules:\n" +
    "    - { tools: [acme.slugify], action: require-approval }\n" +
    "  network: { allowed_domains: [api.github.com] }\n",
);
const env = { JIG_MANAGED_POLICY: layer };
const suite = {};

before(async () => {
  suite.server = await startServer({ env });
  suite.browser = await launch();
});
after(async () => {
  await suite.browser?.close();
  suite.server?.stop();
});

test("the Policy view shows each rule's layer, what it overrode and what it narrowed", async () => {
  const cli = JSON.parse(
    execFileSync(jigBinary(), ["--project", suite.server.project, "policy", "show", "--json"], {
      env: { ...process.env, ...env },
    }).toString(),
  );
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 1024, height: 700 },
  ]) {
    const ada = await person(suite.browser, "light", viewport);
    await ada.page.goto(suite.server.signIn("ada"));
    await ada.page.getByRole("listbox", { name: "Tools" }).waitFor();
    await ada.page.goto(`${suite.server.url}/#/policy`);
    const layers = ada.page.getByRole("list", { name: "Layers" });
    await layers.getByText(layer).waitFor();
    const rule = ada.page
      .getByRole("table", { name: "Rules" })
      .getByRole("row")
      .filter({ hasText: "machine:rules[0]" });
    await rule.getByText("tools acme.slugify").waitFor();
    await rule.getByText(/overrode rules\[1\]/).waitFor();
    const narrowed = ada.page.getByRole("table", { name: "Narrowed settings" });
    await narrowed.getByRole("row").filter({ hasText: "/network/allowed_domains" }).waitFor();
    // The server and the CLI beside it compiled the same policy.
    const shown = await ada.page.locator(".page-head code[title]").getAttribute("title");
    assert.equal(shown, cli.policy_hash);
    await look(ada.page, `policy-layers-${viewport.width}`);
    assert.deepEqual(ada.problems, []);
    await ada.context.close();
  }
});

test("the preview names the layer that decided, and the ask waits for a person", async () => {
  const alice = await person(suite.browser, "light");
  await alice.page.goto(suite.server.signIn("alice"));
  await alice.page.goto(`${suite.server.url}/#/tools/acme.slugify`);
  await alice.page.getByRole("heading", { name: "acme.slugify" }).waitFor();
  await alice.page.getByRole("radio", { name: "JSON" }).click();
  await alice.page.getByLabel("Arguments (JSON)").fill(JSON.stringify({ title: "Layered" }));
  const preview = alice.page.getByRole("status", { name: "Preview" });
  await preview.getByText("needs approval").waitFor();
  await preview.getByText("machine:rules[0]").waitFor();
  await preview.getByText("machine", { exact: true }).waitFor();
  await look(alice.page, "policy-layer-preview");
  // Another process asks the same through the API: the machine's rule holds there too.
  const asked = await suite.server.api("alice", "POST", "/api/calls", {
    tool: "acme.slugify",
    args: { title: "From the API" },
  });
  assert.equal(asked.status, 202);
  let queued = [];
  for (let i = 0; i < 50 && queued.length === 0; i++) {
    const queue = await suite.server.api("bob", "GET", "/api/approvals?all=true");
    queued = queue.body.filter((a) => a.request?.args?.title === "From the API");
    if (queued.length === 0) await alice.page.waitForTimeout(100);
  }
  assert.equal(queued[0]?.rule, "machine:rules[0]", JSON.stringify(queued));
  assert.deepEqual(alice.problems, []);
  await alice.context.close();
});
