import type { Schemas } from "../../api/client";
import { VerdictBadge } from "../../components/Verdict";

type RuleView = Schemas["RuleView"];
type Overridden = Schemas["Overridden"];

interface Written {
  risk?: string;
  effects?: string[];
  tools?: string[];
  contract?: unknown;
  writes?: string[];
  min_approvers?: number;
}

/** What a rule matches, in words. */
function matches(rule: RuleView): string {
  if (rule.kind === "default") return "every call no other rule of its layer matches (default)";
  if (rule.kind === "built_in")
    return rule.action === "allow"
      ? "tools without side effects, where no rule speaks"
      : "tools with side effects, where no rule speaks";
  const m = rule.matches as Written;
  const parts = [
    m.risk && `risk ${m.risk}`,
    m.effects?.length && `effects ${m.effects.join("/")}`,
    m.tools?.length && `tools ${m.tools.join(", ")}`,
    m.writes?.length && `writes ${m.writes.join(", ")}`,
    m.contract !== undefined && `contract ${JSON.stringify(m.contract)}`,
  ].filter(Boolean);
  const what = parts.length > 0 ? parts.join("; ") : "every call";
  return rule.kind === "limit" ? `the project may not allow: ${what}` : what;
}

/** "file_write, fs_move and 12 more", whole list in the title. */
function tools(names: string[]): string {
  if (names.length <= 3) return names.join(", ");
  return `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`;
}

/** One line per other rule: "rules[1] (allow) for file_write, fs_move". */
function Overrides({ label, list }: { label: string; list: Overridden[] }) {
  const byRule = new Map<string, { first: Overridden; tools: string[] }>();
  for (const o of list) {
    const group = byRule.get(o.rule);
    if (group) group.tools.push(o.tool);
    else byRule.set(o.rule, { first: o, tools: [o.tool] });
  }
  return [...byRule.values()].map(({ first, tools: names }) => (
    <div key={first.rule} className="muted" title={names.join("\n")}>
      {label} <code>{first.rule}</code>
      {first.layer !== "project" && ` (${first.layer} layer)`}, {first.action}, for {tools(names)}
    </div>
  ));
}

/** Every rule of the effective policy, the layers above the project first. */
export function RuleTable({ rules }: { rules: RuleView[] }) {
  return (
    <table className="grid" aria-label="Rules">
      <thead>
        <tr>
          <th scope="col">Rule</th>
          <th scope="col">Layer</th>
          <th scope="col">Matches</th>
          <th scope="col">Action</th>
          <th scope="col">Decides now</th>
        </tr>
      </thead>
      <tbody>
        {rules.map((rule) => (
          <tr key={rule.rule} data-layer={rule.layer}>
            <td className="mono" title={`in ${rule.source}`}>
              {rule.rule}
            </td>
            <td>
              <span className={`layer layer-${rule.layer}`}>{rule.layer}</span>
            </td>
            <td>{matches(rule)}</td>
            <td>
              {rule.kind === "limit" ? (
                <span className="muted">limit</span>
              ) : (
                rule.action && <VerdictBadge action={rule.action} />
              )}
            </td>
            <td>
              {rule.decides.length === 0 ? (
                <span className="muted">no tool</span>
              ) : (
                <span title={rule.decides.join("\n")}>{tools(rule.decides)}</span>
              )}
              <Overrides label="overrode" list={rule.overrode} />
              <Overrides label="overridden by" list={rule.overridden_by} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
