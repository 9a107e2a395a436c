import { useEffect, useState, useTransition } from "react";

/** Where the UI is: the hash path, split (`#/tools/acme.slugify` → ["tools", "acme.slugify"]). */
export type Route = string[];

/** The hash route, parsed; hash routing works the same in the browser and in the desktop app. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#\/?/, "").split("?")[0] ?? "";
  return path.split("/").filter(Boolean).map(decodeURIComponent);
}

/**
 * The current route, following `hashchange`, and whether a change is still being drawn. A
 * change is a transition: a view whose chunk is still loading keeps the one before it on
 * screen (React would keep a spinner for at least 300 ms once shown) while `changing` says so.
 */
export function useRoute(): { route: Route; changing: boolean } {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  const [changing, startTransition] = useTransition();
  useEffect(() => {
    const update = () => {
      startTransition(() => {
        setRoute(parseRoute(window.location.hash));
      });
    };
    window.addEventListener("hashchange", update);
    return () => {
      window.removeEventListener("hashchange", update);
    };
  }, []);
  return { route, changing };
}

/** The href of a route (`href("tools", id)`). */
export function href(...parts: string[]): string {
  return "#/" + parts.map(encodeURIComponent).join("/");
}

/** Go to a route. */
export function navigate(...parts: string[]): void {
  window.location.hash = href(...parts);
}
