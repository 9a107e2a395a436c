import { lazy, Suspense } from "react";
import { useRunbook, useRunbookRuns } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { formatShortTime } from "../../lib/format";
import { href } from "../../lib/route";
import { RunStatusBadge } from "./RunStatusBadge";
import { StartForm } from "./StartForm";

const StepGraph = lazy(() => import("./StepGraph"));

/** One runbook: its step graph, a form to start it, and its latest runs. */
export default function RunbookPage({ name }: { name: string }) {
  const runbook = useRunbook(name);
  const runs = useRunbookRuns();
  const mine = (runs.data ?? []).filter((run) => run.runbook === name).slice(0, 8);
  return (
    <div className="page runbook-page">
      <header className="page-head">
        <a href={href("runbooks")}>Runbooks</a>
        <span className="muted">/</span>
        <h1 className="mono">{name}</h1>
        {runbook.data && <span className="badge">{runbook.data.api_version}</span>}
        {runbook.data && <span className="sub">{runbook.data.description}</span>}
      </header>
      {runbook.error && <Failure error={runbook.error} />}
      {runbook.data && (
        <div className="runbook-body">
          <section aria-label="Steps" className="graph-pane">
            <Suspense fallback={<div className="step-graph" aria-busy />}>
              <StepGraph graph={runbook.data.graph} />
            </Suspense>
          </section>
          <aside className="side-pane">
            <StartForm runbook={runbook.data} />
            <section className="card" aria-labelledby="its-runs">
              <h2 id="its-runs">Its runs</h2>
              {mine.length === 0 && <p className="muted">None yet.</p>}
              <ul className="plain-list">
                {mine.map((run) => (
                  <li key={run.id} className="row">
                    <a href={href("runbooks", "run", run.id)} className="mono">
                      {run.id.slice(0, 8)}
                    </a>
                    <RunStatusBadge status={run.status} />
                    <span className="muted">
                      {run.started_by} · {formatShortTime(run.updated_us)}
                    </span>
                  </li>
                ))}
              </ul>
            </section>
            <p className="muted">
              {runbook.data.file} · {runbook.data.steps} steps ·{" "}
              {runbook.data.scenarios.length > 0
                ? `scenarios: ${runbook.data.scenarios.join(", ")} (jig runbook test)`
                : "no scenarios yet"}
            </p>
          </aside>
        </div>
      )}
    </div>
  );
}
