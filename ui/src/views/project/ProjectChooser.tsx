import { Icon } from "../../components/Icon";
import type { ProjectInfo } from "../../platform";
import { ServerChooser } from "./ServerChooser";
import { failureText, useOpenProject, type ProjectChoice } from "./useProjects";

/**
 * Open a folder or a recent project, or sign in to a team server; what went wrong last is
 * shown with the loader's own file:line diagnostics. Used on the welcome page and in the
 * project dialog.
 */
export function ProjectChooser({ info, onOpened }: { info: ProjectInfo; onOpened?: () => void }) {
  const open = useOpenProject();
  const failure = open.error ? failureText(open.error) : info.failure;
  const go = (choice: ProjectChoice) => {
    open.mutate(choice, {
      onSuccess: (opened) => {
        if (opened) onOpened?.();
      },
    });
  };
  return (
    <div className="chooser">
      <button
        type="button"
        className="primary"
        disabled={open.isPending}
        onClick={() => {
          go(null);
        }}
      >
        <Icon name="folder" /> Open a folder…
      </button>
      <button
        type="button"
        disabled={open.isPending}
        onClick={() => {
          go({ example: true });
        }}
      >
        <Icon name="tools" /> Open the example project
      </button>
      {failure && (
        <div className="chooser-failure" role="alert">
          <strong>That project did not open.</strong>
          <pre>{failure}</pre>
        </div>
      )}
      <h3 id="recent-heading">Recent projects</h3>
      {info.recent.length === 0 ? (
        <p className="muted">Projects you open appear here.</p>
      ) : (
        <ul className="recent" aria-labelledby="recent-heading">
          {info.recent.map((path) => (
            <li key={path}>
              <button
                type="button"
                className="ghost"
                disabled={open.isPending}
                aria-current={path === info.path ? "true" : undefined}
                aria-label={`Open ${path}`}
                onClick={() => {
                  go(path);
                }}
              >
                <Icon name="folder" />
                <span className="recent-name">{baseName(path)}</span>
                <span className="muted mono recent-path">{path}</span>
                {path === info.path && <span className="badge">open</span>}
              </button>
            </li>
          ))}
        </ul>
      )}
      <ServerChooser info={info} onOpened={onOpened} />
    </div>
  );
}

/** The last part of a path. */
export function baseName(path: string): string {
  return path.split("/").filter(Boolean).pop() ?? path;
}
