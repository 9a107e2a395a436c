// The workbench's benchmark (scripts/bench-workbench): what a person waits for, measured on a
// running `jig serve` whose store holds many runs.
//   node bench/workbench.mjs URL TOKEN
// Prints a Markdown table: whole HTTP requests (Node's fetch, as a script would), and in Debian's
// chromium the audit view's first rows after navigation and long tasks while scrolling.
import { launch } from "../e2e/browser.mjs";
import { bundleSizes, describe } from "./bundle.mjs";

const [url, token] = process.argv.slice(2);
if (!url || !token) throw new Error("usage: node bench/workbench.mjs URL TOKEN");
const headers = { authorization: `Bearer ${token}` };

function quantiles(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { n: sorted.length, p50: at(0.5), p95: at(0.95), max: sorted[sorted.length - 1] };
}

async function timeRequest(path, times) {
  const samples = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    const response = await fetch(new URL(path, url), { headers });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
    samples.push(performance.now() - started);
  }
  return quantiles(samples);
}

const rows = [];
const row = (what, kind, q, goal = "") =>
  rows.push(
    `| ${what} | ${kind} | ${q.n} | ${q.p50.toFixed(1)} | ${q.p95.toFixed(1)} | ${q.max.toFixed(1)} | ${goal} |`,
  );

row(
  "GET /api/audit/runs?limit=200 (first page)",
  "HTTP, whole request",
  await timeRequest("/api/audit/runs?limit=200", 30),
  "≤ 300 ms (view)",
);
row(
  "… filtered by principal",
  "HTTP, whole request",
  await timeRequest("/api/audit/runs?limit=200&principal=carol", 20),
);
row(
  "… text search in arguments (`notes-07`)",
  "HTTP, whole request",
  await timeRequest("/api/audit/runs?limit=200&q=notes-07", 10),
);
let cursor;
for (let i = 0; i < 100; i++) {
  const page = await (
    await fetch(new URL(`/api/audit/runs?limit=500${cursor ? `&after=${cursor}` : ""}`, url), {
      headers,
    })
  ).json();
  cursor = page.next;
}
row(
  "… page after 50,000 rows (cursor)",
  "HTTP, whole request",
  await timeRequest(`/api/audit/runs?limit=200&after=${cursor}`, 20),
);
row("GET /api/tools", "HTTP, whole request", await timeRequest("/api/tools", 30));

// The browser: from navigation to the first rows of the timeline on screen. The page notes the
// frame that first paints a row itself (a MutationObserver sees the row inserted; the next
// animation frame is when it reaches the screen). Reading performance.now() once the driver's
// waitFor returns, as this bench did until 2026-11-29, adds the driver's round trip: both are
// reported, from the same navigations.
const browser = await launch();
const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
await context.addInitScript(() => {
  const observer = new MutationObserver(() => {
    if (!document.querySelector(".timeline-row[aria-rowindex]")) return;
    observer.disconnect();
    requestAnimationFrame(() => {
      window.__firstRowPainted = performance.now();
    });
  });
  observer.observe(document, { childList: true, subtree: true });
});
const page = await context.newPage();
await page.goto(`${url}/?token=${token}`);
const painted = [];
const afterWaitFor = [];
const navigations = Number(process.env.JIG_BENCH_NAVIGATIONS ?? 22);
for (let i = 0; i < navigations; i++) {
  await page.goto("about:blank");
  await page.goto(`${url}/#/audit`);
  await page.locator(".timeline-row[aria-rowindex]").first().waitFor();
  const seen = await page.evaluate(() => performance.now());
  await page.waitForFunction(() => window.__firstRowPainted !== undefined);
  // The first two warm the browser's caches, as a person's second visit would.
  if (i < 2) continue;
  afterWaitFor.push(seen);
  painted.push(await page.evaluate(() => window.__firstRowPainted));
}
row(
  "Audit view: navigation to first rows painted",
  "browser (chromium), the page's own clock at the painting frame",
  quantiles(painted),
  "≤ 300 ms",
);
row(
  "… read after the driver's waitFor (the method before 2026-11-29)",
  "browser (chromium), `performance.now()` after waitFor",
  quantiles(afterWaitFor),
  "",
);

// Scrolling the loaded timeline: long tasks (> 50 ms) seen by the page.
await page.evaluate(() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push(entry.duration);
  }).observe({ type: "longtask", buffered: false });
});
const scroller = page.locator(".timeline-scroller");
await scroller.hover();
const frames = [];
for (let i = 0; i < 120; i++) {
  const started = performance.now();
  await page.mouse.wheel(0, 1200);
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => resolve())));
  frames.push(performance.now() - started);
}
const longTasks = await page.evaluate(() => window.__longTasks);
const loaded = await page.locator(".timeline-foot").textContent();
row(
  `Audit view: 120 wheel scrolls (${loaded?.trim()})`,
  "browser, wheel → next frame",
  quantiles(frames),
);
console.error(
  `long tasks while scrolling: ${longTasks.length} (longest ${Math.max(0, ...longTasks).toFixed(0)} ms)`,
);
await browser.close();

const bundle = describe(bundleSizes(new URL("../dist/", import.meta.url).pathname));

console.log("| What | Measured as | n | p50 ms | p95 ms | max ms | Goal |");
console.log("|---|---|---|---|---|---|---|");
for (const line of rows) console.log(line);
console.log(
  `\nLong tasks (> 50 ms) while scrolling: ${longTasks.length}, longest ${Math.max(0, ...longTasks).toFixed(0)} ms (goal: none over 50 ms).`,
);
console.log(`Bundle: ${bundle.line}.`);
