// The team's OpenID provider in the end-to-end suites: npm's `oidc-provider`
// (tests/oidc/provider.mjs), a project that signs people in with it, and a person signing in
// through its pages in chromium.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { person } from "./browser.mjs";
import { look } from "./look.mjs";
import { jigBinary } from "./server.mjs";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The client secret the provider and the servers share (`JIG_E2E_OIDC_SECRET`). */
export const OIDC_SECRET = "jig-e2e-client-secret";

/** The provider, on `port`, accepting the callbacks `redirects`; resolves once it listens. */
export async function startProvider(port, redirects) {
  const modules = process.env.JIG_OIDC_MODULES ?? join(homedir(), ".cache/jig-oidc/node_modules");
  const child = spawn(process.execPath, [join(repo, "tests/oidc/provider.mjs")], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      JIG_OIDC_MODULES: modules,
      PORT: String(port),
      REDIRECTS: redirects.join(","),
      CLIENT_SECRET: OIDC_SECRET,
    },
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  await new Promise((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`no provider: ${stderr}`)), 15000);
    child.stdout.on("data", (chunk) => {
      if (String(chunk).includes('"issuer"')) {
        clearTimeout(timer);
        ready();
      }
    });
    child.on("exit", (code) => fail(new Error(`provider exited ${code}: ${stderr}`)));
  });
  return child;
}

/** The project signs people in with the provider at `issuer`. */
export function withSignIn(issuer) {
  return (project) => {
    const manifest = join(project, "jig.yaml");
    const auth = [
      "  auth:",
      "    oidc:",
      `      issuer: ${issuer}`,
      "      client_id: jig",
      "      client_secret_env: JIG_E2E_OIDC_SECRET",
      "      roles:",
      "        admin: [admins]",
      "        approver: [approvers]",
      "        runner: [runners]",
      "        viewer: [viewers]",
      "",
    ].join("\n");
    writeFileSync(
      manifest,
      readFileSync(manifest, "utf8").replace("config:\n", `config:\n${auth}`),
    );
    // Whoever runs this server read its provider and consented to it (`jig trust`); before,
    // the provider signs nobody in (crates/jig-server/tests/api/sso.rs).
    execFileSync(jigBinary(), ["--project", project, "trust", "--yes"], { stdio: "pipe" });
  };
}

/**
 * `name` signs in on `server` the way a person does: the workbench's sign-in page, the
 * provider's login and consent pages, and back.
 */
export async function signIn(browser, server, name, { shots } = {}) {
  const who = await person(browser);
  const { page } = who;
  await page.goto(`${server.url}/#/approvals`);
  const button = page.getByRole("link", { name: /^Sign in with 127\.0\.0\.1:/ });
  await button.waitFor();
  if (shots) await look(page, "sign-in");
  await button.click();
  await page.locator('input[name="login"]').fill(name);
  await page.locator('input[name="password"]').fill("any password");
  await page.locator('button[type="submit"]').click();
  // The consent page (first sign-in of this person to this client): one button.
  const consent = page.locator('button[type="submit"]');
  await page.waitForURL(
    (url) => url.href.startsWith(server.url) || url.pathname.includes("interaction"),
  );
  if (!page.url().startsWith(server.url)) await consent.click();
  await page.waitForURL((url) => url.href.startsWith(server.url));
  return who;
}
