/** The policy's action as a badge: allow, require-approval, deny. */
export function VerdictBadge({ action }: { action: string }) {
  const tone = action === "allow" ? "ok" : action === "deny" ? "bad" : "warn";
  const text = action === "require-approval" ? "needs approval" : action;
  return <span className={`badge ${tone}`}>{text}</span>;
}

/** A run's state as a badge. */
export function StateBadge({ state }: { state: string }) {
  const tone =
    state === "succeeded"
      ? "ok"
      : state === "failed" || state === "denied"
        ? "bad"
        : state === "pending_approval" || state === "cancelled"
          ? "warn"
          : "";
  return <span className={`badge ${tone}`}>{state.replace("_", " ")}</span>;
}
