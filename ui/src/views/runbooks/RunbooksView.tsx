import { EmptyState } from "../../components/EmptyState";

/** The runbooks' place: stepping through them comes with the runbooks work. */
export default function RunbooksView() {
  return (
    <div className="page">
      <header className="page-head">
        <h1>Runbooks</h1>
      </header>
      <EmptyState title="Runbooks are coming to the workbench">
        <p>
          Jig already reads runbooks (<code>runbook/v0</code>, <code>v1</code> and gert's{" "}
          <code>kernel/v0</code>) and checks them with <code>jig validate</code>. Stepping through
          one here, each step governed and audited like any call, is the next piece of work.
        </p>
      </EmptyState>
    </div>
  );
}
