import { useEffect, useState } from "react";
import { unwrap, type Preview } from "../../api/client";
import { useApi } from "../../api/context";
import { VerdictBadge } from "../../components/Verdict";
import { Inline } from "../../components/Inline";

/** What the policy would decide for these arguments, asked again as they change (nothing runs). */
export function PreviewBox({
  tool,
  args,
  disabled,
  onValid,
  approved = false,
}: {
  tool: string;
  args: unknown;
  disabled: boolean;
  onValid: (valid: boolean) => void;
  /** A person already approved exactly these arguments and nothing ran them yet. */
  approved?: boolean;
}) {
  const api = useApi();
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  const body = JSON.stringify(args);

  useEffect(() => {
    if (disabled) return;
    let current = true;
    const timer = setTimeout(() => {
      void api
        .POST("/api/tools/{id}/preview", {
          params: { path: { id: tool } },
          body: { args: JSON.parse(body) as Record<string, unknown> },
        })
        .then((answer) => {
          if (!current) return;
          const preview = unwrap(answer);
          setPreview(preview);
          onValid(preview.valid && preview.decision?.action !== "deny");
          setError(null);
        })
        .catch((e: unknown) => {
          if (current) setError(e instanceof Error ? e.message : String(e));
        });
    }, 150);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [api, tool, body, disabled, onValid]);

  if (error)
    return (
      <div className="callout bad preview" role="status">
        Preview failed: {error}
      </div>
    );
  if (!preview)
    return (
      <div className="callout preview" aria-busy="true">
        Asking the policy…
      </div>
    );
  if (!preview.valid)
    return (
      <div className="callout warn preview" role="status" aria-label="Preview">
        <strong>Not valid yet.</strong> The call would fail validation before any decision:
        <ul>
          {preview.problems.map((p) => (
            <li key={p.pointer + p.message}>
              <code>{p.pointer || "/"}</code> <Inline text={p.message} />
            </li>
          ))}
        </ul>
      </div>
    );
  const decision = preview.decision;
  if (!decision) return null;
  const tone = decision.action === "allow" ? "ok" : decision.action === "deny" ? "bad" : "warn";
  return (
    <div className={`callout ${tone} preview`} role="status" aria-label="Preview">
      <div className="row">
        <strong>If you run it now:</strong> <VerdictBadge action={decision.action} />
        <span>
          by rule <code>{decision.rule}</code>
          {decision.layer && decision.layer !== "project" && (
            <>
              {" "}
              of the <span className={`layer layer-${decision.layer}`}>{decision.layer}</span> layer
            </>
          )}
        </span>
      </div>
      <div>
        <Inline text={decision.reason} />
      </div>
      {decision.action === "require-approval" && (
        <div className="muted">
          {approved
            ? "Already approved and not yet run: running it now uses that approval, and nobody is asked again."
            : preview.self_approval
              ? "You may approve it yourself in Approvals."
              : "Someone else must approve it (the policy refuses self-approval); the call runs once they do."}
        </div>
      )}
    </div>
  );
}
