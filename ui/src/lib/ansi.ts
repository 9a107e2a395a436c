/**
 * A tool's output as a terminal would show it: SGR colour and weight codes become styled runs
 * of text; every other escape sequence (cursor moves, clearing the screen, titles) is dropped,
 * so output can neither rewrite what is above it nor hide text. Nothing here makes HTML: the
 * runs are rendered as text by React.
 */

/** A run of text in one style. */
export interface Run {
  text: string;
  /** One of the 16 terminal colours (`red`, `bright-blue`, …), or none. */
  fg?: string;
  bold?: boolean;
  dim?: boolean;
  underline?: boolean;
}

const NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];

// ESC [ params final (CSI), ESC ] … BEL/ST (OSC), and any other two-byte ESC sequence: control
// characters are what this matches.
const ESCAPES =
  // eslint-disable-next-line no-control-regex
  /\u001b\[([0-9;?]*)([@-~])|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u001b[@-_]?/g;

/** A style without its text. */
export type Style = Omit<Run, "text">;

/** `text` split into styled runs (the style carried from `start`, for text streamed in parts). */
export function parseAnsi(text: string, start: Style = {}): Run[] {
  return parseAnsiFrom(text, start)[0];
}

/** [`parseAnsi`], and the style in force at the end (where the next part of the stream starts). */
export function parseAnsiFrom(text: string, start: Style = {}): [Run[], Style] {
  const runs: Run[] = [];
  let style: Style = { ...start };
  let last = 0;
  const push = (chunk: string) => {
    // A carriage return alone (a progress bar redrawing its line) starts the line again: shown
    // as a new line, so every state of it stays readable.
    const cleaned = chunk.replace(/\r(?!\n)/g, "\n");
    if (cleaned) runs.push({ text: cleaned, ...style });
  };
  for (const match of text.matchAll(ESCAPES)) {
    push(text.slice(last, match.index));
    last = match.index + match[0].length;
    if (match[2] === "m") style = apply(style, match[1] ?? "");
  }
  push(text.slice(last));
  return [runs, style];
}

/** The style after the SGR parameters `params` (`1;31`, `0`, ``). */
function apply(style: Style, params: string): Style {
  const next = { ...style };
  const codes = params === "" ? [0] : params.split(";").map((p) => Number(p) || 0);
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i] ?? 0;
    if (code === 0) {
      delete next.fg;
      delete next.bold;
      delete next.dim;
      delete next.underline;
    } else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 4) next.underline = true;
    else if (code === 22) {
      delete next.bold;
      delete next.dim;
    } else if (code === 24) delete next.underline;
    else if (code >= 30 && code <= 37) next.fg = NAMES[code - 30];
    else if (code >= 90 && code <= 97) next.fg = `bright-${NAMES[code - 90] ?? "white"}`;
    else if (code === 39) delete next.fg;
    else if (code === 38 || code === 48) {
      // 256-colour and RGB forms: their arguments are skipped, the default colour kept.
      i += codes[i + 1] === 5 ? 2 : codes[i + 1] === 2 ? 4 : 0;
    }
  }
  return next;
}

/** The text without any escape sequence (for copying). */
export function stripAnsi(text: string): string {
  return text.replace(ESCAPES, "").replace(/\r(?!\n)/g, "\n");
}
