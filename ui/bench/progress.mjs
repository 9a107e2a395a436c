// A call's progress on screen (docs/benchmarks.md): how long after a tool reports progress the
// workbench shows it. A node tool reports progress 40 times, 50 ms apart, each message carrying
// the wall-clock time it was written (ms since the epoch, fractional); the page, in Debian's
// chromium, notes the wall-clock time of the first frame after each message appears. The tool
// writes before the engine emits, so this is an upper bound of "engine emits → on screen"; the
// same clock serves both (one machine).
//   JIG_BIN=path/to/jig node bench/progress.mjs
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { launch, person } from "../e2e/browser.mjs";
import { startServer } from "../e2e/server.mjs";

const TICKER = `id: bench.ticker
version: 1.0.0
description: Report progress 40 times, 50 ms apart, each stamped with the time it was written.
deterministic: false
sideEffects: [none]
risk: low
limits: { maxInputBytes: 1024, maxOutputBytes: 65536 }
timeoutMs: 60000
inputSchema: { type: object, properties: { run: { type: integer } } }
outputSchema: { type: object }
execution:
  kind: node
  script: scripts/ticker.mjs
`;
const SCRIPT = `for (let i = 1; i <= 40; i++) {
  await new Promise((r) => setTimeout(r, 50));
  const now = performance.timeOrigin + performance.now();
  process.stdout.write(JSON.stringify({ type: "progress", pct: i * 2.5, message: "t=" + now }) + "\\n");
}
process.stdout.write(JSON.stringify({ type: "result", data: {} }) + "\\n");
`;

const server = await startServer();
writeFileSync(join(server.project, "tools/scripts/ticker.mjs"), SCRIPT);
writeFileSync(join(server.project, "tools/ticker.tool.yaml"), TICKER);
// The watcher picks the tool up.
for (let i = 0; ; i++) {
  const { status } = await server.api("ada", "GET", "/api/tools/bench.ticker");
  if (status === 200) break;
  if (i > 100) throw new Error("the ticker tool never loaded");
  await new Promise((r) => setTimeout(r, 100));
}

const browser = await launch();
const { page, problems } = await person(browser);
await page.goto(server.signIn("ada"));
await page.getByRole("listbox", { name: "Tools" }).waitFor();
const delays = [];
for (let run = 0; run < 3; run++) {
  await page.goto(`${server.url}/#/tools/bench.ticker`);
  await page.getByRole("button", { name: "Run" }).last().waitFor();
  await page.evaluate(() => {
    window.__delays = [];
    window.__observer?.disconnect();
    let last = "";
    window.__observer = new MutationObserver(() => {
      const text = [...document.querySelectorAll('[aria-label="Call"] .muted')]
        .map((e) => e.textContent ?? "")
        .find((t) => t.startsWith("t="));
      if (!text || text === last) return;
      last = text;
      const written = Number(text.slice(2));
      requestAnimationFrame(() => {
        window.__delays.push(performance.timeOrigin + performance.now() - written);
      });
    });
    window.__observer.observe(document.body, {
      childList: true,
      subtree: true,
      characterData: true,
    });
  });
  await page.locator('button.primary[aria-keyshortcuts="Control+Enter"]').click();
  await page.getByRole("heading", { name: "Succeeded" }).waitFor({ timeout: 30000 });
  delays.push(...(await page.evaluate(() => window.__delays)));
}
await browser.close();
server.stop();
if (problems.length > 0) throw new Error(problems.join("\n"));

const sorted = [...delays].sort((a, b) => a - b);
const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
console.log(
  `progress on screen after the tool wrote it: n ${sorted.length}, p50 ${at(0.5).toFixed(1)} ms, ` +
    `p95 ${at(0.95).toFixed(1)} ms, max ${sorted[sorted.length - 1].toFixed(1)} ms`,
);
