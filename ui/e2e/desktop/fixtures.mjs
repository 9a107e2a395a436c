// What the desktop suites share: where the repository and the screenshots are, the example
// project as one person on their own machine has it, and screenshots in both themes.
import assert from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const shots = join(repo, "target/desktop-screenshots");
mkdirSync(shots, { recursive: true });

/** The example project copied to `dir`. */
export function example(dir) {
  cpSync(join(repo, "toolpacks/examples"), dir, { recursive: true });
}

/**
 * The example project copied to `dir`, with approving one's own requests allowed: one person
 * on their own machine (and the agents acting for them), no second reviewer.
 */
export function soloProject(dir) {
  example(dir);
  const manifest = join(dir, "jig.yaml");
  const policy = readFileSync(manifest, "utf8");
  assert.ok(policy.includes("self_approval: false"));
  writeFileSync(manifest, policy.replace("self_approval: false", "self_approval: true"));
}

/** Screenshots of `app` as `name`, light and dark. */
export async function shoot(app, name) {
  for (const theme of ["light", "dark"]) {
    await app.execute((t) => {
      document.documentElement.setAttribute("data-theme", t);
      return true;
    }, theme);
    await new Promise((r) => setTimeout(r, 150));
    writeFileSync(join(shots, `${name}-${theme}.png`), await app.screenshot());
  }
  await app.execute(() => {
    document.documentElement.removeAttribute("data-theme");
    return true;
  });
}
