import { ApiFailure, unwrap, type Api } from "./client";

/** Who the server says is here (`/api/session`): one query, shared by every reader. */
export function sessionQuery(api: Api) {
  return {
    queryKey: ["session"],
    queryFn: async () => unwrap(await api.GET("/api/session")),
    // Not signed in is an answer, not a failure to retry: the sign-in page shows at once.
    retry: (failures: number, error: Error) => !signedOut(error) && failures < 1,
  };
}

/** Whether `error` is the server not knowing who is here. */
export function signedOut(error: unknown): boolean {
  return error instanceof ApiFailure && error.status === 401;
}
