import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useBackend } from "../../api/context";
import { markOnce } from "../../lib/marks";
import type { ProjectInfo, Projects } from "../../platform";

/** The desktop app's projects, or `undefined` in a browser (which has exactly one). */
export function useProjects(): Projects | undefined {
  return useBackend().platform.projects;
}

/**
 * The open project, the last failure and the recent list (the desktop app's; also asked for
 * before the first render: `prefetchOpening`).
 */
export function projectInfoQuery(projects: Projects | undefined) {
  return {
    queryKey: ["project"],
    queryFn: async () => {
      if (!projects) throw new Error("no projects");
      const info = await projects.current();
      markOnce("project");
      return info;
    },
    enabled: projects !== undefined,
    staleTime: Infinity,
  };
}

export function useProjectInfo() {
  return useQuery(projectInfoQuery(useProjects()));
}

/** What to open: a path, the folder picker (`null`), the example project, or a team server. */
export type ProjectChoice = string | null | { example: true } | { server: string };

/**
 * Open a project (`path`), pick one (`null`) or the example: on success everything cached belongs to the old
 * project, so it is all dropped and the tool list shown.
 */
export function useOpenProject() {
  const projects = useProjects();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (choice: ProjectChoice): Promise<ProjectInfo | null> => {
      if (!projects) throw new Error("only the desktop app opens projects");
      if (choice === null) return projects.pick();
      if (typeof choice === "string") return projects.open(choice);
      return "server" in choice ? projects.connect(choice.server) : projects.example();
    },
    // The app records why the last open failed: re-read it, so the project button says so
    // even when the attempt came from the palette.
    onError: () => queries.invalidateQueries({ queryKey: ["project"] }),
    onSuccess: (info) => {
      if (!info) return;
      // Every answer cached belongs to the old project: reset them all (what is on screen
      // refetches from the new one), then record the project itself.
      void queries.resetQueries({ predicate: (query) => query.queryKey[0] !== "project" });
      queries.setQueryData(["project"], info);
      window.location.hash = "#/tools";
    },
  });
}

/** A failure from the desktop app (a string) or from anywhere else, as text. */
export function failureText(error: unknown): string {
  if (typeof error === "string") return error;
  return error instanceof Error ? error.message : String(error);
}
