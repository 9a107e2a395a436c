import { lazy, Suspense, useEffect, useLayoutEffect } from "react";
import { markOnce } from "../../lib/marks";
import { useBackend } from "../../api/context";
import { useTools } from "../../api/queries";
import { EmptyState } from "../../components/EmptyState";
import { Failure } from "../../components/Failure";
import { ToolList } from "./ToolList";

const ToolPage = lazy(() => import("./ToolPage"));

/** The registry on the left, the chosen tool (its page and run form) on the right. */
export default function ToolsView({ selected }: { selected: string | undefined }) {
  const tools = useTools();
  const { platform } = useBackend();
  const loaded = tools.data !== undefined;
  // Where a start's time goes (the desktop app logs these marks): the first render with the
  // list, then the same render in the page (child effects, the list's measuring, ran first).
  if (loaded) markOnce("view-render");
  useLayoutEffect(() => {
    if (loaded) markOnce("committed");
  }, [loaded]);
  useEffect(() => {
    if (loaded) platform.ready();
  }, [loaded, platform]);
  return (
    <div className="split">
      <section aria-label="Tool list" className="list-pane">
        {tools.error ? (
          <Failure error={tools.error} />
        ) : (
          <ToolList tools={tools.data} selected={selected} />
        )}
      </section>
      <section aria-label="Tool" className="detail-pane">
        {selected ? (
          <Suspense fallback={null}>
            <ToolPage key={selected} id={selected} />
          </Suspense>
        ) : (
          <>
            <h1 className="visually-hidden">Tools</h1>
            <EmptyState title="Pick a tool">
              <p>
                Every tool of the project is on the left, grouped by package. Type to search (
                <kbd>/</kbd> gets you there), narrow by side effects, risk or kind, and move with{" "}
                <kbd>↑</kbd> <kbd>↓</kbd> and <kbd>Enter</kbd>.
              </p>
              <p>
                A tool's page shows what the policy lets it do before you run it. New tools are{" "}
                <code>*.tool.yaml</code> files in the project; they appear here as you save them.
              </p>
            </EmptyState>
          </>
        )}
      </section>
    </div>
  );
}
