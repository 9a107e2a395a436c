import { usePolicy } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { RuleTable } from "./RuleTable";
import { WhatIf } from "./WhatIf";

/** The effective policy: the layers it is made of, every rule with its layer, every setting. */
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
  const { report } = data;
  const above = report.layers.filter((l) => l.layer !== "project");
  const project = report.layers.find((l) => l.layer === "project");
  return (
    <div className="page">
      <header className="page-head">
        <h1>Policy</h1>
        <span className="sub">
          The project&apos;s <code>{project?.source ?? "jig.yaml"}</code>
          {above.length > 0 ? " beneath the layers above it" : ""}; every run records its hash{" "}
          <code title={report.policy_hash}>{report.policy_hash.slice(0, 12)}</code>.
        </span>
      </header>
      <section className="card" aria-labelledby="layers-title">
        <h2 id="layers-title">Layers, strongest first</h2>
        <ul className="layers" aria-label="Layers">
          {report.layers.map((l) => (
            <li key={l.layer}>
              <span className={`layer layer-${l.layer}`}>{l.layer}</span> <code>{l.source}</code>
            </li>
          ))}
        </ul>
        {above.length === 0 && (
          <p className="muted">
            Only the project&apos;s policy applies. A machine&apos;s administrator can set one above
            it in <code>/etc/jig/policy.yaml</code> (or the file <code>$JIG_MANAGED_POLICY</code>{" "}
            names), and you your own in <code>~/.config/jig/policy.yaml</code>: the project can
            narrow what they say and never widen it.
          </p>
        )}
      </section>
      <section className="card" aria-labelledby="rules-title">
        <h2 id="rules-title">Governance rules: the strictest match wins, across every layer</h2>
        <RuleTable rules={report.rules} />
      </section>
      {report.settings.length > 0 && (
        <section className="card" aria-labelledby="narrowed-title">
          <h2 id="narrowed-title">Settings a layer above narrowed</h2>
          <table className="grid" aria-label="Narrowed settings">
            <thead>
              <tr>
                <th scope="col">Setting</th>
                <th scope="col">Layer</th>
                <th scope="col">The project said</th>
                <th scope="col">In effect</th>
              </tr>
            </thead>
            <tbody>
              {report.settings.map((s) => (
                <tr key={s.setting}>
                  <td className="mono">{s.setting}</td>
                  <td>
                    <span className={`layer layer-${s.layer}`}>{s.layer}</span>
                  </td>
                  <td className="mono">{JSON.stringify(s.was)}</td>
                  <td className="mono">{JSON.stringify(s.now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {/* The draft starts from the project's rules; the layers above hold over any draft. */}
      <WhatIf current={data.config} />
      <section className="card" aria-labelledby="settings-title">
        <h2 id="settings-title">Every setting in effect</h2>
        <JsonTree value={data.config} label="Policy settings" />
      </section>
    </div>
  );
}
