import { describe, expect, it } from "vitest";
import { curlCommand, jigCallCommand, mcpToolsCall, shellQuote } from "./shell";

describe("copy a call", () => {
  const args = { path: "it's.txt", content: "a\nb" };

  it("quotes for a POSIX shell", () => {
    expect(shellQuote("plain")).toBe("plain");
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it("writes jig call, curl and MCP forms of the same arguments", () => {
    expect(jigCallCommand("file_write", args)).toBe(
      `jig call file_write --args '{"path":"it'\\''s.txt","content":"a\\nb"}'`,
    );
    const curl = curlCommand("http://127.0.0.1:7878", "file_write", args);
    expect(curl).toContain("-X POST http://127.0.0.1:7878/api/calls");
    expect(curl).toContain(`Authorization: Bearer $JIG_TOKEN`);
    expect(curl).toContain(
      `'{"tool":"file_write","args":{"path":"it'\\''s.txt","content":"a\\nb"}}'`,
    );
    const mcp = JSON.parse(mcpToolsCall("file_write", args)) as {
      method: string;
      params: { name: string; arguments: unknown };
    };
    expect(mcp.method).toBe("tools/call");
    expect(mcp.params).toEqual({ name: "file_write", arguments: args });
  });
});

describe("shellQuote against a real shell", () => {
  it("keeps a hostile argument one word, exactly as it was", async () => {
    const { execFileSync } = await import("node:child_process");
    for (const word of ["$(touch /tmp/jig-pwned)", "a'b\"c`d`", "two\nlines", "-rf", "~/*"]) {
      const echoed = execFileSync("sh", ["-c", `printf %s ${shellQuote(word)}`], {
        encoding: "utf8",
      });
      expect(echoed).toBe(word);
    }
  });
});
