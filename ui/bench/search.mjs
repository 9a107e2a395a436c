// Fuzzy search over 10,000 tools, per keystroke: the tool list's search and row building, the
// work the UI does between a key and the list it draws (the inner function; run by
// scripts/bench-workbench with Node's type stripping: node --experimental-strip-types).
import { noFilters, rows, searchTools, toolIndex } from "../src/views/tools/search.ts";

const words = [
  "deploy",
  "status",
  "release",
  "invoice",
  "slug",
  "journal",
  "restart",
  "probe",
  "tls",
  "dns",
  "git",
  "lint",
];
const tools = Array.from({ length: 10_000 }, (_, i) => ({
  id: `pkg${i % 200}.${words[i % words.length]}_${words[(i * 7) % words.length]}_${i}`,
  version: "1.0.0",
  description: `Tool ${i}: ${words[(i * 3) % words.length]} the ${words[(i * 5) % words.length]} of a service`,
  tags: [words[(i * 11) % words.length]],
  package: `pkg${i % 200}`,
  kind: "cli",
  side_effects: [i % 3 === 0 ? "write" : "none"],
  risk: "low",
  deterministic: true,
  verdict: { action: "allow", rule: "r", reason: "" },
}));

function measure(fn, times) {
  for (let i = 0; i < 5; i++) fn();
  const samples = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    fn();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return {
    p50: samples[Math.floor(times / 2)],
    p95: samples[Math.floor(times * 0.95)],
    max: samples[times - 1],
  };
}

const started = performance.now();
const index = toolIndex(tools);
const build = performance.now() - started;
const filters = noFilters();
console.log("| Keystroke (query so far) | p50 ms | p95 ms | max ms | Goal |");
console.log("|---|---|---|---|---|");
for (const query of ["d", "de", "dep", "depl", "deploy st", "relase"]) {
  const q = measure(() => rows(searchTools(tools, index, query, filters), false), 40);
  console.log(
    `| \`${query}\` | ${q.p50.toFixed(1)} | ${q.p95.toFixed(1)} | ${q.max.toFixed(1)} | ≤ 16 ms |`,
  );
}
console.log(
  `\nBuilding the index of 10,000 tools (once per registry change): ${build.toFixed(0)} ms.`,
);
