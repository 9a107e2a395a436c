import { describe, expect, it } from "vitest";
import { mockPlatform } from "../platform/mock";
import type { ProjectInfo } from "../platform";
import { newQueryClient } from "./context";
import { prefetchOpening } from "./prefetch";

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } });
}

const answers = (request: Request) => {
  const path = new URL(request.url).pathname;
  if (path === "/api/tools") return json([{ id: "fs.read" }]);
  if (path === "/api/session") return json({ name: "ana" });
  return new Response("", { status: 404 });
};

describe("prefetchOpening", () => {
  it("asks for the session and the tool list before the first render when the app opens on the tools", async () => {
    const platform = mockPlatform(answers);
    const client = newQueryClient();
    prefetchOpening(client, platform, "tools");
    await expect.poll(() => client.getQueryData(["tools"])).toEqual([{ id: "fs.read" }]);
    await expect.poll(() => client.getQueryData(["session"])).toEqual({ name: "ana" });
    expect(platform.requests.map((r) => new URL(r.url).pathname).sort()).toEqual([
      "/api/session",
      "/api/tools",
    ]);
  });

  it("asks for no tool list when the app opens elsewhere, and for the project in the desktop app", async () => {
    const info = { path: "/work/acme" } as unknown as ProjectInfo;
    const platform = {
      ...mockPlatform(answers),
      projects: {
        current: () => Promise.resolve(info),
      },
    } as unknown as Parameters<typeof prefetchOpening>[1];
    const client = newQueryClient();
    prefetchOpening(client, platform, "audit");
    await expect.poll(() => client.getQueryData(["project"])).toBe(info);
    await expect.poll(() => client.getQueryData(["session"])).toEqual({ name: "ana" });
    expect(client.getQueryData(["tools"])).toBeUndefined();
  });
});
