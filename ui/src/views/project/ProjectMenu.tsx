import { useRef } from "react";
import { useSession } from "../../api/queries";
import { Icon } from "../../components/Icon";
import { ProjectChooser } from "./ProjectChooser";
import { useProjectInfo } from "./useProjects";

/** The open project's name; in the desktop app, a button to open another. */
export function ProjectMenu() {
  const session = useSession();
  const info = useProjectInfo();
  const dialog = useRef<HTMLDialogElement>(null);
  if (!session.data) return null;
  const name = <span className="mono">{session.data.project}</span>;
  if (!info.data) return name;
  const close = () => dialog.current?.close();
  return (
    <>
      <button
        type="button"
        className="ghost"
        title={info.data.path ?? info.data.server ?? undefined}
        aria-label={`Project ${session.data.project}. Open another project${
          info.data.failure ? " (the last one tried did not open; see why)" : ""
        }`}
        aria-haspopup="dialog"
        onClick={() => dialog.current?.showModal()}
      >
        <Icon name={info.data.server ? "server" : "folder"} /> {name}
        {info.data.failure && (
          <span className="badge warn" title="The last project you tried to open did not open">
            !
          </span>
        )}
      </button>
      <dialog ref={dialog} className="project-dialog" aria-labelledby="project-dialog-title">
        <header className="row">
          <h2 id="project-dialog-title">Open a project or a team server</h2>
          <span className="spacer" />
          <button type="button" className="ghost" aria-label="Close" onClick={close}>
            <Icon name="cross" />
          </button>
        </header>
        <ProjectChooser info={info.data} onOpened={close} />
      </dialog>
    </>
  );
}
