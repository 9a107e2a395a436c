import { useState } from "react";
import { useTool } from "../../api/queries";
import { Failure } from "../../components/Failure";
import { JsonTree } from "../../components/JsonTree";
import { VerdictBadge } from "../../components/Verdict";
import { RunPanel } from "./RunPanel";
import { Inline } from "../../components/Inline";

type Tab = "run" | "schemas" | "definition";

/** One tool: what it is, where it is defined, what the policy lets it do; run it. */
export default function ToolPage({ id }: { id: string }) {
  const tool = useTool(id);
  const [tab, setTab] = useState<Tab>("run");
  if (tool.error)
    return (
      <div className="page">
        <Failure error={tool.error} />
      </div>
    );
  const detail = tool.data;
  if (!detail) return <div className="page" aria-busy="true" />;
  const tabs: { id: Tab; label: string }[] = [
    { id: "run", label: "Run" },
    { id: "schemas", label: "Schemas" },
    { id: "definition", label: "Definition" },
  ];
  return (
    <article className="page" aria-labelledby="tool-title">
      <header className="page-head">
        <h1 id="tool-title" className="mono">
          {detail.id}
        </h1>
        <span className="badge">v{detail.version}</span>
        <VerdictBadge action={detail.verdict.action} />
      </header>
      <p>
        <Inline text={detail.description} />
      </p>
      <dl className="facts">
        <dt>Package</dt>
        <dd>{detail.package}</dd>
        <dt>Kind</dt>
        <dd>{detail.kind}</dd>
        <dt>Defined in</dt>
        <dd className="mono">{detail.source}</dd>
        <dt>Side effects</dt>
        <dd className="row">
          {detail.side_effects.length === 0 ? (
            <span className="badge ok">none</span>
          ) : (
            detail.side_effects.map((effect) => (
              <span
                key={effect}
                className={`badge ${effect === "none" || effect === "read" ? "" : "warn"}`}
              >
                {effect}
              </span>
            ))
          )}
          <span className="muted">risk {detail.risk}</span>
          {detail.deterministic && (
            <span className="badge">deterministic: identical calls replay</span>
          )}
        </dd>
        <dt>Policy</dt>
        <dd>
          <VerdictBadge action={detail.verdict.action} />{" "}
          <span className="mono">{detail.verdict.rule}</span>{" "}
          <span className="muted">
            — <Inline text={detail.verdict.reason} />
          </span>
        </dd>
        {detail.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd className="row">
              {detail.tags.map((tag) => (
                <span key={tag} className="badge">
                  {tag}
                </span>
              ))}
            </dd>
          </>
        )}
      </dl>
      <div className="tabs" role="tablist" aria-label="Tool sections">
        {tabs.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`tab-${t.id}`}
            aria-selected={tab === t.id}
            aria-controls={`panel-${t.id}`}
            tabIndex={tab === t.id ? 0 : -1}
            onClick={() => {
              setTab(t.id);
            }}
            onKeyDown={(event) => {
              const i = tabs.findIndex((x) => x.id === tab);
              const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
              if (step === 0) return;
              const next = tabs[(i + step + tabs.length) % tabs.length];
              if (next) {
                setTab(next.id);
                document.getElementById(`tab-${next.id}`)?.focus();
              }
            }}
          >
            {t.label}
          </button>
        ))}
      </div>
      <section role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "run" && <RunPanel tool={detail} />}
        {tab === "schemas" && (
          <div className="two-col">
            <div>
              <h3>Input</h3>
              <JsonTree value={detail.input_schema} label="Input schema" />
            </div>
            <div>
              <h3>Output</h3>
              <JsonTree value={detail.output_schema} label="Output schema" />
            </div>
          </div>
        )}
        {tab === "definition" && <JsonTree value={detail.definition} label="Definition" />}
      </section>
    </article>
  );
}
