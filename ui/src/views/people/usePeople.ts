import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../api/client";
import { useApi, useBackend } from "../../api/context";

/** What a browser that is not signed in may do here (`GET /auth/status`, public). */
export interface SignInStatus {
  sign_in: boolean;
  provider: string | null;
}

export function useSignInStatus(enabled: boolean) {
  const { platform } = useBackend();
  return useQuery({
    queryKey: ["sign-in-status"],
    enabled,
    queryFn: async (): Promise<SignInStatus> => {
      const response = await platform.fetch(new Request(`${platform.baseUrl}/auth/status`));
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return (await response.json()) as SignInStatus;
    },
  });
}

/** Ends this browser's session on every instance, then starts the workbench afresh. */
export function useSignOut() {
  const { platform } = useBackend();
  return useMutation({
    mutationFn: async () => {
      const response = await platform.fetch(
        new Request(`${platform.baseUrl}/auth/logout`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: "",
        }),
      );
      if (!response.ok && response.status !== 303) throw new Error(`HTTP ${response.status}`);
    },
    onSuccess: () => {
      window.location.assign("/");
    },
  });
}

export function useTokens() {
  const api = useApi();
  return useQuery({
    queryKey: ["tokens"],
    queryFn: async () => unwrap(await api.GET("/api/tokens")),
  });
}

export function useMakeToken() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (body: { name: string; role: string }) =>
      unwrap(await api.POST("/api/tokens", { body })),
    onSettled: () => queries.invalidateQueries({ queryKey: ["tokens"] }),
  });
}

export function useRevokeToken() {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (id: string) => {
      unwrap(await api.DELETE("/api/tokens/{id}", { params: { path: { id } } }));
    },
    onSettled: () => queries.invalidateQueries({ queryKey: ["tokens"] }),
  });
}
