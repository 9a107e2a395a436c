import { usePolicy } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { VerdictBadge } from "../../components/Verdict";
import { WhatIf } from "./WhatIf";

interface Rule {
  action?: string;
  risk?: string;
  effects?: string[];
  tools?: string[];
  contract?: unknown;
  min_approvers?: number;
  default?: boolean;
}

/** What a rule matches, in words. */
function matches(rule: Rule): string {
  const parts = [
    rule.risk && `risk ${rule.risk}`,
    rule.effects?.length && `effects ${rule.effects.join("/")}`,
    rule.tools?.length && `tools ${rule.tools.join(", ")}`,
    rule.contract !== undefined && `contract ${JSON.stringify(rule.contract)}`,
    rule.default && "every call (default)",
  ].filter(Boolean);
  return parts.length > 0 ? parts.join("; ") : "every call";
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
  const config = data.config as { rules?: Rule[] };
  const rules = config.rules ?? [];
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
                <th scope="col">Approvers</th>
              </tr>
            </thead>
            <tbody>
              {rules.map((rule, i) => (
                <tr key={i}>
                  <td className="mono" title="in jig.yaml, under policy.rules">
                    rules[{i}]
                  </td>
                  <td>{matches(rule)}</td>
                  <td>{rule.action && <VerdictBadge action={rule.action} />}</td>
                  <td>{rule.min_approvers ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <WhatIf current={data.config} />
      <section className="card" aria-labelledby="settings-title">
        <h2 id="settings-title">Every setting</h2>
        <JsonTree value={data.config} label="Policy settings" />
      </section>
    </div>
  );
}
