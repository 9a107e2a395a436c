import { Inline } from "../components/Inline";

/**
 * Stands in for `markdown-to-jsx` inside @rjsf/core (vite.config.ts points the import here).
 * rjsf draws its own messages with it ("Unsupported field schema for field `x`: _reason_."),
 * which use only code spans and `_emphasis_`, and Markdown in descriptions and help, which
 * Jig never turns on (its fields draw descriptions with `Inline`). The full parser was 84 kB
 * of the tool page's chunk, and it reads raw HTML where rjsf does not tell it not to.
 */
export function Markdown({ children }: { children?: string; options?: unknown }) {
  if (!children) return null;
  // A whole `_…_` run is emphasis (rjsf's reasons); inside and around it, code spans.
  const parts = children.split(/(?<![\w`])_([^_\n`]+)_(?![\w`])/);
  return (
    <>
      {parts.map((part, i) =>
        i % 2 === 1 ? (
          <em key={i}>
            <Inline text={part} />
          </em>
        ) : (
          <Inline key={i} text={part} />
        ),
      )}
    </>
  );
}
