// Debian's chromium, headless, with the flags this machine needs (shared/PLATFORM.md): no
// sandbox as root, and no background networking on a closed network.
import { chromium } from "playwright-core";

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** A person's own browser context (their own cookie), at 1280×800 unless told a size. */
export async function person(
  browser,
  colorScheme = "light",
  viewport = { width: 1280, height: 800 },
) {
  const context = await browser.newContext({ viewport, colorScheme });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (error) => problems.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    // The page it came from is kept: a test that leaves Jig (a provider's login page) tells
    // Jig's problems from another site's.
    if (message.type() === "error")
      problems.push(`console: ${message.text()} @ ${message.location().url}`);
  });
  return { context, page, problems };
}
