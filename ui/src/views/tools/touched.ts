import { createContext } from "react";

/**
 * Whether the field `id` shows its errors: once the person has changed or left it (or
 * something inside it), so a required field nobody has reached yet — the new item of an array,
 * a field below the one being typed — is not red. The form's preview lists every problem
 * meanwhile. Outside a run form every field shows its errors.
 */
export const ShowErrors = createContext<(id: string) => boolean>(() => true);

/** `id` or a field inside it (rjsf names a child `PARENT_KEY`) is among `touched`. */
export function touchedWithin(touched: ReadonlySet<string>, id: string): boolean {
  if (touched.has(id)) return true;
  const prefix = `${id}_`;
  for (const t of touched) if (t.startsWith(prefix)) return true;
  return false;
}
