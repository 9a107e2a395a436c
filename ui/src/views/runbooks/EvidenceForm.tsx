import { useState, type SyntheticEvent } from "react";
import type { Schemas } from "../../api/client";

type Requirement = Schemas["EvidenceRequirement"];

/** The largest file an attachment may be (the server keeps the same limit). */
const MAX_ATTACHMENT_BYTES = 1024 * 1024;

/** A file's bytes as base64, for the request that carries it. */
async function base64Of(file: File): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

/**
 * A manual step's evidence: text as text, a checklist as the items ticked, an attachment as the
 * file itself (the server keeps it by its SHA-256). Nothing listed: the person acknowledges the
 * step is done.
 */
export function EvidenceForm({
  required,
  disabled,
  onSubmit,
}: {
  required: Requirement[];
  disabled: boolean;
  onSubmit: (values: Record<string, unknown>) => void;
}) {
  const [text, setText] = useState<Record<string, string>>({});
  const [ticked, setTicked] = useState<Record<string, string[]>>({});
  const [files, setFiles] = useState<Record<string, File | undefined>>({});
  const missing = required.filter(
    (r) =>
      (r.kind === "text" && (text[r.name] ?? "").trim() === "") ||
      (r.kind === "attachment" && files[r.name] === undefined),
  );

  const tooLarge = required.filter((r) => (files[r.name]?.size ?? 0) > MAX_ATTACHMENT_BYTES);

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    const values: Record<string, unknown> = {};
    for (const requirement of required) {
      if (requirement.kind === "text") values[requirement.name] = text[requirement.name] ?? "";
      if (requirement.kind === "checklist")
        values[requirement.name] = ticked[requirement.name] ?? [];
      const file = files[requirement.name];
      if (requirement.kind === "attachment" && file)
        values[requirement.name] = {
          name: file.name,
          media_type: file.type || undefined,
          content_base64: await base64Of(file),
        };
    }
    onSubmit(values);
  };

  return (
    <form
      className="need evidence-form"
      aria-label="Evidence"
      onSubmit={(event) => {
        void submit(event);
      }}
    >
      {required.map((requirement) => {
        const id = `evidence-${requirement.name}`;
        if (requirement.kind === "text")
          return (
            <div key={requirement.name} className="field">
              <label htmlFor={id} className="mono">
                {requirement.name}
              </label>
              <textarea
                id={id}
                rows={3}
                value={text[requirement.name] ?? ""}
                onChange={(e) => {
                  setText({ ...text, [requirement.name]: e.target.value });
                }}
              />
            </div>
          );
        if (requirement.kind === "checklist")
          return (
            <fieldset key={requirement.name}>
              <legend className="mono">{requirement.name}</legend>
              {(requirement.items ?? []).map((item) => {
                const on = (ticked[requirement.name] ?? []).includes(item);
                return (
                  <label key={item} className="choice">
                    <input
                      type="checkbox"
                      checked={on}
                      onChange={() => {
                        const now = ticked[requirement.name] ?? [];
                        setTicked({
                          ...ticked,
                          [requirement.name]: on ? now.filter((i) => i !== item) : [...now, item],
                        });
                      }}
                    />
                    {item}
                  </label>
                );
              })}
            </fieldset>
          );
        return (
          <div key={requirement.name} className="field">
            <label htmlFor={id} className="mono">
              {requirement.name} (a file)
            </label>
            <input
              id={id}
              type="file"
              onChange={(e) => {
                setFiles({ ...files, [requirement.name]: e.target.files?.[0] });
              }}
            />
          </div>
        );
      })}
      <div className="row">
        <button
          type="submit"
          className="primary"
          disabled={disabled || missing.length > 0 || tooLarge.length > 0}
        >
          {required.length === 0 ? "Mark as done" : "Submit the evidence"}
        </button>
        {missing.length > 0 && (
          <span className="muted">Still needed: {missing.map((m) => m.name).join(", ")}</span>
        )}
        {tooLarge.length > 0 && (
          <span className="muted" role="alert">
            {tooLarge.map((m) => m.name).join(", ")}: a file may be at most 1 MiB
          </span>
        )}
      </div>
    </form>
  );
}
