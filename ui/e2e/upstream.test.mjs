// Upstream MCP servers behind Jig, in the workbench: the three real servers issue #29 names (npm
// server-filesystem and server-everything, PyPI mcp-server-git) in the project's manifest, asked
// for their tools when `jig serve` starts (without holding it); their tools appear in the list
// with forms, reads run, a write waits for a reviewer.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { launch, person } from "./browser.mjs";
import { look } from "./look.mjs";
import { jigBinary, startServer } from "./server.mjs";

const modules =
  process.env.JIG_MCP_NODE_MODULES ?? join(homedir(), ".cache/jig-mcp-node/node_modules");
const python = process.env.JIG_MCP_PYTHON ?? join(homedir(), ".cache/jig-mcp-venv/bin/python");
const suite = {};
const hostile = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../tests/fixtures/upstream/hostile.py",
);

/** Poll `read` until `done` accepts what it returns (the server works in the background). */
async function until(read, done) {
  for (let i = 0; i < 300; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("never");
}

before(async () => {
  suite.server = await startServer({
    configure(project) {
      const servers = {
        files: {
          command: "node",
          args: [join(modules, "@modelcontextprotocol/server-filesystem/dist/index.js"), "."],
          grants: { paths: ["."], programs: [modules] },
        },
        everything: {
          command: "node",
          args: [join(modules, "@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
          grants: { programs: [modules] },
        },
        // The venv's interpreter links to the one it was made from: both granted, read-only.
        git: {
          command: join(dirname(python), "mcp-server-git"),
          args: ["--repository", "."],
          grants: {
            paths: ["."],
            programs: [dirname(dirname(python)), dirname(dirname(realpathSync(python)))],
          },
        },
      };
      for (const args of [
        ["init", "-q"],
        ["add", "jig.yaml"],
        ["commit", "-qm", "first"],
      ]) {
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
          cwd: project,
          stdio: "ignore",
        });
      }
      appendFileSync(join(project, "jig.yaml"), `\nmcp_servers: ${JSON.stringify(servers)}\n`);
      writeFileSync(join(project, "hello.txt"), "read in the workbench\n");
      // A person asks once; `jig serve` then asks the server again at start by itself.
      execFileSync(jigBinary(), ["--project", project, "mcp", "discover"], { stdio: "ignore" });
    },
  });
  suite.browser = await launch();
});
after(async () => {
  await suite.browser?.close();
  suite.server?.stop();
});

test("an upstream server's tools appear with forms; a read runs and a write waits", async () => {
  const alice = await person(suite.browser);
  await alice.page.goto(suite.server.signIn("alice"));
  const search = alice.page.getByRole("combobox", { name: "Search tools" });
  await search.fill("files read_text_file");
  // Asked in the background at start: the list follows when the server answered.
  const option = alice.page
    .getByRole("listbox", { name: "Tools" })
    .getByRole("option")
    .filter({ hasText: "files.read_text_file" });
  await option.waitFor({ timeout: 60000 });
  await option.click();
  await alice.page.getByRole("heading", { name: "files.read_text_file" }).waitFor();
  await alice.page.getByLabel(/^path/).fill("hello.txt");
  const preview = alice.page.getByRole("status", { name: "Preview" });
  await preview.getByText("allow").waitFor();
  await look(alice.page, "upstream-tool");
  await alice.page.getByRole("button", { name: "Run", exact: true }).click();
  const call = alice.page.getByRole("region", { name: "Call" });
  await call.getByRole("heading", { name: "Succeeded" }).waitFor();
  await call
    .getByText(/read in the workbench/)
    .first()
    .waitFor();
  await look(alice.page, "upstream-tool-result");

  await alice.page.goto(`${suite.server.url}/#/tools/files.write_file`);
  await alice.page.getByRole("heading", { name: "files.write_file" }).waitFor();
  // No person has approved what this server calls a write: the policy's verdict says so.
  await alice.page.getByText("needs approval").first().waitFor();
  const write = await suite.server.api("alice", "GET", "/api/tools/files.write_file");
  assert.deepEqual(write.body.sideEffects ?? write.body.side_effects, ["write"]);
  assert.deepEqual(alice.problems, []);
  await alice.context.close();
});

test("the reference everything server and the git server run from their forms", async () => {
  const alice = await person(suite.browser);
  await alice.page.goto(suite.server.signIn("alice"));
  const run = async (id, fill, expected) => {
    await alice.page.goto(`${suite.server.url}/#/tools/${id}`);
    await alice.page.getByRole("heading", { name: id }).waitFor({ timeout: 60000 });
    await fill(alice.page);
    await alice.page.getByRole("status", { name: "Preview" }).getByText("allow").waitFor();
    await alice.page.getByRole("button", { name: "Run", exact: true }).click();
    const call = alice.page.getByRole("region", { name: "Call" });
    await call.getByRole("heading", { name: "Succeeded" }).waitFor();
    await call.getByText(expected).first().waitFor();
  };
  await until(
    () => suite.server.api("alice", "GET", "/api/tools"),
    (answer) =>
      ["everything.get-sum", "git.git_status"].every((id) =>
        answer.body.some?.((t) => t.id === id),
      ),
  );
  await run(
    "everything.get-sum",
    async (page) => {
      await page.getByLabel(/^a\b/).fill("2");
      await page.getByLabel(/^b\b/).fill("3");
    },
    /is 5/,
  );
  await look(alice.page, "upstream-everything-result");
  // A picture the server answered is shown as one, and so is the run in the audit.
  // A tool without parameters says so where its form would be.
  await run(
    "everything.get-tiny-image",
    (page) => page.getByText("This tool takes no arguments").waitFor(),
    /Here's the image you requested/,
  );
  await alice.page
    .getByRole("region", { name: "Call" })
    .getByRole("img", { name: "Image 2 of the answer (image/png)" })
    .waitFor();
  await look(alice.page, "upstream-image-result");
  await alice.page
    .getByRole("region", { name: "Call" })
    .getByRole("link", { name: /in Audit/ })
    .click();
  await alice.page
    .getByRole("complementary", { name: /^Run / })
    .getByRole("img", { name: "Image 2 of the answer (image/png)" })
    .waitFor();
  await look(alice.page, "upstream-image-run");
  await run("git.git_status", (page) => page.getByLabel(/^Repo Path\b/).fill("."), /On branch/);
  await look(alice.page, "upstream-git-result");
  assert.deepEqual(alice.problems, []);
  await alice.context.close();
});

test("a server added to the manifest is started only once a person asks, from the CLI beside the running workbench; one that fails is a problem in its own words", async () => {
  const manifest = join(suite.server.project, "jig.yaml");
  copyFileSync(hostile, join(suite.server.project, "hostile.py"));
  const text = readFileSync(manifest, "utf8");
  const line = text.split("\n").find((l) => l.startsWith("mcp_servers: "));
  const servers = JSON.parse(line.slice("mcp_servers: ".length));
  servers.evil = { command: "python3", args: ["hostile.py"], grants: { read: ["hostile.py"] } };
  servers.broken = {
    command: "python3",
    args: ["-c", "import sys; sys.stderr.write('broken: no config file\\n'); sys.exit(1)"],
  };
  writeFileSync(manifest, text.replace(line, `mcp_servers: ${JSON.stringify(servers)}`));

  // Saving the manifest starts nothing: the Problems view says who has not been asked.
  await until(
    () => suite.server.api("ada", "GET", "/api/problems"),
    (answer) => JSON.stringify(answer.body).includes("`evil` has not been asked"),
  );
  const listed = await suite.server.api("ada", "GET", "/api/tools");
  assert.ok(!listed.body.some((t) => t.id.startsWith("evil.")));
  // Asked from the terminal, another process: the running workbench hears of what it found.
  const asked = spawnSync(jigBinary(), ["--project", suite.server.project, "mcp", "discover"], {
    encoding: "utf8",
  });
  assert.equal(asked.status, 1, asked.stderr);
  assert.match(asked.stderr, /evil: \d+ tools/);
  assert.match(asked.stderr, /broken: .*it said: broken: no config file/);

  const tools = await until(
    () => suite.server.api("ada", "GET", "/api/tools"),
    (answer) => answer.body.some?.((t) => t.id === "evil.echo"),
  );
  assert.ok(!tools.body.some((t) => t.id.startsWith("broken.")));
  const problems = await until(
    () => suite.server.api("ada", "GET", "/api/problems"),
    (answer) => JSON.stringify(answer.body).includes("`broken` could not be asked"),
  );
  const broken = problems.body.find((d) => d.pointer === "/mcp_servers/broken");
  assert.match(broken.message, /it said: broken: no config file/);
  assert.equal(broken.severity, "warning");

  const ada = await person(suite.browser);
  await ada.page.goto(suite.server.signIn("ada"));
  await ada.page.goto(`${suite.server.url}/#/problems`);
  await ada.page
    .getByText(/could not be asked for its tools/)
    .first()
    .waitFor();
  await look(ada.page, "upstream-problem");
  assert.deepEqual(ada.problems, []);
  await ada.context.close();
});
