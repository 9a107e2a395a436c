/**
 * A runbook run's status as a badge. A `paused` run waits for people: for a go-ahead, evidence or
 * an approval ("waiting for people"), or because someone paused it (`held`: "paused").
 */
export function RunStatusBadge({ status, held = false }: { status: string; held?: boolean }) {
  const tone =
    status === "completed"
      ? "ok"
      : status === "paused"
        ? "warn"
        : status === "failed" || status === "error" || status === "denied"
          ? "bad"
          : "";
  const words = status === "paused" ? (held ? "paused" : "waiting for people") : status;
  return <span className={`badge ${tone}`}>{words}</span>;
}
