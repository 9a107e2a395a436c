import { JsonTree } from "./JsonTree";
import { McpContent, contentBlocksOf } from "./McpContent";

/**
 * A call's result: an MCP server's content blocks as they read (text, pictures), with the
 * JSON folded beneath them; any other result as its JSON tree.
 */
export function ResultBody({ data }: { data: unknown }) {
  const blocks = contentBlocksOf(data);
  if (!blocks) return <JsonTree value={data} label="Result" />;
  return (
    <>
      <McpContent blocks={blocks} />
      <details className="result-json">
        <summary>JSON</summary>
        <JsonTree value={data} label="Result" />
      </details>
    </>
  );
}
