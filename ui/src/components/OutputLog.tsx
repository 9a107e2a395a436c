import { useEffect, useMemo, useRef, useState } from "react";
import { parseAnsiFrom, stripAnsi, type Run, type Style } from "../lib/ansi";

/** What a tool wrote, in order: `stdout`, `stderr` (or another stream a tool names). */
export interface Chunk {
  stream: string;
  text: string;
}

/** The most lines drawn at once: a longer log shows its end (Copy takes all of it). */
const SHOWN_LINES = 5_000;

interface Piece extends Run {
  stream: string;
}

/**
 * A tool's output as a terminal shows it: colours, stderr told from stdout (marked, and named
 * for screen readers), wrapping on or off, Copy (the plain text, every line), and following
 * the end while the call runs unless the reader scrolls up.
 */
export function OutputLog({ chunks, live }: { chunks: Chunk[]; live: boolean }) {
  const [wrap, setWrap] = useState(true);
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLPreElement>(null);
  const { pieces, lines, hidden, errors } = useMemo(() => layout(chunks), [chunks]);

  useEffect(() => {
    const element = box.current;
    if (element && follow) element.scrollTop = element.scrollHeight;
  }, [pieces, follow]);

  const copy = () =>
    void navigator.clipboard.writeText(chunks.map((c) => stripAnsi(c.text)).join(""));
  return (
    <section className="output-log" aria-label="Output">
      <div className="row output-bar">
        <h3>Output</h3>
        <span className="muted">
          {lines} line{lines === 1 ? "" : "s"}
          {errors > 0 && (
            <>
              {" "}
              · <span className="stderr-note">{errors} on stderr</span>
            </>
          )}
        </span>
        <span className="grow" />
        <button
          type="button"
          className="ghost"
          aria-pressed={wrap}
          onClick={() => {
            setWrap(!wrap);
          }}
        >
          Wrap lines
        </button>
        {live && (
          <button
            type="button"
            className="ghost"
            aria-pressed={follow}
            onClick={() => {
              setFollow(!follow);
            }}
          >
            Follow
          </button>
        )}
        <button type="button" className="ghost" onClick={copy}>
          Copy
        </button>
      </div>
      {hidden > 0 && (
        <p className="muted">The first {hidden} lines are not shown here; Copy takes them all.</p>
      )}
      <pre
        ref={box}
        className={`output terminal${wrap ? " wrap" : ""}`}
        tabIndex={0}
        aria-label="What the tool wrote"
        onScroll={(event) => {
          const element = event.currentTarget;
          const atEnd = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
          if (live && atEnd !== follow) setFollow(atEnd);
        }}
      >
        {pieces.map((piece, i) => (
          <span key={i} className={classes(piece)}>
            {piece.stream === "stderr" && piece.text.trim() && (
              <span className="visually-hidden">stderr: </span>
            )}
            {piece.text}
          </span>
        ))}
      </pre>
    </section>
  );
}

/** The pieces to draw (the last [`SHOWN_LINES`] lines), and what was counted. */
function layout(chunks: Chunk[]) {
  const styles = new Map<string, Style>();
  const all: Piece[] = [];
  let lines = 0;
  let errors = 0;
  for (const chunk of chunks) {
    const [runs, after] = parseAnsiFrom(chunk.text, styles.get(chunk.stream));
    styles.set(chunk.stream, after);
    // One piece per line at most, so the drawn part can start at any line; the lines are
    // counted as they are cut (the runs' text is the chunk's without its escapes).
    for (const run of runs) {
      for (const line of run.text.split(/(?<=\n)/)) {
        all.push({ ...run, text: line, stream: chunk.stream });
        if (line.endsWith("\n")) {
          lines += 1;
          if (chunk.stream === "stderr") errors += 1;
        }
      }
    }
  }
  // A last line without its newline is a line too.
  const tail = all.at(-1);
  if (tail && !tail.text.endsWith("\n")) lines += 1;
  let hidden = 0;
  let pieces = all;
  if (lines > SHOWN_LINES) {
    let keep = SHOWN_LINES;
    let index = all.length;
    while (index > 0 && keep > 0) {
      index -= 1;
      if (all[index]?.text.endsWith("\n")) keep -= 1;
    }
    pieces = all.slice(index);
    hidden = lines - SHOWN_LINES;
  }
  return { pieces, lines, hidden, errors };
}

function classes(piece: Piece): string {
  const names = [piece.stream === "stderr" ? "stderr" : "stdout"];
  if (piece.fg) names.push(`fg-${piece.fg}`);
  if (piece.bold) names.push("bold");
  if (piece.dim) names.push("dim");
  if (piece.underline) names.push("underline");
  return names.join(" ");
}
