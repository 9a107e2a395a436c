// The record in the workbench end to end: the audit timeline, its filters in the URL, a run's
// diff, what-if over the calls made so far and the metrics, on their own `jig serve` and chromium.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { workbench } from "./harness.mjs";
import { look } from "./look.mjs";

const suite = workbench();
const signIn = suite.signIn;

test("the audit timeline filters, shows a run, and diffs two runs", async () => {
  for (const title of ["Release 1.2", "Release 1.3"]) {
    const started = await suite.server.api("alice", "POST", "/api/calls", {
      tool: "acme.slugify",
      args: { title },
    });
    assert.equal(started.status, 202);
  }
  const ada = await signIn("ada");
  await ada.page.goto(`${suite.server.url}/#/audit`);
  await ada.page.getByRole("table", { name: "Runs" }).waitFor();
  await ada.page.getByRole("textbox", { name: "Tool" }).fill("acme.slugify");
  const rows = ada.page.getByRole("row").filter({ hasText: "acme.slugify" });
  for (let i = 0; i < 50 && (await rows.count()) !== 2; i++) await ada.page.waitForTimeout(100);
  assert.equal(await rows.count(), 2, "two slugify runs after filtering");
  await look(ada.page, "audit");
  await rows.first().getByRole("link").click();
  await ada.page.getByRole("complementary").getByText("tool.call.request").waitFor();
  await look(ada.page, "audit-run");
  // Beside the open run the list keeps its columns in view (it leaves out the rule and the
  // request, which the run's pane shows): no sideways scroll at either size.
  const viewport = ada.page.viewportSize();
  for (const size of [
    { width: 1280, height: 800 },
    { width: 1024, height: 700 },
  ]) {
    await ada.page.setViewportSize(size);
    const table = ada.page.getByRole("table", { name: "Runs" });
    const sideways = await table
      .locator(".timeline-scroller")
      .evaluate((el) => el.scrollWidth - el.clientWidth);
    assert.ok(sideways <= 0, `the runs scroll sideways by ${sideways} px at ${size.width} px`);
    const took = await table.getByRole("columnheader", { name: "Took" }).boundingBox();
    const box = await table.boundingBox();
    assert.ok(
      took && box && took.x + took.width <= box.x + box.width,
      `the Took column is in view at ${size.width} px`,
    );
  }
  if (viewport) await ada.page.setViewportSize(viewport);
  await rows.nth(0).getByRole("checkbox").check();
  await rows.nth(1).getByRole("checkbox").check();
  await ada.page.getByRole("button", { name: /Compare 2\/2/ }).click();
  const args = ada.page.getByRole("region", { name: "Arguments" });
  await args.getByText("/title").waitFor();
  await args.getByText('"Release 1.2"').waitFor();
  await args.getByText('"Release 1.3"').waitFor();
  await ada.page.getByRole("region", { name: "Decision" }).getByText("identical").waitFor();
  await look(ada.page, "audit-diff");
  await ada.page.goto(`${suite.server.url}/#/audit`);
  const download = ada.page.waitForEvent("download");
  await ada.page.getByRole("button", { name: "Export the filtered runs as CSV" }).click();
  const csv = readFileSync(await (await download).path(), "utf8");
  assert.match(csv, /^created_us,request_id,run_id,tool/);
  assert.ok(csv.includes("acme.slugify"));
  await ada.page.getByRole("button", { name: "Verify the chain" }).click();
  await ada.page.getByText("intact").waitFor();
  await ada.context.close();
});

test("what-if replays a draft policy against the calls made so far", async () => {
  const ada = await signIn("ada");
  await ada.page.goto(`${suite.server.url}/#/policy`);
  // The effective rules, in order, as the manifest has them.
  const rules = ada.page.getByRole("table", { name: "Rules" });
  await rules
    .getByRole("row")
    .filter({ hasText: "rules[0]" })
    .getByText("effects write/exec")
    .waitFor();
  const draft = ada.page.getByLabel("Draft policy");
  const current = JSON.parse(await draft.inputValue());
  current.rules = [
    { effects: ["write"], action: "allow" },
    { risk: "low", action: "deny" },
  ];
  await draft.fill(JSON.stringify(current, null, 2));
  await ada.page.getByRole("button", { name: "Replay" }).click();
  const calls = ada.page.getByRole("table", { name: "Replayed calls" });
  // The slugify calls made earlier were allowed; the draft denies low-risk tools.
  const slugify = calls.getByRole("row").filter({ hasText: "acme.slugify" }).first();
  await slugify.getByText("rules[1]").waitFor();
  assert.match(await slugify.textContent(), /allow.*deny/s);
  await ada.page.getByRole("status").filter({ hasText: "would be decided differently" }).waitFor();
  await look(ada.page, "policy-what-if");
  await ada.context.close();
});

test("the audit's filters are in its URL (a link opens the same timeline) and can be saved", async () => {
  await suite.server.api("alice", "POST", "/api/calls", {
    tool: "file_read",
    args: { path: "no-such-file.txt" },
  });
  const ada = await signIn("ada");
  const { page } = ada;
  await page.goto(`${suite.server.url}/#/audit`);
  await page.getByRole("combobox", { name: "State" }).selectOption("failed");
  await page.getByLabel("Tool", { exact: true }).fill("file_read");
  await page.waitForFunction(() => window.location.hash.includes("tool=file_read"));
  const link = page.url();
  assert.match(link, /#\/audit\?.*state=failed/);
  // The URL changes as the filters do, before the filtered runs arrive; a row clicked while the
  // unfiltered ones are still drawn can move away under the pointer.
  await page.waitForFunction(() => {
    const rows = [...document.querySelectorAll('[aria-label^="Runs, newest first"] [role=row]')];
    return (
      !document.querySelector('[role="table"][aria-busy="true"]') &&
      rows.length > 0 &&
      rows.every(
        (row) => row.textContent.includes("file_read") && row.textContent.includes("failed"),
      )
    );
  });
  // Opening a run keeps them in the URL. Opened from the keyboard: a click is aimed at where
  // the row was a moment before, and twice in full runs (never alone) it opened nothing.
  await page
    .getByRole("row", { name: /file_read/ })
    .first()
    .getByRole("link", { name: "file_read" })
    .press("Enter");
  await page.waitForFunction(() => /^#\/audit\/[^?]+\?.*state=failed/.test(window.location.hash));

  // The link, opened by another person, shows the same timeline.
  const bob = await signIn("bob");
  await bob.page.goto(link);
  assert.equal(await bob.page.getByRole("combobox", { name: "State" }).inputValue(), "failed");
  assert.equal(await bob.page.getByLabel("Tool", { exact: true }).inputValue(), "file_read");
  await bob.page
    .getByRole("row", { name: /file_read/ })
    .first()
    .waitFor();
  await bob.context.close();

  // Saved under a name, the filters come back after a reload from an empty timeline.
  await page.getByRole("button", { name: "Save filters" }).click();
  await page.getByLabel("Name of the saved filter").fill("failed reads");
  await page.getByRole("button", { name: "Save", exact: true }).click();
  await page.goto(`${suite.server.url}/#/tools`);
  await page.reload();
  await page.goto(`${suite.server.url}/#/audit`);
  assert.equal(await page.getByRole("combobox", { name: "State" }).inputValue(), "");
  await page.getByRole("combobox", { name: "Saved filters" }).selectOption("failed reads");
  assert.equal(await page.getByRole("combobox", { name: "State" }).inputValue(), "failed");
  assert.equal(await page.getByLabel("Tool", { exact: true }).inputValue(), "file_read");
  await page.waitForFunction(() => window.location.hash.includes("state=failed"));
  await look(page, "audit-saved-filters");
  assert.deepEqual(ada.problems, []);
  await ada.context.close();
});

test("Metrics shows its time zone, zooms by drag, and compares tools by latency and error rate", async () => {
  for (const title of ["A", "B", "C"])
    await suite.server.api("alice", "POST", "/api/calls", {
      tool: "acme.slugify",
      args: { title },
    });
  // A second tool, so there is something to compare (a file that is not there fails).
  for (const path of ["jig.yaml", "missing.txt"])
    await suite.server.api("alice", "POST", "/api/calls", { tool: "file_read", args: { path } });
  const ada = await signIn("ada");
  const { page } = ada;
  await page.goto(`${suite.server.url}/#/metrics`);
  await page.getByText(/Times in \S+ \(UTC[+-]\d\d:\d\d\)/).waitFor();
  const chart = page.locator("figure.chart").first();
  const over = chart.locator(".u-over");
  await over.waitFor();
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.9, box.y + box.height / 2, { steps: 8 });
  await page.mouse.up();
  // The caption says what the chart shows now, and takes it back.
  const zoomed = chart.getByRole("status").filter({ hasText: /^zoomed to / });
  await zoomed.waitFor();
  await chart.getByRole("button", { name: "Show all" }).click();
  await zoomed.waitFor({ state: "detached" });

  // Per tool, as Grafana's panels: each tool's error rate and latency percentiles over the
  // window (the store's own figures), sortable, and the busiest tools compared over time.
  const series = await suite.server.api("ada", "GET", "/api/metrics/series?buckets=60");
  const table = page.getByRole("region", { name: "Tools" });
  const rowOf = (tool) => table.getByRole("row").filter({ has: page.getByLabel(`Chart ${tool}`) });
  const cells = async (tool) =>
    (await rowOf(tool).getByRole("cell").allInnerTexts()).map((t) => t.trim());
  const slug = series.body.tools.find((t) => t.tool === "acme.slugify");
  const [, calls, failed, rate, p50, p95, p99] = await cells("acme.slugify");
  assert.deepEqual([calls, failed], [String(slug.calls), String(slug.failed)]);
  assert.equal(rate, `${((slug.failed / (slug.calls - slug.denied)) * 100).toFixed(1)} %`);
  for (const [shown, ms] of [
    [p50, slug.p50],
    [p95, slug.p95],
    [p99, slug.p99],
  ]) {
    assert.match(shown, /^\d+(\.\d+)? (ms|s)$/, `a duration: ${shown}`);
    assert.ok(ms !== null);
  }
  // Sorted by p95, the slowest tool of the window comes first.
  await table.getByRole("button", { name: "p95" }).click();
  await table
    .getByRole("columnheader", { name: /p95/ })
    .and(page.locator("[aria-sort=descending]"))
    .waitFor();
  const slowest = [...series.body.tools]
    .filter((t) => t.p95 !== null)
    .sort((a, b) => b.p95 - a.p95 || a.tool.localeCompare(b.tool))[0];
  const firstRow = table.getByRole("row").nth(1);
  assert.equal(await firstRow.getByRole("button").first().innerText(), slowest.tool);
  for (const title of ["p95 latency by tool", "Error rate by tool"]) {
    const compared = page.locator("figure.chart").filter({ hasText: title });
    await compared.waitFor();
    // A line per busy tool, named in the legend.
    await compared.locator(".u-legend").getByText(series.body.tools[0].tool).waitFor();
  }
  await look(page, "metrics-by-tool");
  assert.deepEqual(ada.problems, []);
  await ada.context.close();
});
