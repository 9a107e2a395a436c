// What every browser suite needs: one `jig serve` and one chromium for the file's tests, and a
// way to sign a person in (their own browser context).
import { after, before } from "node:test";
import { launch, person } from "./browser.mjs";
import { startServer } from "./server.mjs";

export function workbench() {
  const suite = { server: undefined, browser: undefined };
  before(async () => {
    suite.server = await startServer();
    suite.browser = await launch();
  });
  after(async () => {
    await suite.browser?.close();
    suite.server?.stop();
  });
  /** `name` signed in, on the Tools view (at 1280×800, or `viewport`). */
  suite.signIn = async (name, viewport) => {
    const who = await person(suite.browser, "light", viewport);
    await who.page.goto(suite.server.signIn(name));
    await who.page.getByRole("listbox", { name: "Tools" }).waitFor();
    return who;
  };
  return suite;
}
