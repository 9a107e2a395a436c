// The person's own browser, as the desktop app starts it to sign in to a team server
// (`$BROWSER URL`): Debian's chromium through Playwright, where the person signs in with the
// team's provider as `name` and allows the app on the server's page. It ends once the app's
// loopback address has answered.
//
//   node system-browser.mjs NAME SCREENSHOTS URL
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { launch, person } from "../browser.mjs";

const [name, shots, url] = process.argv.slice(2);
console.log(`opening ${url} as ${name}`);
const browser = await launch();
const { page, problems } = await person(browser);
try {
  await page.goto(url);
  // The provider's login page, then (the first time) its consent.
  await page.locator('input[name="login"]').fill(name);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  const allow = page.getByRole("button", { name: "Allow the desktop app" });
  await page.waitForURL(
    (u) => u.pathname === "/auth/desktop" || u.pathname.includes("interaction"),
  );
  if (page.url().includes("interaction")) await page.locator('button[type="submit"]').click();
  await allow.waitFor();
  console.log("the server asks to allow the app");
  writeFileSync(join(shots, "desktop-team-consent.png"), await page.screenshot());
  await allow.click();
  await page.getByRole("heading", { name: "Signed in" }).waitFor();
  console.log("the app's loopback address answered");
  writeFileSync(join(shots, "desktop-team-signed-in.png"), await page.screenshot());
} catch (error) {
  console.log(`the sign-in failed at ${page.url()}: ${error.message}`);
  console.log(
    `the page: ${await page
      .locator("body")
      .innerText()
      .catch(() => "?")}`,
  );
  console.log(`its problems: ${problems.join("\n")}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
