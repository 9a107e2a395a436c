// Every view is looked at: axe-core in light and dark (no violation of any impact), and a
// screenshot of each under target/ui-screenshots (CI keeps them as artefacts).
import AxeBuilder from "@axe-core/playwright";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const shots = resolve(dirname(fileURLToPath(import.meta.url)), "../../target/ui-screenshots");
mkdirSync(shots, { recursive: true });

export async function look(page, name) {
  for (const scheme of ["light", "dark"]) {
    await page.emulateMedia({ colorScheme: scheme });
    // Let transitions settle so the screenshot and the contrast check see the final colours.
    await page.waitForTimeout(150);
    await page.screenshot({ path: join(shots, `${name}-${scheme}.png`) });
    const { violations } = await new AxeBuilder({ page }).analyze();
    // Any impact: a moderate or minor finding is a finding too.
    const bad = violations;
    assert.deepEqual(
      bad.map(
        (v) =>
          `${v.id} (${v.impact}): ${v.help} — ${v.nodes
            .map((n) => n.target.join(" "))
            .slice(0, 3)
            .join(", ")}`,
      ),
      [],
      `${name} in ${scheme}`,
    );
  }
  await page.emulateMedia({ colorScheme: "light" });
}
