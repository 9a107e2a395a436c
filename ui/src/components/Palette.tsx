import { Command } from "cmdk";
import { useTools } from "../api/queries";
import { places } from "../lib/places";
import { chords } from "../lib/shortcuts";
import { navigate } from "../lib/route";
import type { ThemeChoice } from "../lib/theme";
import { useOpenProject, useProjectInfo } from "../views/project/useProjects";
import { baseName } from "../views/project/ProjectChooser";
import { Icon } from "./Icon";

/** Ctrl/⌘+K: go anywhere, open any tool, change the theme; every entry shows its key. */
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
    >
      <Command.Input placeholder="Go to a view, open a tool, run a command…" aria-label="Command" />
      <Command.List>
        <Command.Empty>Nothing matches.</Command.Empty>
        <Command.Group heading="Views">
          {places.map((p) => (
            <Command.Item
              key={p.id}
              value={`view ${p.label}`}
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
              value="open project folder"
              onSelect={() => {
                run(() => {
                  openProject.mutate(null);
                });
              }}
            >
              <Icon name="folder" /> Open a project folder…
            </Command.Item>
            <Command.Item
              value="open example project"
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
                  value={`open project ${path}`}
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
              value={`theme ${choice}`}
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
            value="verify audit chain"
            onSelect={() => {
              run(() => {
                navigate("audit");
              });
            }}
          >
            <Icon name="check" /> Verify the audit chain (in Audit)
          </Command.Item>
          <Command.Item
            value="focus search"
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
              value={`tool ${tool.id} ${tool.description}`}
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
      </Command.List>
    </Command.Dialog>
  );
}
