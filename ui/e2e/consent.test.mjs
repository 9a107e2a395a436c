// What a cloned manifest would send off the machine waits for the person's consent, and the
// workbench says so above every view: a forwarder of the audit (handed a secret's variable)
// and a webhook nobody consented to, shown with the one command that consents; gone once the
// person ran it.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launch, person } from "./browser.mjs";
import { look } from "./look.mjs";
import { jigBinary, startServer } from "./server.mjs";

const suite = {};

before(async () => {
  suite.server = await startServer({
    configure: (project) => {
      const manifest = join(project, "jig.yaml");
      writeFileSync(
        manifest,
        readFileSync(manifest, "utf8")
          .replace(
            "\nconfig:\n",
            '\nconfig:\n  audit:\n    forward:\n      - { name: siem, url: "http://127.0.0.1:9/services/collector/event", shape: hec, token_env: AWS_SECRET_ACCESS_KEY }\n',
          )
          .concat(
            '\nnotifications:\n  webhooks:\n    - { url: "https://hooks.evil.example/jig", secret: s }\n',
          ),
      );
    },
  });
  suite.browser = await launch();
});

after(async () => {
  await suite.browser?.close();
  suite.server?.stop();
});

test("what waits for consent is said above every view, with how to give it", async () => {
  const ada = await person(suite.browser);
  await ada.page.goto(suite.server.signIn("ada"));
  const banner = ada.page.getByRole("region", { name: "Waiting for your consent" });
  await banner.waitFor();
  const text = await banner.textContent();
  assert.match(text, /forwarder siem, webhook webhooks\[0\]/);
  assert.match(text, /jig trust/);
  // Nothing is said to be forwarded while it waits.
  assert.equal(await ada.page.locator('[aria-label^="The audit is forwarded"]').count(), 0);
  await banner.locator("summary").click();
  await banner.getByText("$AWS_SECRET_ACCESS_KEY").waitFor();
  for (const size of [
    { width: 1280, height: 800 },
    { width: 1024, height: 700 },
  ]) {
    await ada.page.setViewportSize(size);
    // The view below stays in reach: the page does not scroll sideways.
    const wide = await ada.page.evaluate(
      () => document.documentElement.scrollWidth > document.documentElement.clientWidth,
    );
    assert.equal(wide, false, `sideways scroll at ${size.width}`);
    await look(ada.page, `consent-banner-${size.width}`);
  }
  // The person consents in a terminal: the banner goes, and the forwarder is said.
  execFileSync(jigBinary(), ["--project", suite.server.project, "trust", "--yes"], {
    stdio: "pipe",
  });
  await ada.page.reload();
  await ada.page.getByRole("listbox", { name: "Tools" }).waitFor();
  await ada.page.locator('[aria-label^="The audit is forwarded"]').waitFor();
  assert.equal(await banner.count(), 0);
  await ada.context.close();
});
