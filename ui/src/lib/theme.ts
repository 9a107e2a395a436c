import { useCallback, useEffect, useState } from "react";

/** `system` follows the OS; `light` and `dark` override it (kept across visits). */
export type ThemeChoice = "system" | "light" | "dark";

const KEY = "jig.theme";

function stored(): ThemeChoice {
  const value = localStorage.getItem(KEY);
  return value === "light" || value === "dark" ? value : "system";
}

/** Apply a choice to the document (CSS reads `data-theme`). */
export function applyTheme(choice: ThemeChoice): void {
  if (choice === "system") document.documentElement.removeAttribute("data-theme");
  else document.documentElement.setAttribute("data-theme", choice);
}

export function useTheme(): [ThemeChoice, (choice: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(stored);
  useEffect(() => {
    applyTheme(choice);
  }, [choice]);
  const choose = useCallback((next: ThemeChoice) => {
    if (next === "system") localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, next);
    setChoice(next);
  }, []);
  return [choice, choose];
}
