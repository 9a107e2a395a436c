import { useEffect, useState } from "react";

/**
 * How wide the navigation is: `auto` (narrow, icons only, below 1180 px; full above), or what
 * the person chose with its toggle (kept in this browser).
 */
export type NavWidth = "auto" | "narrow" | "wide";

const KEY = "jig.nav";
/** Below this, the navigation is an icon rail unless someone widened it. */
export const NARROW_BELOW = "(max-width: 1179px)";

function stored(): NavWidth {
  const value = localStorage.getItem(KEY);
  return value === "narrow" || value === "wide" ? value : "auto";
}

/** Whether the window is narrow now, following resizes. */
function useNarrowWindow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(NARROW_BELOW).matches);
  useEffect(() => {
    const query = window.matchMedia(NARROW_BELOW);
    const update = () => {
      setNarrow(query.matches);
    };
    query.addEventListener("change", update);
    return () => {
      query.removeEventListener("change", update);
    };
  }, []);
  return narrow;
}

/** Whether the navigation is narrow, and the toggle that flips it (and remembers the choice). */
export function useNavWidth(): { narrow: boolean; toggle: () => void } {
  const [choice, setChoice] = useState<NavWidth>(stored);
  const narrowWindow = useNarrowWindow();
  const narrow = choice === "narrow" || (choice === "auto" && narrowWindow);
  const toggle = () => {
    // Back to `auto` when the choice matches what the window would pick anyway.
    const next: NavWidth = narrow
      ? narrowWindow
        ? "wide"
        : "auto"
      : narrowWindow
        ? "auto"
        : "narrow";
    if (next === "auto") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, next);
    setChoice(next);
  };
  return { narrow, toggle };
}
