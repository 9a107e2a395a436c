/**
 * Markdown's inline syntax inside a paragraph or heading (lib/markdown.ts has the blocks):
 * code spans, emphasis and strong, links and autolinks, escapes and hard breaks. Raw HTML tags
 * and comments are dropped; images are dropped with their alt text.
 *
 * Instructions come from anyone's runbook, so no input may cost more than `REACH` steps per
 * character: code spans are paired once per text, a link's label or an emphasis looks at most
 * `REACH` characters ahead for its end, and nesting stops at `MAX_NEST` (deeper markers stay
 * text). The worst paragraph the tests know, 100,000 characters of unmatched `*a `, takes
 * ~0.3 s under vitest on the 2-core VM; an emphasis or link label longer than `REACH` is text.
 */

export type Inline =
  | string
  | { kind: "code"; text: string }
  | { kind: "strong" | "em"; children: Inline[] }
  | { kind: "link"; href: string; children: Inline[] }
  | { kind: "br" };

const REACH = 500;
const MAX_NEST = 8;
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/;
const WORD = /[\p{L}\p{N}]/u;
const AUTOLINK = /<((?:https?|mailto):[^\s<>]*)>/iy;
const TAG = /<!--[\s\S]*?-->|<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/y;
const DESTINATION =
  /\(\s*(<[^<>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+("[^"]*"|'[^']*'|\([^()]*\)))?\s*\)/y;

interface Span {
  text: string;
  end: number;
}

/** What one paragraph's parse knows: its text, its code spans by start, how deep it is. */
interface Context {
  text: string;
  spans: Map<number, Span>;
  depth: number;
}

/** The inline content of a heading or paragraph. */
export function parseInline(text: string, depth = 0): Inline[] {
  const ctx: Context = { text, spans: codeSpans(text), depth };
  const out: Inline[] = [];
  let plain = "";
  const flush = () => {
    if (plain) out.push(plain);
    plain = "";
  };
  const nest = depth < MAX_NEST;
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    if (c === "\\" && text.charAt(i + 1) === "\n") {
      flush();
      out.push({ kind: "br" });
      i += 2;
      continue;
    }
    if (c === "\\" && PUNCTUATION.test(text.charAt(i + 1))) {
      plain += text.charAt(i + 1);
      i += 2;
      continue;
    }
    const span = ctx.spans.get(i);
    if (span) {
      flush();
      out.push({ kind: "code", text: span.text });
      i = span.end;
      continue;
    }
    if (c === "`") {
      // A run without its closing run is text, the whole run at once.
      const n = runLength(text, i);
      plain += text.slice(i, i + n);
      i += n;
      continue;
    }
    if (nest && c === "!" && text.charAt(i + 1) === "[") {
      const image = linkAt(ctx, i + 1);
      if (image) {
        i = image.end; // dropped with its alt text: nothing is fetched
        continue;
      }
    }
    if (nest && c === "[") {
      const link = linkAt(ctx, i);
      if (link) {
        flush();
        out.push({ kind: "link", href: link.href, children: parseInline(link.label, depth + 1) });
        i = link.end;
        continue;
      }
    }
    if (c === "<") {
      const auto = sticky(AUTOLINK, text, i);
      if (auto) {
        flush();
        const href = auto[1] ?? "";
        out.push({ kind: "link", href, children: [href] });
        i += auto[0].length;
        continue;
      }
      const tag = sticky(TAG, text, i);
      if (tag) {
        i += tag[0].length; // raw HTML is never drawn
        continue;
      }
    }
    if (nest && (c === "*" || c === "_")) {
      const emphasis = emphasisAt(ctx, i);
      if (emphasis) {
        flush();
        out.push(emphasis.node);
        i = emphasis.end;
        continue;
      }
    }
    if (c === "\n") {
      let kept = plain.length;
      while (kept > 0 && plain.charAt(kept - 1) === " ") kept--;
      const hard = plain.length - kept >= 2;
      plain = plain.slice(0, kept);
      if (hard) {
        flush();
        out.push({ kind: "br" });
      } else {
        plain += "\n";
      }
      i++;
      continue;
    }
    plain += c;
    i++;
  }
  flush();
  return out;
}

/** `re` (sticky) matched at `at`, looking no further than `REACH` characters. */
function sticky(re: RegExp, text: string, at: number): RegExpExecArray | null {
  re.lastIndex = 0;
  return re.exec(text.slice(at, at + REACH));
}

/** How many backticks in a row start at `at`. */
function runLength(text: string, at: number): number {
  let end = at;
  while (text.charAt(end) === "`") end++;
  return end - at;
}

/**
 * Every code span in `text`, by the index of its opening run: a run of backticks pairs with the
 * next run of the same length, and the runs between are its content. One pass over the runs.
 */
function codeSpans(text: string): Map<number, Span> {
  const runs: { at: number; n: number }[] = [];
  for (let i = text.indexOf("`"); i >= 0; i = text.indexOf("`", i)) {
    const n = runLength(text, i);
    // An escaped backtick is text; the rest of its run may still open a span.
    if (i > 0 && text.charAt(i - 1) === "\\") runs.push({ at: i + 1, n: n - 1 });
    else runs.push({ at: i, n });
    i += n;
  }
  const next: number[] = [];
  const laterOfLength = new Map<number, number>();
  for (let r = runs.length - 1; r >= 0; r--) {
    const n = runs[r]?.n ?? 0;
    next[r] = laterOfLength.get(n) ?? -1;
    laterOfLength.set(n, r);
  }
  const spans = new Map<number, Span>();
  for (let r = 0; r < runs.length;) {
    const open = runs[r];
    const closeAt = next[r] ?? -1;
    const close = runs[closeAt];
    if (!open || open.n === 0 || !close) {
      r++;
      continue;
    }
    let body = text.slice(open.at + open.n, close.at).replace(/\n/g, " ");
    if (body.length > 2 && body.startsWith(" ") && body.endsWith(" ") && body.trim()) {
      body = body.slice(1, -1);
    }
    spans.set(open.at, { text: body, end: close.at + close.n });
    r = closeAt + 1;
  }
  return spans;
}

/** `[label](destination "title")` opening at `at`, or null. */
function linkAt(ctx: Context, at: number): { label: string; href: string; end: number } | null {
  const { text, spans } = ctx;
  const limit = Math.min(text.length, at + REACH);
  let depth = 0;
  let i = at;
  for (; i < limit; i++) {
    const c = text.charAt(i);
    const span = spans.get(i);
    if (span) i = span.end - 1;
    else if (c === "\\") i++;
    else if (c === "[") depth++;
    else if (c === "]" && --depth === 0) break;
  }
  if (i >= limit || text.charAt(i + 1) !== "(") return null;
  const target = sticky(DESTINATION, text, i + 1);
  if (!target) return null;
  const [whole, dest = ""] = target;
  const href = dest.startsWith("<") ? dest.slice(1, -1) : dest;
  return { label: text.slice(at + 1, i), href, end: i + 1 + whole.length };
}

/**
 * Emphasis or strong opening at `at`: a run of one or two `*` or `_` followed by text and a
 * matching run. `_` does not open or close inside a word (snake_case stays as typed).
 */
function emphasisAt(ctx: Context, at: number): { node: Inline; end: number } | null {
  const { text } = ctx;
  const c = text.charAt(at);
  const run = text.charAt(at + 1) === c ? c + c : c;
  const after = text.charAt(at + run.length);
  if (after === "" || /\s/.test(after)) return null;
  if (c === "_" && at > 0 && WORD.test(text.charAt(at - 1))) return null;
  const limit = Math.min(text.length, at + REACH);
  let from = at + run.length;
  for (;;) {
    let close = findOutsideCode(ctx, run, from, limit);
    if (close < 0) return null;
    // In a longer closing run (`**a *b***`), strong takes its last two: the inner `*` closes first.
    if (run.length === 2) while (close + 2 < limit && text.charAt(close + 2) === c) close++;
    const before = text.charAt(close - 1);
    const next = text.charAt(close + run.length);
    // A single closer must not be half of a longer run (`*a **b** c*` skips the strong's).
    const double = run.length === 1 && next === c;
    const closes =
      !/\s/.test(before) &&
      close > at + run.length &&
      !double &&
      !(c === "_" && next !== "" && WORD.test(next));
    if (closes) {
      const inner = text.slice(at + run.length, close);
      const kind = run.length === 2 ? "strong" : "em";
      return {
        node: { kind, children: parseInline(inner, ctx.depth + 1) },
        end: close + run.length,
      };
    }
    from = close + (double ? 2 : 1);
  }
}

/** The next `needle` in `[from, limit)` that is not inside a code span or escaped. */
function findOutsideCode(ctx: Context, needle: string, from: number, limit: number): number {
  for (let i = from; i < limit; i++) {
    const span = ctx.spans.get(i);
    if (span) i = span.end - 1;
    else if (ctx.text.charAt(i) === "\\") i++;
    else if (ctx.text.startsWith(needle, i)) return i;
  }
  return -1;
}
