import { useId } from "react";
import { formatBytes } from "../lib/format";

/** One block of what an MCP server answered (`content[]` of its `tools/call` result). */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "image" | "audio"; data: string; mimeType: string }
  | { type: "resource_link"; uri: string; name?: string; mimeType?: string }
  | {
      type: "resource";
      resource: { uri: string; mimeType?: string; text?: string; blob?: string };
    };

/**
 * Images shown in place: raster types only. An SVG can carry script and links; it is listed
 * like any other file type instead (the JSON keeps the data).
 */
const SHOWN_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * The content blocks of a result that is an MCP server's answer without structured content
 * (`{content: [...]}`, as Jig's gateway passes it on), or null when `data` is anything else.
 * Blocks of a kind this view does not know are kept out; the JSON still has them.
 */
export function contentBlocksOf(data: unknown): ContentBlock[] | null {
  const content = (data as { content?: unknown } | null | undefined)?.content;
  if (!Array.isArray(content) || content.length === 0) return null;
  const blocks = content.filter(known);
  return blocks.length > 0 ? blocks : null;
}

function known(block: unknown): block is ContentBlock {
  if (typeof block !== "object" || block === null) return false;
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return typeof b.text === "string";
    case "image":
    case "audio":
      return typeof b.data === "string" && typeof b.mimeType === "string";
    case "resource_link":
      return typeof b.uri === "string";
    case "resource":
      return typeof (b.resource as { uri?: unknown } | undefined)?.uri === "string";
    default:
      return false;
  }
}

/** Bytes a base64 text decodes to. */
function decodedSize(base64: string): number {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((base64.length * 3) / 4) - padding);
}

/** What the server answered, as a person reads it: text as text, images as pictures. */
export function McpContent({ blocks }: { blocks: ContentBlock[] }) {
  const heading = useId();
  return (
    <section aria-labelledby={heading} className="mcp-content">
      <h4 id={heading} className="visually-hidden">
        What the server answered
      </h4>
      {blocks.map((block, index) => (
        // Blocks have no identity of their own; their order is the answer's.
        <Block key={index} block={block} index={index} />
      ))}
    </section>
  );
}

function Block({ block, index }: { block: ContentBlock; index: number }) {
  switch (block.type) {
    case "text":
      return <pre className="mcp-text">{block.text}</pre>;
    case "image":
      return SHOWN_IMAGES.has(block.mimeType) ? (
        <img
          className="mcp-image"
          src={`data:${block.mimeType};base64,${block.data}`}
          alt={`Image ${index + 1} of the answer (${block.mimeType})`}
        />
      ) : (
        <p className="muted">
          An image ({block.mimeType}, {formatBytes(decodedSize(block.data))}), not shown here: see
          the JSON.
        </p>
      );
    case "audio":
      return (
        <p className="muted">
          Audio ({block.mimeType}, {formatBytes(decodedSize(block.data))}): see the JSON.
        </p>
      );
    case "resource_link":
      return (
        <p>
          A link to {block.name ? <strong>{block.name}</strong> : "a resource"}:{" "}
          <code>{block.uri}</code>
        </p>
      );
    case "resource":
      return (
        <div>
          <p>
            Resource <code>{block.resource.uri}</code>
            {block.resource.mimeType && <span className="muted"> ({block.resource.mimeType})</span>}
          </p>
          {typeof block.resource.text === "string" && (
            <pre className="mcp-text">{block.resource.text}</pre>
          )}
        </div>
      );
  }
}
