// What the workbench's JavaScript weighs (issue #28's budget, docs/benchmarks.md), read from a
// build in ui/dist: the scripts index.html loads or preloads before any view, and every chunk.
import { gzipSync } from "node:zlib";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The budget, in bytes: gzipped for what is sent, raw for one chunk (what is parsed). */
export const BUDGET = { initialGz: 100 * 1024, allGz: 400 * 1024, chunkRaw: 400 * 1024 };

/** Sizes of the build in `dist`: initial (gzipped), every chunk (raw and gzipped), their sum. */
export function bundleSizes(dist) {
  const index = readFileSync(join(dist, "index.html"), "utf8");
  // The entry script and the modules it preloads: both are fetched before the first view.
  const initial = [...index.matchAll(/(?:src|href)="\.\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]);
  const chunks = readdirSync(join(dist, "assets"))
    .filter((f) => f.endsWith(".js"))
    .map((f) => {
      const raw = readFileSync(join(dist, "assets", f));
      return { file: `assets/${f}`, raw: raw.length, gz: gzipSync(raw).length };
    });
  const gzOf = (file) => chunks.find((c) => c.file === file)?.gz ?? 0;
  return {
    initial,
    initialGz: initial.reduce((sum, f) => sum + gzOf(f), 0),
    chunks,
    allGz: chunks.reduce((sum, c) => sum + c.gz, 0),
    largest: chunks.reduce((a, b) => (b.raw > a.raw ? b : a)),
  };
}

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

/** The sizes in one line, and what is over the budget (empty when it holds). */
export function describe(sizes) {
  const line =
    `initial JavaScript ${kib(sizes.initialGz)} gzipped (${sizes.initial.join(", ")}; budget ${kib(BUDGET.initialGz)}); ` +
    `largest chunk ${sizes.largest.file} ${kib(sizes.largest.raw)} (${kib(sizes.largest.gz)} gzipped; budget ${kib(BUDGET.chunkRaw)}); ` +
    `all ${sizes.chunks.length} chunks ${kib(sizes.allGz)} gzipped (budget ${kib(BUDGET.allGz)})`;
  const over = [
    sizes.initialGz > BUDGET.initialGz && "the initial JavaScript",
    sizes.largest.raw > BUDGET.chunkRaw && `the chunk ${sizes.largest.file}`,
    sizes.allGz > BUDGET.allGz && "all chunks together",
  ].filter(Boolean);
  return { line, over };
}
