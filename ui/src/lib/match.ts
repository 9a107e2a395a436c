/**
 * The palette's matching: each word typed must be the start of a word in the entry, appear in it
 * whole, or be the initials of an identifier's parts (`gs` → `git_status`). A fuzzy subsequence
 * (the palette's default) made "maint" list git_merge and curl: letters scattered across a
 * description say nothing about what a person looks for.
 */

/** What separates the words of names and descriptions (`fs_write`, `acme.slugify`, `a-b`). */
const SEPARATORS = /[\s_.\-/:,()]+/;

/** Words of `text`, lower-cased. */
function wordsOf(text: string): string[] {
  return text.toLowerCase().split(SEPARATORS).filter(Boolean);
}

/** How well one typed word matches a text's words (0: not at all). */
function tokenScore(token: string, words: string[], joined: string): number {
  const parts = wordsOf(token);
  if (parts.length === 0) return 1;
  if (parts.length > 1) {
    // `write-up`: the same words, one after the other.
    return ` ${joined} `.includes(` ${parts.join(" ")}`) ? 0.8 : 0;
  }
  const [part = ""] = parts;
  if (words.includes(part)) return 1;
  if (words.some((w) => w.startsWith(part))) return 0.9;
  if (part.length >= 3 && words.some((w) => w.includes(part))) return 0.6;
  if (part.length >= 2 && initialsMatch(part, words)) return 0.5;
  return 0;
}

/** Whether `part` is the initials of consecutive words (`gs`: `git status`). */
function initialsMatch(part: string, words: string[]): boolean {
  for (let start = 0; start + part.length <= words.length; start++) {
    if (Array.from(part).every((ch, i) => words[start + i]?.[0] === ch)) return true;
  }
  return false;
}

/**
 * The score the palette sorts by (0 hides the entry): every typed word must match; matches in the
 * entry's own value (its name) count more than those only in its keywords (a description).
 * A value may carry a namespace (`tool:fs_write`) that is never matched.
 */
export function paletteScore(value: string, search: string, keywords: string[] = []): number {
  const tokens = search.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (tokens.length === 0) return 1;
  const name = wordsOf(value.replace(/^[a-z-]+:/, ""));
  const rest = wordsOf(keywords.join(" "));
  const all = [...name, ...rest];
  let score = 1;
  for (const token of tokens) {
    const inName = tokenScore(token, name, name.join(" "));
    const anywhere = inName > 0 ? inName : 0.7 * tokenScore(token, all, all.join(" "));
    if (anywhere === 0) return 0;
    score = Math.min(score, anywhere);
  }
  return score;
}
