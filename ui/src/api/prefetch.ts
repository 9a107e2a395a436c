import type { QueryClient } from "@tanstack/react-query";
import type { Platform } from "../platform";
import { projectInfoQuery } from "../views/project/useProjects";
import { apiClient } from "./client";
import { toolsQuery } from "./queries";
import { sessionQuery } from "./session";

/**
 * Ask for what the first screen shows while the opening view's code loads and React starts:
 * the project (desktop), who is here, and the tool list when the app opens on it. Asked from
 * inside the first render instead, each waited for the render before it (a start's largest
 * share in the desktop app: docs/benchmarks.md). A failure is only cached; the view that reads
 * it asks again when it mounts.
 */
export function prefetchOpening(client: QueryClient, platform: Platform, opening: string): void {
  const api = apiClient(platform);
  const ignore = () => undefined;
  if (platform.projects) client.query(projectInfoQuery(platform.projects)).catch(ignore);
  client.query(sessionQuery(api)).catch(ignore);
  if (opening === "tools") client.query(toolsQuery(api)).catch(ignore);
}
