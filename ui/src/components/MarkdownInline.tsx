import type { ReactNode } from "react";
import { parseInline, type Inline } from "../lib/markdownInline";

/** Only web and mail links survive; anything else (javascript:, file:, data:) becomes inert. */
function safeUrl(url: string): string | null {
  return /^(https?:|mailto:)/i.test(url) ? url : null;
}

/** Inline Markdown drawn as elements: text stays text, only web and mail links are links. */
export function inlines(nodes: Inline[]): ReactNode[] {
  return nodes.map((node, i) => {
    if (typeof node === "string") return node;
    switch (node.kind) {
      case "code":
        return <code key={i}>{node.text}</code>;
      case "strong":
        return <strong key={i}>{inlines(node.children)}</strong>;
      case "em":
        return <em key={i}>{inlines(node.children)}</em>;
      case "br":
        return <br key={i} />;
      case "link": {
        const href = safeUrl(node.href);
        // A link leaves the workbench: never in the app's own window.
        return href ? (
          <a key={i} href={href} target="_blank" rel="noreferrer noopener">
            {inlines(node.children)}
          </a>
        ) : (
          <span key={i}>{inlines(node.children)}</span>
        );
      }
    }
  });
}

/** One line of Markdown (a message, a paragraph's text): code, emphasis, strong, links. */
export function MarkdownInline({ text }: { text: string }) {
  return <>{inlines(parseInline(text))}</>;
}
