import type { Platform } from "./platform";
import { webPlatform } from "./web";

export type { Platform, EventListener, StatusListener, Projects, ProjectInfo } from "./platform";

/** The platform this build runs on: the desktop app injects its own before the UI starts. */
export async function detectPlatform(): Promise<Platform> {
  if ("__TAURI_INTERNALS__" in window) {
    const { tauriPlatform } = await import("./tauri");
    return tauriPlatform();
  }
  return webPlatform();
}
