import { useProblems } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { Inline } from "../../components/Inline";

/** The watcher's diagnostics, live: the last valid registry keeps serving while they stand. */
export default function ProblemsView() {
  const problems = useProblems();
  const list = problems.data ?? [];
  return (
    <div className="page">
      <header className="page-head">
        <h1>Problems</h1>
        <span className="sub">
          What the loader finds in the project's files as you save them, and upstream MCP servers
          that cannot be reached.
        </span>
      </header>
      {problems.error && <Failure error={problems.error} />}
      {problems.data && list.length === 0 && (
        <EmptyState title="No problems">
          <p>
            Every tool, package and runbook file loads. Break one (a misspelt key, a bad reference)
            and its file, line and a hint appear here at once, while the last valid registry keeps
            serving calls.
          </p>
        </EmptyState>
      )}
      {list.some((d) => d.severity === "error") && (
        <div className="callout warn" role="status">
          The project does not load as saved: the tools you see are from its last valid state.
        </div>
      )}
      {list.length > 0 && (
        <table className="grid" aria-label="Problems">
          <thead>
            <tr>
              <th scope="col">Where</th>
              <th scope="col">Problem</th>
              <th scope="col">Code</th>
            </tr>
          </thead>
          <tbody>
            {list.map((d, i) => (
              <tr key={`${d.code}-${d.file ?? ""}-${d.line ?? 0}-${i}`}>
                <td className="mono">
                  {d.file ?? "project"}
                  {d.line ? `:${d.line}` : ""}
                  {d.column ? `:${d.column}` : ""}
                </td>
                <td>
                  <span className={`badge ${d.severity === "error" ? "bad" : "warn"}`}>
                    {d.severity}
                  </span>{" "}
                  <Inline text={d.message} />
                  {d.hint && (
                    <div className="muted">
                      Hint: <Inline text={d.hint} />
                    </div>
                  )}
                  {d.pointer && <div className="muted mono">{d.pointer}</div>}
                </td>
                <td className="mono">{d.code}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
