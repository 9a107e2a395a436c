import { useMemo, type ReactNode } from "react";
import { parseBlocks, parseInline, type Block } from "../lib/markdown";
import { inlines } from "./MarkdownInline";

function block(node: Block, key: number, tight = false): ReactNode {
  switch (node.kind) {
    case "heading": {
      const Tag = `h${node.level}` as "h1";
      return <Tag key={key}>{inlines(parseInline(node.text))}</Tag>;
    }
    case "paragraph":
      // A tight list's items hold their text directly, as CommonMark draws them.
      return tight ? (
        <span key={key}>{inlines(parseInline(node.text))}</span>
      ) : (
        <p key={key}>{inlines(parseInline(node.text))}</p>
      );
    case "code":
      return (
        <pre key={key}>
          <code className={node.lang ? `language-${node.lang}` : undefined}>{node.text}</code>
        </pre>
      );
    case "quote":
      return <blockquote key={key}>{node.children.map((b, i) => block(b, i))}</blockquote>;
    case "rule":
      return <hr key={key} />;
    case "list": {
      const items = node.items.map((item, i) => (
        <li key={i}>{item.map((b, j) => block(b, j, node.tight))}</li>
      ));
      return node.ordered ? (
        <ol key={key} start={node.start === 1 ? undefined : node.start}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
  }
}

/**
 * Text a runbook's author wrote in Markdown (gert's step instructions), drawn as Markdown: no
 * raw HTML, no images fetched from anywhere, only http(s) and mailto links (lib/markdown.ts
 * says what is read).
 */
export function Markdown({ text, className }: { text: string; className?: string }) {
  const tree = useMemo(() => parseBlocks(text), [text]);
  return <div className={className}>{tree.map((b, i) => block(b, i))}</div>;
}
