import type { ReactNode } from "react";
import { render } from "@testing-library/react";
import { QueryClient } from "@tanstack/react-query";
import { BackendProvider } from "../api/context";
import { mockPlatform, type MockPlatform } from "../platform/mock";

/** Render `ui` against a mock platform whose API is `handle`. */
export function renderWith(
  ui: ReactNode,
  handle: (request: Request) => Response | Promise<Response>,
) {
  const platform: MockPlatform = mockPlatform(handle);
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const result = render(
    <BackendProvider platform={platform} client={client}>
      {ui}
    </BackendProvider>,
  );
  return { ...result, platform };
}

/** The path and query of a request (`/api/tools?x=1`). */
export function pathOf(request: Request): string {
  const url = new URL(request.url);
  return url.pathname + url.search;
}
