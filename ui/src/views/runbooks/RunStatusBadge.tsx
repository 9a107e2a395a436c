/** A runbook run's status as a badge: paused runs wait for people. */
export function RunStatusBadge({ status }: { status: string }) {
  const tone =
    status === "completed"
      ? "ok"
      : status === "paused"
        ? "warn"
        : status === "failed" || status === "error" || status === "denied"
          ? "bad"
          : "";
  const words = status === "paused" ? "waiting for people" : status;
  return <span className={`badge ${tone}`}>{words}</span>;
}
