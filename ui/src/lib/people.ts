/**
 * The person behind a principal as Jig records it: `alice`, or `alice (via claude-code)` for an
 * agent acting for her (the engine's `canonical_principal`: the agent's mark dropped, trimmed,
 * lowercase). An agent's request is its person's: self-approval rules treat it so.
 */
export function personOf(principal: string): string {
  const trimmed = principal.trim();
  const mark = trimmed.endsWith(")") ? trimmed.lastIndexOf(" (via ") : -1;
  return (mark >= 0 ? trimmed.slice(0, mark) : trimmed).trim().toLowerCase();
}

/** Whether `principal` is `me`, or an agent acting for me. */
export function isMe(principal: string | null | undefined, me: string | undefined): boolean {
  return principal != null && me !== undefined && personOf(principal) === personOf(me);
}
