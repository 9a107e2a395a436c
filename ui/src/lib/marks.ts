/**
 * Named moments of the page's start (`performance.mark`, each once), so the desktop app can log
 * where a start went: its `ready` report carries them (docs/benchmarks.md, the desktop app).
 */
export function markOnce(name: string): void {
  const full = `jig:${name}`;
  if (performance.getEntriesByName(full, "mark").length === 0) performance.mark(full);
}
