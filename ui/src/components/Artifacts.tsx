import { useId, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { unwrap } from "../api/client";
import { useApi, useBackend } from "../api/context";
import { formatBytes } from "../lib/format";
import { Failure } from "./Failure";
import { Icon } from "./Icon";

/** A file a run produced, as its result lists it (`data.artifacts[]`). */
export interface Artifact {
  role: string;
  type: string;
  label: string;
  sha256: string;
  size: number;
}

/** Text artifacts up to this size are shown in place; anything else is saved. */
const VIEW_LIMIT = 1024 * 1024;

/** The artifacts a result lists, or none (results of tools without declared outputs). */
export function artifactsOf(data: unknown): Artifact[] {
  const listed = (data as { artifacts?: unknown } | null | undefined)?.artifacts;
  if (!Array.isArray(listed)) return [];
  return listed.filter(
    (a): a is Artifact =>
      typeof a === "object" &&
      a !== null &&
      typeof (a as Artifact).role === "string" &&
      typeof (a as Artifact).sha256 === "string" &&
      typeof (a as Artifact).size === "number",
  );
}

/** The file name an artifact is saved as: its role, with the extension its type implies. */
export function fileName(artifact: Artifact): string {
  const extensions: Record<string, string> = {
    "text/plain": ".txt",
    "text/csv": ".csv",
    "text/html": ".html",
    "text/markdown": ".md",
    "application/json": ".json",
    "image/png": ".png",
    "application/pdf": ".pdf",
  };
  return artifact.role + (extensions[artifact.type] ?? "");
}

function viewable(artifact: Artifact): boolean {
  const text =
    artifact.type.startsWith("text/") ||
    artifact.type === "application/json" ||
    artifact.type.endsWith("+json");
  return text && artifact.size <= VIEW_LIMIT;
}

/**
 * What a run produced: each declared output and the log, with its type, size and hash; text
 * opens in place (as text: an HTML report is shown as its source, never rendered on the
 * workbench's origin), and everything can be saved.
 */
export function Artifacts({ artifacts }: { artifacts: Artifact[] }) {
  const heading = useId();
  if (artifacts.length === 0) return null;
  return (
    <section aria-labelledby={heading} className="artifacts">
      <h3 id={heading}>Artifacts ({artifacts.length})</h3>
      <ul className="plain-list">
        {artifacts.map((artifact) => (
          <ArtifactRow key={`${artifact.role}:${artifact.sha256}`} artifact={artifact} />
        ))}
      </ul>
    </section>
  );
}

function ArtifactRow({ artifact }: { artifact: Artifact }) {
  const { platform } = useBackend();
  const [open, setOpen] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const viewer = useId();
  const name = fileName(artifact);
  const path = `/api/artifacts/${artifact.sha256}?name=${encodeURIComponent(name)}`;
  const save = async () => {
    setSaveError(null);
    try {
      await platform.download(path, name);
    } catch (e) {
      setSaveError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <li className="artifact">
      <div className="row">
        <span className="badge">{artifact.role}</span>
        <span className="grow ellipsis" title={artifact.label}>
          {artifact.label}
        </span>
        {viewable(artifact) && (
          <button
            type="button"
            className="ghost"
            aria-expanded={open}
            aria-controls={viewer}
            aria-label={`${open ? "Hide" : "View"} ${artifact.role}`}
            onClick={() => {
              setOpen(!open);
            }}
          >
            {open ? "Hide" : "View"}
          </button>
        )}
        <button
          type="button"
          className="ghost"
          aria-label={`Save ${artifact.role} as ${name}`}
          onClick={() => void save()}
        >
          <Icon name="download" /> Save
        </button>
      </div>
      <div className="muted artifact-facts">
        {artifact.type} · {formatBytes(artifact.size)} ·{" "}
        <code title={`SHA-256 ${artifact.sha256}`}>{artifact.sha256.slice(0, 12)}</code>
      </div>
      {saveError && (
        <div className="field-error" role="alert">
          {saveError}
        </div>
      )}
      {open && <ArtifactText id={viewer} artifact={artifact} />}
    </li>
  );
}

function ArtifactText({ id, artifact }: { id: string; artifact: Artifact }) {
  const api = useApi();
  const text = useQuery({
    queryKey: ["artifact", artifact.sha256],
    // Content-addressed: what was read once never changes.
    staleTime: Infinity,
    queryFn: async () =>
      unwrap(
        await api.GET("/api/artifacts/{sha256}", {
          params: { path: { sha256: artifact.sha256 } },
          parseAs: "text",
        }),
      ),
  });
  if (text.error)
    return (
      <div id={id}>
        <Failure error={text.error} />
      </div>
    );
  return (
    <pre
      id={id}
      className="output artifact-text"
      aria-label={`${artifact.role}: ${artifact.label}`}
      aria-busy={text.isPending}
      tabIndex={0}
    >
      {text.data ?? "Loading…"}
      {artifact.type === "text/html" && text.data !== undefined && (
        <span className="muted">{"\n\n"}(HTML shown as its source; save it to open it.)</span>
      )}
    </pre>
  );
}
