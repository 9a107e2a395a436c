// The bundle budget as a check (scripts/test runs it after the build): exits 1, naming what is
// over, when the initial JavaScript, a chunk or every chunk together outgrows issue #28's budget.
//   node bench/budget.mjs
import { bundleSizes, describe } from "./bundle.mjs";

const { line, over } = describe(bundleSizes(new URL("../dist/", import.meta.url).pathname));
console.log(`bundle: ${line}`);
if (over.length > 0) {
  console.error(`over the budget: ${over.join(", ")} (docs/benchmarks.md)`);
  process.exit(1);
}
