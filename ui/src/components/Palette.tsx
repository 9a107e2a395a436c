import { Command } from "cmdk";
import { useRunbookRuns, useRunbooks, useRuns, useTools } from "../api/queries";
import { formatShortTime } from "../lib/format";
import { paletteScore } from "../lib/match";
import { places } from "../lib/places";
import { chords } from "../lib/shortcuts";
import { navigate } from "../lib/route";
import type { ThemeChoice } from "../lib/theme";
import { useOpenProject, useProjectInfo } from "../views/project/useProjects";
import { baseName } from "../views/project/ProjectChooser";
import { Icon } from "./Icon";

/** How many of the latest runbook runs and calls the palette offers. */
const RECENT = 15;

/**
 * Ctrl/⌘+K (or `?`): go anywhere, open any tool or runbook, a recent run or call, change the
 * theme; every entry shows its key. Typed words match names and descriptions by words, never
 * by scattered letters (lib/match.ts).
 */
export function Palette({
  open,
  onOpenChange,
  theme,
  setTheme,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  theme: ThemeChoice;
  setTheme: (theme: ThemeChoice) => void;
}) {
  const tools = useTools();
  const runbooks = useRunbooks();
  const runbookRuns = useRunbookRuns();
  const calls = useRuns({}, RECENT);
  const recentCalls = (calls.data?.pages[0]?.runs ?? []).slice(0, RECENT);
  const projects = useProjectInfo();
  const openProject = useOpenProject();
  const run = (action: () => void) => {
    action();
    onOpenChange(false);
  };
  const keyOf = (place: string) => Object.entries(chords).find(([, p]) => p === place)?.[0];
  return (
    <Command.Dialog
      open={open}
      onOpenChange={onOpenChange}
      label="Command palette"
      className="palette"
      contentClassName="palette-content"
      overlayClassName="palette-overlay"
      filter={paletteScore}
    >
      <Command.Input placeholder="Go to a view, open a tool, run a command…" aria-label="Command" />
      <Command.List>
        <Command.Empty>Nothing matches.</Command.Empty>
        <Command.Group heading="Views">
          {places.map((p) => (
            <Command.Item
              key={p.id}
              value={`view:${p.label}`}
              onSelect={() => {
                run(() => {
                  navigate(p.id);
                });
              }}
            >
              <Icon name={p.icon} /> {p.label}
              <span className="grow" />
              <kbd>g {keyOf(p.id)}</kbd>
            </Command.Item>
          ))}
        </Command.Group>
        {projects.data && (
          <Command.Group heading="Projects">
            <Command.Item
              value="project:open project folder"
              onSelect={() => {
                run(() => {
                  openProject.mutate(null);
                });
              }}
            >
              <Icon name="folder" /> Open a project folder…
            </Command.Item>
            <Command.Item
              value="project:open example project"
              onSelect={() => {
                run(() => {
                  openProject.mutate({ example: true });
                });
              }}
            >
              <Icon name="tools" /> Open the example project
            </Command.Item>
            {projects.data.recent
              .filter((path) => path !== projects.data.path)
              .map((path) => (
                <Command.Item
                  key={path}
                  value={`project:open ${path}`}
                  onSelect={() => {
                    run(() => {
                      openProject.mutate(path);
                    });
                  }}
                >
                  <Icon name="folder" /> Open {baseName(path)}
                  <span className="grow" />
                  <span className="muted mono">{path}</span>
                </Command.Item>
              ))}
          </Command.Group>
        )}
        <Command.Group heading="Commands">
          {(["system", "light", "dark"] as const).map((choice) => (
            <Command.Item
              key={choice}
              value={`command:theme ${choice}`}
              onSelect={() => {
                run(() => {
                  setTheme(choice);
                });
              }}
            >
              <Icon name={choice === "light" ? "sun" : "moon"} /> Theme: {choice}
              {theme === choice && <span className="badge">current</span>}
            </Command.Item>
          ))}
          <Command.Item
            value="command:verify audit chain"
            onSelect={() => {
              run(() => {
                navigate("audit");
              });
            }}
          >
            <Icon name="check" /> Verify the audit chain (in Audit)
          </Command.Item>
          <Command.Item
            value="command:search in this view"
            onSelect={() => {
              run(() => document.querySelector<HTMLInputElement>("[data-search]")?.focus());
            }}
          >
            <Icon name="search" /> Search in this view
            <span className="grow" />
            <kbd>/</kbd>
          </Command.Item>
        </Command.Group>
        <Command.Group heading="Tools">
          {(tools.data ?? []).map((tool) => (
            <Command.Item
              key={tool.id}
              value={`tool:${tool.id}`}
              keywords={[tool.description]}
              onSelect={() => {
                run(() => {
                  navigate("tools", tool.id);
                });
              }}
            >
              <Icon name="tools" /> <span className="mono">{tool.id}</span>
              <span className="muted palette-desc">{tool.description}</span>
            </Command.Item>
          ))}
        </Command.Group>
        <Command.Group heading="Runbooks">
          {(runbooks.data ?? []).map((book) => (
            <Command.Item
              key={book.name}
              value={`runbook:${book.name}`}
              keywords={[book.description ?? ""]}
              onSelect={() => {
                run(() => {
                  navigate("runbooks", "book", book.name);
                });
              }}
            >
              <Icon name="runbooks" /> <span className="mono">{book.name}</span>
              <span className="muted palette-desc">{book.description}</span>
            </Command.Item>
          ))}
        </Command.Group>
        <Command.Group heading="Recent runbook runs">
          {(runbookRuns.data ?? []).slice(0, RECENT).map((r) => (
            <Command.Item
              key={r.id}
              value={`runbook-run:${r.id}`}
              keywords={[r.runbook, r.status, r.started_by ?? ""]}
              onSelect={() => {
                run(() => {
                  navigate("runbooks", "run", r.id);
                });
              }}
            >
              <Icon name="runbooks" /> <span className="mono">{r.runbook}</span>{" "}
              <span className="mono muted">{r.id.slice(0, 8)}</span>
              <span className="muted palette-desc">
                {r.status} · {r.started_by ?? "–"} · {formatShortTime(r.created_us)}
              </span>
            </Command.Item>
          ))}
        </Command.Group>
        <Command.Group heading="Recent calls">
          {recentCalls.map((call) => (
            <Command.Item
              key={call.request_id}
              value={`call:${call.request_id}`}
              keywords={[call.tool, call.state, call.principal ?? ""]}
              onSelect={() => {
                run(() => {
                  navigate("audit", call.request_id);
                });
              }}
            >
              <Icon name="audit" /> <span className="mono">{call.tool}</span>{" "}
              <span className="mono muted">{call.request_id.slice(0, 8)}</span>
              <span className="muted palette-desc">
                {call.state.replace("_", " ")} · {call.principal ?? "–"} ·{" "}
                {formatShortTime(call.created_us)}
              </span>
            </Command.Item>
          ))}
        </Command.Group>
      </Command.List>
    </Command.Dialog>
  );
}
