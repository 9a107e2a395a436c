// Single sign-on through a real OpenID provider (npm `oidc-provider`, tests/oidc/provider.mjs)
// in chromium, with four `jig serve` instances (each on its own checkout) on one PostgreSQL
// database, as a team deploys them: people sign in on either,
// their roles come from their groups, a request asked on one is approved on the other, a
// personal token works on both and stops on both when revoked, and signing out on one ends
// the session everywhere.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launch, person } from "./browser.mjs";
import { askToWrite } from "./asking.mjs";
import { look } from "./look.mjs";
import { OIDC_SECRET, signIn as oidcSignIn, startProvider, withSignIn } from "./oidc.mjs";
import { freePort } from "./ports.mjs";
import { startServer } from "./server.mjs";

const suite = {};

/**
 * A page's problems on Jig's own pages, less the 401s of the page that asked them to sign in
 * (expected: that is how it knows).
 */
const real = (problems) =>
  problems.filter(
    (p) => suite.all.some((server) => p.includes(`@ ${server.url}`)) && !/status of 401/.test(p),
  );

/** A database of its own on the PostgreSQL server scripts/test started. */
function database() {
  const url = process.env.JIG_TEST_POSTGRES_URL;
  assert.ok(url, "JIG_TEST_POSTGRES_URL: scripts/test starts PostgreSQL for this suite");
  const base = url.slice(0, url.lastIndexOf("/"));
  const name = `jig_e2e_signin_${process.pid}`;
  execFileSync("psql", [`${base}/postgres`, "-qc", `CREATE DATABASE ${name}`]);
  return `${base}/${name}`;
}

before(async () => {
  const providerPort = await freePort();
  const issuer = `http://127.0.0.1:${providerPort}`;
  const env = { JIG_E2E_OIDC_SECRET: OIDC_SECRET };
  suite.db = database();
  const global = ["--db", suite.db];
  // Four instances, each on its own checkout, as behind a load balancer.
  suite.all = [];
  for (let i = 0; i < 4; i++) {
    suite.all.push(await startServer({ configure: withSignIn(issuer), global, env }));
  }
  [suite.a, suite.b, suite.c, suite.d] = suite.all;
  suite.provider = await startProvider(
    providerPort,
    suite.all.map((server) => `${server.url}/auth/callback`),
  );
  suite.browser = await launch();
});

after(async () => {
  await suite.browser?.close();
  suite.provider?.kill("SIGTERM");
  for (const server of suite.all ?? []) server.stop();
});

const signIn = (server, name, options) => oidcSignIn(suite.browser, server, name, options);

test("people sign in with their provider account and act with their groups' roles", async () => {
  const bob = await signIn(suite.a, "bob", { shots: true });
  // Back where they started, as themselves.
  await bob.page.getByRole("heading", { name: "Approvals" }).waitFor();
  assert.ok(bob.page.url().endsWith("/#/approvals"), bob.page.url());
  await bob.page
    .getByRole("button", { name: /Signed in as bob@acme\.example, approver/ })
    .waitFor();

  const carol = await signIn(suite.b, "carol");
  await carol.page
    .getByRole("button", { name: /Signed in as carol@acme\.example, viewer/ })
    .waitFor();

  // Someone the provider knows, in no group with a role here: told so, not signed in.
  const erin = await person(suite.browser);
  await erin.page.goto(`${suite.a.url}/auth/login`);
  await erin.page.locator('input[name="login"]').fill("erin");
  await erin.page.locator('input[name="password"]').fill("x");
  await erin.page.locator('button[type="submit"]').click();
  await erin.page.waitForURL(
    (url) => url.href.startsWith(suite.a.url) || url.pathname.includes("interaction"),
  );
  if (!erin.page.url().startsWith(suite.a.url))
    await erin.page.locator('button[type="submit"]').click();
  await erin.page.getByRole("heading", { name: "No role for you here" }).waitFor();
  const cookies = await erin.context.cookies();
  assert.ok(!cookies.some((c) => c.name === "jig_session"), "no session for erin");

  assert.deepEqual(real([...bob.problems, ...carol.problems]), []);
  await Promise.all([bob.context.close(), carol.context.close(), erin.context.close()]);
});

test("alice asks on one instance, bob approves on the other, and alice's call runs", async () => {
  const alice = await signIn(suite.b, "alice");
  await askToWrite(alice.page, suite.b.url, {
    path: "signed.txt",
    content: "approved across instances\n",
  });

  const bob = await signIn(suite.a, "bob");
  const item = bob.page.getByRole("listitem", { name: /file_write/ });
  await item.getByText("alice@acme.example").first().waitFor({ timeout: 15000 });
  await item.getByRole("button", { name: "Approve and run" }).click();

  await alice.page.getByRole("heading", { name: "Succeeded" }).waitFor({ timeout: 20000 });
  assert.equal(
    readFileSync(join(suite.b.project, "signed.txt"), "utf8"),
    "approved across instances\n",
  );
  assert.deepEqual(real([...alice.problems, ...bob.problems]), []);
  await Promise.all([alice.context.close(), bob.context.close()]);
});

test("four instances: alice asks on one, bob approves on another, a viewer and an admin on the others see the same record", async () => {
  const alice = await signIn(suite.d, "alice");
  await askToWrite(alice.page, suite.d.url, {
    path: "four.txt",
    content: "approved across four instances\n",
  });
  const bob = await signIn(suite.c, "bob");
  await bob.page.goto(`${suite.c.url}/#/approvals`);
  const item = bob.page
    .getByRole("listitem", { name: /file_write/ })
    .filter({ hasText: "four.txt" });
  await item.getByRole("button", { name: "Approve and run" }).click();
  await alice.page.getByRole("heading", { name: "Succeeded" }).waitFor({ timeout: 20000 });
  assert.equal(
    readFileSync(join(suite.d.project, "four.txt"), "utf8"),
    "approved across four instances\n",
  );
  for (const other of [suite.a, suite.b, suite.c]) {
    assert.throws(
      () => readFileSync(join(other.project, "four.txt")),
      "ran on alice's instance only",
    );
  }
  // carol (a viewer) on B finds the run in the timeline; she cannot run anything.
  const carol = await signIn(suite.b, "carol");
  await carol.page.goto(`${suite.b.url}/#/audit`);
  await carol.page.getByRole("row").filter({ hasText: "file_write" }).first().waitFor();
  // dana (an admin) on A: the chain everyone appended to verifies.
  const dana = await signIn(suite.a, "dana");
  const chain = await dana.page.evaluate(async () => {
    const response = await fetch("/api/audit/verify");
    return response.json();
  });
  assert.equal(chain.status, "ok", JSON.stringify(chain));
  assert.deepEqual(
    real([...alice.problems, ...bob.problems, ...carol.problems, ...dana.problems]),
    [],
  );
  await Promise.all([alice, bob, carol, dana].map((who) => who.context.close()));
});

test("a personal token made on one instance works on both, and stops on both when revoked", async () => {
  const bob = await signIn(suite.a, "bob");
  const { page } = bob;
  await page.getByRole("button", { name: /Signed in as bob@acme\.example/ }).click();
  await page.getByRole("link", { name: "Personal tokens" }).click();
  await page.getByRole("heading", { name: "Personal tokens" }).waitFor();
  await page.getByText("No tokens yet").waitFor();
  await look(page, "tokens-empty");
  await page.getByLabel("Name").fill("agent on my laptop");
  await page.getByRole("combobox", { name: "Role" }).selectOption("runner");
  await page.getByRole("button", { name: "Make token" }).click();
  const secret = await page.getByLabel("The token").textContent();
  assert.match(secret, /^jig_pat_/);
  await look(page, "tokens-made");

  const asToken = async (server) => {
    const response = await fetch(`${server.url}/api/session`, {
      headers: { authorization: `Bearer ${secret}` },
    });
    return {
      status: response.status,
      body: response.status === 200 ? await response.json() : null,
    };
  };
  for (const server of [suite.a, suite.b]) {
    const { status, body } = await asToken(server);
    assert.equal(status, 200);
    assert.equal(body.person.name, "bob@acme.example");
    assert.equal(body.person.role, "runner");
  }
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: "Revoke agent on my laptop" }).click();
  await page.getByRole("region", { name: "Revoked tokens" }).waitFor();
  for (const server of [suite.a, suite.b]) assert.equal((await asToken(server)).status, 401);
  assert.deepEqual(real(bob.problems), []);
  await bob.context.close();
});

test("signing out on one instance ends the session on every instance", async () => {
  const bob = await signIn(suite.a, "bob");
  const [session] = (await bob.context.cookies()).filter((c) => c.name === "jig_session");
  assert.ok(session, "a session cookie");
  assert.ok(session.httpOnly, "HttpOnly");
  assert.equal(session.sameSite, "Strict");
  // The same cookie is good on the other instance (one store).
  const onB = () =>
    fetch(`${suite.b.url}/api/session`, { headers: { cookie: `jig_session=${session.value}` } });
  assert.equal((await onB()).status, 200);

  await bob.page.getByRole("button", { name: /Signed in as bob@acme\.example/ }).click();
  await look(bob.page, "who-menu");
  await bob.page.getByRole("button", { name: "Sign out" }).click();
  await bob.page.getByRole("link", { name: /^Sign in with/ }).waitFor();
  assert.equal((await onB()).status, 401, "the copied cookie is dead on the other instance");
  assert.deepEqual(real(bob.problems), []);
  await bob.context.close();
});

test("a change of the role mapping applies at once, and an expired session asks to sign in again", async () => {
  const carol = await signIn(suite.a, "carol");
  const who = (role) =>
    carol.page.getByRole("button", { name: new RegExp(`carol@acme\\.example, ${role}`) });
  await who("viewer").waitFor();
  // The team lets viewers run tools: the instance reloads its project and carol's next request
  // is a runner's, without signing in again.
  const manifest = join(suite.a.project, "jig.yaml");
  writeFileSync(
    manifest,
    readFileSync(manifest, "utf8").replace("runner: [runners]", "runner: [runners, viewers]"),
  );
  await who("runner").waitFor({ timeout: 15000 });
  // Her session's time is up (the store says so; nobody signed her out): the next load asks
  // her to sign in.
  execFileSync("psql", [
    suite.db,
    "-qc",
    "UPDATE web_sessions SET expires_us = 0 WHERE principal = 'carol@acme.example'",
  ]);
  await carol.page.reload();
  await carol.page.getByRole("link", { name: /^Sign in with/ }).waitFor();
  assert.deepEqual(real(carol.problems), []);
  await carol.context.close();
});
