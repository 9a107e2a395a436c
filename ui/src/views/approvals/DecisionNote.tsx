import type { ReactNode } from "react";

/**
 * The note a decision carries: optional to approve, the reason to deny — what the asker reads.
 * `missing` once a denial was tried without one: the field says why it is needed.
 */
export function DecisionNote({
  id,
  label,
  note,
  setNote,
  missing,
  why,
}: {
  id: string;
  label: ReactNode;
  note: string;
  setNote: (note: string) => void;
  missing: boolean;
  why: string;
}) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        rows={2}
        value={note}
        maxLength={2000}
        aria-invalid={missing}
        aria-describedby={missing ? `${id}-why` : undefined}
        onChange={(e) => {
          setNote(e.target.value);
        }}
      />
      {missing && (
        <span id={`${id}-why`} className="field-error" role="alert">
          {why}
        </span>
      )}
    </>
  );
}
