/**
 * The Markdown of a runbook's step instructions, parsed into a small tree that `Markdown` draws
 * as React elements. It reads the CommonMark that people write in instructions: headings,
 * paragraphs, bullet and numbered lists (nested), block quotes, fenced and indented code,
 * rules, and inline code, emphasis, strong, links, autolinks and hard breaks.
 *
 * Raw HTML is never drawn: a tag or comment is dropped and the text around it stays text.
 * Images are dropped whole (nothing is fetched). The tree holds strings only, so nothing here
 * can become markup; which link targets survive is the renderer's decision.
 *
 * It replaced react-markdown (remark, micromark, hast: ~35 KiB gzipped of the run page's
 * chunk) for the subset above; what it does not read (tables, footnotes, reference links)
 * stays visible as the text the author typed.
 */

export type Block =
  | { kind: "heading"; level: number; text: string }
  | { kind: "paragraph"; text: string }
  | { kind: "code"; lang: string; text: string }
  | { kind: "quote"; children: Block[] }
  | { kind: "list"; ordered: boolean; start: number; tight: boolean; items: Block[][] }
  | { kind: "rule" };

export { parseInline, type Inline } from "./markdownInline";

// Every pattern here is linear on any line (no nested or overlapping repeats): a runbook's
// author chooses the text, and a reviewer's page must not hang on it.
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?/;
const ITEM = /^( {0,3})([-+*]|\d{1,9}[.)])([ \t]+|$)/;
const SETEXT = /^ {0,3}(=+|-+)[ \t]*$/;

const blank = (line: string) => line.trim() === "";
const indentOf = (line: string) => line.length - line.trimStart().length;

/** Lists and quotes nest this deep; a deeper marker is text (`- - - - …` on one line). */
const MAX_NEST = 16;

/** A fence opening: its indent, its marker and the info string's first word. */
function fenceAt(line: string): { indent: number; marker: string; lang: string } | null {
  const m = FENCE.exec(line);
  if (!m) return null;
  const [, indent = "", marker = "", info = ""] = m;
  if (marker.startsWith("`") && info.includes("`")) return null;
  return { indent: indent.length, marker, lang: info.trim().split(/\s/)[0] ?? "" };
}

/** An ATX heading: its level and text, without an optional closing run of `#`. */
function headingAt(line: string): { level: number; text: string } | null {
  const m = HEADING.exec(line);
  if (!m) return null;
  const [whole, hashes = ""] = m;
  let text = line.slice(whole.length).trim();
  let end = text.length;
  while (end > 0 && text.charAt(end - 1) === "#") end--;
  if (end === 0) text = "";
  else if (end < text.length && /[ \t]/.test(text.charAt(end - 1)))
    text = text.slice(0, end).trim();
  return { level: hashes.length, text };
}

/** A line that ends a paragraph by starting a block of its own. */
function interrupts(line: string): boolean {
  if (FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line)) return true;
  const item = ITEM.exec(line);
  // A numbered item interrupts a paragraph only from 1, and an empty item never does (CommonMark).
  if (!item) return false;
  const [, , marker = "", gap = ""] = item;
  return gap !== "" && (/^[-+*]$/.test(marker) || /^1[.)]$/.test(marker));
}

export function parseBlocks(source: string): Block[] {
  return blocks(source.replace(/\r\n?/g, "\n").replace(/\t/g, "    ").split("\n"), 0);
}

function blocks(lines: string[], depth: number): Block[] {
  const at = (k: number) => lines[k] ?? "";
  const out: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = at(i);
    if (blank(line)) {
      i++;
      continue;
    }
    const fence = fenceAt(line);
    if (fence) {
      const { indent, marker, lang } = fence;
      const close = new RegExp(
        `^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}[ \\t]*$`,
      );
      const body: string[] = [];
      for (i++; i < lines.length && !close.test(at(i)); i++) {
        body.push(at(i).slice(Math.min(indent, indentOf(at(i)))));
      }
      i++;
      out.push({ kind: "code", lang, text: body.join("\n") });
      continue;
    }
    const heading = headingAt(line);
    if (heading) {
      out.push({ kind: "heading", ...heading });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push({ kind: "rule" });
      i++;
      continue;
    }
    if (indentOf(line) >= 4) {
      const body: string[] = [];
      while (i < lines.length && (blank(at(i)) || indentOf(at(i)) >= 4)) {
        body.push(at(i++).slice(4));
      }
      while (body.length && blank(body.at(-1) ?? "")) body.pop();
      out.push({ kind: "code", lang: "", text: body.join("\n") });
      continue;
    }
    const nest = depth < MAX_NEST;
    if (nest && QUOTE.test(line)) {
      const inner: string[] = [];
      while (i < lines.length && !blank(at(i))) {
        const quoted = QUOTE.exec(at(i));
        // A line without `>` continues the quote's paragraph (a lazy line) unless it starts a block.
        if (!quoted && interrupts(at(i))) break;
        inner.push(quoted ? at(i).slice(quoted[0].length) : at(i));
        i++;
      }
      out.push({ kind: "quote", children: blocks(inner, depth + 1) });
      continue;
    }
    const item = nest ? ITEM.exec(line) : null;
    if (item) {
      i = list(lines, i, item, depth, out);
      continue;
    }
    const para: string[] = [line.trim()];
    for (i++; i < lines.length && !blank(at(i)) && !interrupts(at(i)); i++) {
      const setext = SETEXT.exec(at(i));
      if (setext) break;
      para.push(at(i).trim());
    }
    const setext = i < lines.length ? SETEXT.exec(at(i)) : null;
    if (setext && !blank(at(i))) {
      out.push({
        kind: "heading",
        level: setext[1]?.startsWith("=") ? 1 : 2,
        text: para.join("\n"),
      });
      i++;
    } else if (i < lines.length && RULE.test(at(i)) && /^ {0,3}-/.test(at(i))) {
      // `---` under a paragraph is an underline (setext heading), not a rule.
      out.push({ kind: "heading", level: 2, text: para.join("\n") });
      i++;
    } else {
      out.push({ kind: "paragraph", text: para.join("\n") });
    }
  }
  return out;
}

/** One list from its first item (`first`, at `lines[start]`) onto `out`; returns the index after it. */
function list(
  lines: string[],
  start: number,
  first: RegExpExecArray,
  depth: number,
  out: Block[],
): number {
  const at = (k: number) => lines[k] ?? "";
  const [, , firstMarker = ""] = first;
  const ordered = /\d/.test(firstMarker);
  const delimiter = firstMarker.slice(-1);
  const sameList = ([, , marker = ""]: RegExpExecArray) =>
    ordered ? /\d/.test(marker) && marker.endsWith(delimiter) : marker === delimiter;
  const items: Block[][] = [];
  let tight = true;
  let i = start;
  while (i < lines.length) {
    const m = ITEM.exec(at(i));
    if (!m || !sameList(m)) break;
    // Text after the marker sets the item's indent; more than four spaces there is code.
    const [, indent = "", marker = "", spaces = ""] = m;
    const gap = spaces.length > 4 || spaces === "" ? 1 : spaces.length;
    const width = indent.length + marker.length + gap;
    const body = [at(i).slice(Math.min(at(i).length, width))];
    let sawBlank = false;
    for (i++; i < lines.length; i++) {
      const line = at(i);
      if (blank(line)) {
        body.push("");
        sawBlank = true;
        continue;
      }
      if (indentOf(line) >= width) {
        if (sawBlank) tight = false;
        body.push(line.slice(width));
        sawBlank = false;
        continue;
      }
      // A lazy line: an unindented line right after the item's text continues its paragraph.
      if (!sawBlank && !interrupts(line) && !ITEM.test(line)) {
        body.push(line.trim());
        continue;
      }
      break;
    }
    while (body.length && blank(body.at(-1) ?? "")) body.pop();
    items.push(blocks(body, depth + 1));
    if (sawBlank && i < lines.length) {
      const next = ITEM.exec(at(i));
      if (next && sameList(next)) tight = false;
    }
  }
  out.push({ kind: "list", ordered, start: ordered ? parseInt(firstMarker, 10) : 1, tight, items });
  return i;
}
