// An upstream MCP server behind Jig, in the workbench: the real npm server-filesystem named in
// the project's manifest, asked for its tools when `jig serve` starts (without holding it);
// its tools appear in the list with forms, a read runs, a write waits for a reviewer.
import assert from "node:assert/strict";
import { appendFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { launch, person } from "./browser.mjs";
import { look } from "./look.mjs";
import { startServer } from "./server.mjs";

const modules =
  process.env.JIG_MCP_NODE_MODULES ?? join(homedir(), ".cache/jig-mcp-node/node_modules");
const suite = {};

before(async () => {
  suite.server = await startServer({
    configure(project) {
      const servers = {
        files: {
          command: "node",
          args: [join(modules, "@modelcontextprotocol/server-filesystem/dist/index.js"), "."],
          grants: { paths: ["."], programs: [modules] },
        },
      };
      appendFileSync(join(project, "jig.yaml"), `\nmcp_servers: ${JSON.stringify(servers)}\n`);
      writeFileSync(join(project, "hello.txt"), "read in the workbench\n");
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
