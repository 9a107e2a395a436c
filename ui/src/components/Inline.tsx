/**
 * A short text written with Markdown's `code` spans (a tool's description, a rule's reason, a
 * diagnostic): the spans drawn as code, the backticks gone. Nothing else is interpreted; the
 * text stays text.
 */
export function Inline({ text }: { text: string | null | undefined }) {
  if (!text) return null;
  const parts = text.split(/(`[^`\n]+`)/);
  return (
    <>
      {parts.map((part, i) =>
        part.length > 2 && part.startsWith("`") && part.endsWith("`") ? (
          <code key={i}>{part.slice(1, -1)}</code>
        ) : (
          part
        ),
      )}
    </>
  );
}
