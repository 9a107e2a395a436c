import { lazy, Suspense } from "react";
import { useRunbookRuns, useRunbooks } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { formatShortTime } from "../../lib/format";
import { href } from "../../lib/route";
import { RunStatusBadge } from "./RunStatusBadge";

const RunbookPage = lazy(() => import("./RunbookPage"));
const RunPage = lazy(() => import("./RunPage"));

/**
 * Runbooks: the project's runbooks and the latest runs (`#/runbooks`); one runbook with its
 * step graph and a form to start it (`#/runbooks/book/NAME`); one run stepped through
 * (`#/runbooks/run/ID`).
 */
export default function RunbooksView({ rest }: { rest: string[] }) {
  const [what, which, step] = rest;
  if (what === "book" && which)
    return (
      <Suspense fallback={null}>
        <RunbookPage key={which} name={which} />
      </Suspense>
    );
  if (what === "run" && which)
    return (
      <Suspense fallback={null}>
        <RunPage key={which} id={which} step={step} />
      </Suspense>
    );
  return <Overview />;
}

function Overview() {
  const runbooks = useRunbooks();
  const runs = useRunbookRuns();
  const list = runbooks.data ?? [];
  return (
    <div className="page">
      <header className="page-head">
        <h1>Runbooks</h1>
        <span className="sub">
          Step through a runbook: every tool step is an audited call under the project's policy.
        </span>
      </header>
      {runbooks.error && <Failure error={runbooks.error} />}
      {runbooks.data && list.length === 0 && (
        <EmptyState title="No runbooks in this project">
          <p>
            A runbook is a <code>*.runbook.yaml</code> file under the project's runbooks folder (
            <code>paths.runbooks</code> in <code>jig.yaml</code>, <code>runbooks/</code> by
            default): <code>apiVersion: kernel/v0</code>, its inputs, and steps that call tools, ask
            people for evidence, branch and end with an outcome. Save one and it appears here.
          </p>
        </EmptyState>
      )}
      {list.length > 0 && (
        <section aria-labelledby="runbooks-heading">
          <h2 id="runbooks-heading">In this project</h2>
          <ul className="runbook-list">
            {list.map((runbook) => (
              <li key={runbook.name} className="card">
                <div className="row">
                  <a href={href("runbooks", "book", runbook.name)} className="mono">
                    <strong>{runbook.name}</strong>
                  </a>
                  <span className="badge">{runbook.api_version}</span>
                  <span className="muted">
                    {runbook.steps} steps · {runbook.scenarios.length} scenarios
                  </span>
                </div>
                <div className="muted">{runbook.description ?? runbook.file}</div>
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-labelledby="runs-heading">
        <h2 id="runs-heading">Latest runs</h2>
        {runs.error && <Failure error={runs.error} />}
        {runs.data && runs.data.length === 0 && (
          <p className="muted">
            No runs yet. Open a runbook above and start it: a run waits for you at each step that
            needs a person, and picks up where it stopped from here or from{" "}
            <code>jig runbook resume</code>.
          </p>
        )}
        {runs.data && runs.data.length > 0 && (
          <table className="runs-table">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Runbook</th>
                <th scope="col">Status</th>
                <th scope="col">Started by</th>
                <th scope="col">Last moved</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.map((run) => (
                <tr key={run.id}>
                  <td>
                    <a href={href("runbooks", "run", run.id)} className="mono">
                      {run.id.slice(0, 8)}
                    </a>
                  </td>
                  <td className="mono">{run.runbook}</td>
                  <td>
                    <RunStatusBadge status={run.status} />
                  </td>
                  <td>{run.started_by ?? "–"}</td>
                  <td>{formatShortTime(run.updated_us)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </div>
  );
}
