/** Quote one word for a POSIX shell (single quotes; embedded ones closed and escaped). */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `jig call` that makes the same call from a terminal. */
export function jigCallCommand(tool: string, args: unknown): string {
  return `jig call ${shellQuote(tool)} --args ${shellQuote(JSON.stringify(args))}`;
}
