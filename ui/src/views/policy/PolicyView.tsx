import { usePolicy } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";

interface Rule {
  match?: unknown;
  action?: string;
  reason?: string;
}

/** The effective policy: its hash, its governance rules in order, and every setting. */
export default function PolicyView() {
  const policy = usePolicy();
  if (policy.error)
    return (
      <div className="page">
        <Failure error={policy.error} />
      </div>
    );
  const data = policy.data;
  if (!data) return <div className="page" aria-busy="true" />;
  const config = data.config as { governance?: { rules?: Rule[] } } & Record<string, unknown>;
  const rules = config.governance?.rules ?? [];
  return (
    <div className="page">
      <header className="page-head">
        <h1>Policy</h1>
        <span className="sub">
          As compiled from <code>jig.yaml</code>; every run records its hash{" "}
          <code title={data.hash}>{data.hash.slice(0, 12)}</code>.
        </span>
      </header>
      <section className="card" aria-labelledby="rules-title">
        <h2 id="rules-title">Governance rules, first match wins</h2>
        {rules.length === 0 ? (
          <p className="muted">No rules: side effects are denied by default, reads are allowed.</p>
        ) : (
          <table className="grid" aria-label="Rules">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Matches</th>
                <th scope="col">Action</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>
              {rules.map((rule, i) => (
                <tr key={i}>
                  <td className="mono">rules[{i}]</td>
                  <td className="mono">{JSON.stringify(rule.match ?? {})}</td>
                  <td>{rule.action}</td>
                  <td>{rule.reason ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="card" aria-labelledby="settings-title">
        <h2 id="settings-title">Every setting</h2>
        <JsonTree value={data.config} label="Policy settings" />
      </section>
    </div>
  );
}
