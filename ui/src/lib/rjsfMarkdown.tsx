import { MarkdownInline } from "../components/MarkdownInline";

/**
 * Stands in for `markdown-to-jsx` inside @rjsf/core (vite.config.ts points the import here).
 * rjsf draws its own messages with it ("Unsupported field schema for field `x`: _reason_."),
 * which use only inline Markdown, and Markdown in descriptions and help, which Jig never turns
 * on (its fields draw descriptions with `Inline`). The full parser was 84 kB of the tool page's
 * chunk, and it reads raw HTML where rjsf does not tell it not to; Jig's inline reader drops it.
 */
export function Markdown({ children }: { children?: string; options?: unknown }) {
  return children ? <MarkdownInline text={children} /> : null;
}
