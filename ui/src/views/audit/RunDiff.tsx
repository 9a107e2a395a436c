import { useMemo } from "react";
import type { RunDetail } from "../../api/client";
import { useRun } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { StateBadge } from "../../components/Verdict";
import { jsonDiff, type Difference } from "../../lib/jsonDiff";
import { count, formatDuration, formatTime, shortId } from "../../lib/format";
import { href } from "../../lib/route";
import { runParts } from "./runParts";

/** Two runs side by side: what differs in their arguments, decisions and outputs. */
export default function RunDiff({ left, right }: { left: string; right: string }) {
  const a = useRun(left);
  const b = useRun(right);
  const error = a.error ?? b.error;
  return (
    <div className="page">
      <header className="page-head">
        <a href={href("audit")}>← Audit</a>
        <h1>
          Compare <span className="mono">{shortId(left)}</span> and{" "}
          <span className="mono">{shortId(right)}</span>
        </h1>
      </header>
      {error && <Failure error={error} />}
      {a.data && b.data && <Comparison {...inOrder(a.data, b.data)} />}
    </div>
  );
}

/**
 * The older run on the left, the newer on the right, whichever was marked first: what changed
 * reads as from the left to the right (removed in red, added in green).
 */
export function inOrder(a: RunDetail, b: RunDetail): { a: RunDetail; b: RunDetail } {
  return a.run.created_us <= b.run.created_us ? { a, b } : { a: b, b: a };
}

export function Comparison({ a, b }: { a: RunDetail; b: RunDetail }) {
  const sections = useMemo(() => {
    const pa = runParts(a);
    const pb = runParts(b);
    const record = (d: RunDetail) => ({
      tool: d.run.tool,
      version: d.run.version,
      state: d.run.state,
      principal: d.run.principal,
      session: d.run.session_id,
      rule: d.run.rule,
      policy_hash: d.run.policy_hash,
      params_hash: d.run.params_hash,
    });
    return [
      { title: "Run", diff: jsonDiff(record(a), record(b)) },
      { title: "Arguments", diff: jsonDiff(pa.args, pb.args) },
      { title: "Decision", diff: jsonDiff(pa.decision, pb.decision) },
      { title: "Outputs", diff: jsonDiff(pa.outcome, pb.outcome) },
    ];
  }, [a, b]);
  return (
    <>
      <div className="two-col">
        {[a, b].map((d) => (
          <div key={d.run.request_id} className="card">
            <div className="row">
              <a href={href("audit", d.run.request_id)} className="mono">
                {d.run.tool}
              </a>
              <StateBadge state={d.run.state} />
            </div>
            <div className="muted">
              {formatTime(d.run.created_us)} · {d.run.principal ?? "–"} ·{" "}
              {formatDuration(d.run.duration_ms)}
            </div>
          </div>
        ))}
      </div>
      {sections.map((section) => (
        <section key={section.title} className="card" aria-label={section.title}>
          <div className="row">
            <h2>{section.title}</h2>
            {section.diff.length === 0 ? (
              <span className="badge ok">identical</span>
            ) : (
              <span className="badge warn">{count(section.diff.length, "difference")}</span>
            )}
          </div>
          {section.diff.length > 0 && <DiffTable diff={section.diff} />}
        </section>
      ))}
    </>
  );
}

function DiffTable({ diff }: { diff: Difference[] }) {
  const show = (value: unknown) => (value === undefined ? "" : JSON.stringify(value));
  return (
    <table className="grid diff">
      <thead>
        <tr>
          <th scope="col">Where</th>
          <th scope="col">Left</th>
          <th scope="col">Right</th>
        </tr>
      </thead>
      <tbody>
        {diff.map((d) => (
          <tr key={d.pointer} data-change={d.change}>
            <td className="mono">{d.pointer}</td>
            <td className="mono diff-left">
              {d.change === "added" ? <em className="muted">absent</em> : show(d.left)}
            </td>
            <td className="mono diff-right">
              {d.change === "removed" ? <em className="muted">absent</em> : show(d.right)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
