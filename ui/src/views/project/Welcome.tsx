import type { ReactNode } from "react";
import { ProjectChooser } from "./ProjectChooser";
import { useProjectInfo, useProjects } from "./useProjects";

/**
 * The desktop app with no project open (the one it was given did not load): what a project is,
 * and the way to one. In a browser, or with a project open, the workbench itself.
 */
export function ProjectGate({ children }: { children: ReactNode }) {
  const projects = useProjects();
  const info = useProjectInfo();
  if (!projects) return children;
  if (!info.data) return null;
  if (info.data.path || info.data.server) return children;
  return (
    <main className="welcome" id="main">
      <h1>
        <img src="./icon.svg" alt="" width={28} height={28} /> Jig
      </h1>
      <p>
        A project is a folder with a <code>jig.yaml</code>: its tools, its policy and its audit
        record. Open one to browse and run its tools, or start with the example project that comes
        with Jig (it is copied to <code>~/.local/share/jig/example</code>, yours to change). Or sign
        in to your team&rsquo;s Jig server to see and approve what your colleagues ask.
      </p>
      <ProjectChooser info={info.data} />
    </main>
  );
}
