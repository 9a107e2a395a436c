import { useState } from "react";
import { useMutation } from "@tanstack/react-query";
import { unwrap } from "../../api/client";
import { useApi } from "../../api/context";
import { Failure } from "../../components/Failure";
import { VerdictBadge } from "../../components/Verdict";
import { formatShortTime } from "../../lib/format";
import { href } from "../../lib/route";
import { Inline } from "../../components/Inline";

const ACTIONS = ["allow", "require-approval", "deny"] as const;

/** Edit a draft of the policy and see what it would have decided for the calls already made. */
export function WhatIf({ current }: { current: unknown }) {
  const api = useApi();
  const [draft, setDraft] = useState(() => JSON.stringify(current, null, 2));
  const [last, setLast] = useState(200);
  const [tool, setTool] = useState("");
  const [onlyChanges, setOnlyChanges] = useState(true);
  const replay = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST("/api/policy/what-if", {
          body: { draft, last, tool: tool || undefined },
        }),
      ),
  });
  const result = replay.data;
  const calls = result?.calls ?? [];
  const shown = onlyChanges ? calls.filter((c) => c.changed) : calls;
  const count = (pick: (c: (typeof calls)[number]) => string, action: string) =>
    calls.filter((c) => pick(c) === action).length;

  return (
    <section className="card what-if" aria-labelledby="what-if-title">
      <h2 id="what-if-title">What if: replay a draft against the history</h2>
      <p className="muted">
        Edit the policy below (YAML or JSON, as under <code>policy:</code> in <code>jig.yaml</code>)
        and replay the latest calls: each is decided again by the draft, beside what was decided
        then. The layers above the project hold over the draft as they hold over the project.
        Nothing runs and nothing is recorded; session budgets are not replayed.
      </p>
      <label htmlFor="draft">Draft policy</label>
      <textarea
        id="draft"
        rows={14}
        spellCheck={false}
        value={draft}
        onChange={(e) => {
          setDraft(e.target.value);
        }}
      />
      <div className="row">
        <label className="row">
          The last
          <input
            type="number"
            min={1}
            max={1000}
            value={last}
            aria-label="How many calls to replay"
            onChange={(e) => {
              setLast(Number(e.target.value) || 1);
            }}
            style={{ width: 90 }}
          />
          calls
        </label>
        <input
          aria-label="Only this tool"
          placeholder="of any tool"
          value={tool}
          onChange={(e) => {
            setTool(e.target.value);
          }}
        />
        <button
          type="button"
          className="primary"
          disabled={replay.isPending}
          onClick={() => {
            replay.mutate();
          }}
        >
          {replay.isPending ? "Replaying…" : "Replay"}
        </button>
        <button
          type="button"
          className="ghost"
          onClick={() => {
            setDraft(JSON.stringify(current, null, 2));
          }}
        >
          Reset to the current policy
        </button>
      </div>
      {replay.error && <Failure error={replay.error} />}
      {result && (
        <>
          <table className="grid what-if-summary" aria-label="Summary">
            <thead>
              <tr>
                <th scope="col">{calls.length} calls</th>
                {ACTIONS.map((a) => (
                  <th key={a} scope="col">
                    <VerdictBadge action={a} />
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">Then</th>
                {ACTIONS.map((a) => (
                  <td key={a}>{count((c) => c.was, a)}</td>
                ))}
              </tr>
              <tr>
                <th scope="row">Under the draft</th>
                {ACTIONS.map((a) => (
                  <td key={a}>{count((c) => c.now.action, a)}</td>
                ))}
              </tr>
            </tbody>
          </table>
          <div className="row" role="status">
            <strong>
              {calls.filter((c) => c.changed).length} calls would be decided differently.
            </strong>
            {result.skipped.length > 0 && (
              <span className="muted" title={result.skipped.join("\n")}>
                {result.skipped.length} skipped
              </span>
            )}
            <span className="grow" />
            <label className="row">
              <input
                type="checkbox"
                checked={onlyChanges}
                onChange={(e) => {
                  setOnlyChanges(e.target.checked);
                }}
              />
              Only the changes
            </label>
          </div>
          <table className="grid" aria-label="Replayed calls">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Tool</th>
                <th scope="col">Who</th>
                <th scope="col">Then</th>
                <th scope="col">Under the draft</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((c) => (
                <tr key={c.request_id} data-changed={c.changed || undefined}>
                  <td className="muted">
                    <a href={href("audit", c.request_id)}>{formatShortTime(c.created_us)}</a>
                  </td>
                  <td className="mono">{c.tool}</td>
                  <td>{c.principal ?? "–"}</td>
                  <td>
                    <VerdictBadge action={c.was} /> <code>{c.was_rule ?? ""}</code>
                  </td>
                  <td>
                    <VerdictBadge action={c.now.action} /> <code>{c.now.rule}</code>
                    {c.now.layer && c.now.layer !== "project" && (
                      <span className={`layer layer-${c.now.layer}`}>{c.now.layer}</span>
                    )}
                    <div className="muted">
                      <Inline text={c.now.reason} />
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
