import { useEffect, useRef } from "react";
import { navigate } from "./route";

/** The `g` chords: `g t` → Tools and so on (as GitHub and Gmail do). */
export const chords: Record<string, string> = {
  t: "tools",
  a: "approvals",
  j: "jobs",
  u: "audit",
  r: "runbooks",
  p: "problems",
  o: "policy",
  m: "metrics",
};

/** Whether a key event is typing into a field (shortcuts stay out of its way). */
function typing(event: KeyboardEvent): boolean {
  const target = event.target as HTMLElement | null;
  if (!target) return false;
  // A field in a closed dialog is not where anyone types: focus can stay on it for a moment
  // after the dialog closed.
  if (target.closest("dialog:not([open])")) return false;
  return (
    target.isContentEditable ||
    target.tagName === "INPUT" ||
    target.tagName === "TEXTAREA" ||
    target.tagName === "SELECT"
  );
}

/** Global keys: Ctrl/⌘+K the palette, `g` chords, `/` the search field of the view. */
export function useShortcuts({ openPalette }: { openPalette: () => void }): void {
  // The listener is added once: one added again on every render of its caller (whose
  // `openPalette` is a new function each time) lost a `g` typed just before a render, so
  // `g a` right after closing the palette sometimes went nowhere.
  const open = useRef(openPalette);
  useEffect(() => {
    open.current = openPalette;
  }, [openPalette]);
  useEffect(() => {
    const openPalette = () => {
      open.current();
    };
    let chord = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k") {
        event.preventDefault();
        openPalette();
        return;
      }
      if (typing(event) || event.ctrlKey || event.metaKey || event.altKey) return;
      if (chord) {
        chord = false;
        const place = chords[event.key];
        if (place) {
          event.preventDefault();
          navigate(place);
        }
        return;
      }
      if (event.key === "g") {
        chord = true;
        clearTimeout(timer);
        timer = setTimeout(() => (chord = false), 1200);
      } else if (event.key === "/") {
        const search = document.querySelector<HTMLInputElement>("[data-search]");
        if (search) {
          event.preventDefault();
          search.focus();
          search.select();
        }
      } else if (event.key === "?") {
        // The key that opens the palette is not typed into it.
        event.preventDefault();
        openPalette();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => {
      window.removeEventListener("keydown", onKey);
      clearTimeout(timer);
    };
  }, []);
}
