import { EmptyState } from "../../components/EmptyState";

/** The runbooks' place: until the step graph lands here, it says how to run them today. */
export default function RunbooksView() {
  return (
    <div className="page">
      <header className="page-head">
        <h1>Runbooks</h1>
      </header>
      <EmptyState title="Runbooks run in the terminal for now">
        <p>
          Every step of a runbook is an audited call under the project's policy. Walk one step by
          step with <code>jig runbook run NAME --step</code>, pick a paused run up with{" "}
          <code>jig runbook resume RUN</code>, and replay its recorded scenarios with{" "}
          <code>jig runbook test</code>. A run's tool calls already appear in the Audit view, in a
          session named by the run; stepping through them here comes next.
        </p>
      </EmptyState>
    </div>
  );
}
