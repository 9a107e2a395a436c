/** Quote one word for a POSIX shell (single quotes; embedded ones closed and escaped). */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `jig call` that makes the same call from a terminal. */
export function jigCallCommand(tool: string, args: unknown): string {
  return `jig call ${shellQuote(tool)} --args ${shellQuote(JSON.stringify(args))}`;
}

/**
 * The same call against the HTTP API with curl: `origin` is where this workbench is served
 * (`$JIG_URL` where it is not served over HTTP, as in the desktop app); the token is a personal
 * token the reader supplies as `$JIG_TOKEN`.
 */
export function curlCommand(origin: string, tool: string, args: unknown): string {
  const body = JSON.stringify({ tool, args });
  return [
    `curl -sS -X POST ${shellQuote(`${origin}/api/calls`)}`,
    `-H "Authorization: Bearer $JIG_TOKEN"`,
    `-H 'Content-Type: application/json'`,
    `--data ${shellQuote(body)}`,
  ].join(" \\\n  ");
}

/** The same call as an MCP `tools/call` request (JSON-RPC), as an agent sends it to `jig mcp`. */
export function mcpToolsCall(tool: string, args: unknown): string {
  return JSON.stringify(
    { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: tool, arguments: args } },
    null,
    2,
  );
}
