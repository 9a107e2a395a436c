import createClient from "openapi-fetch";
import type { Platform } from "../platform";
import type { components, paths } from "./schema";

/** The API's types, generated from docs/openapi.json (`npm run api-types`). */
export type Schemas = components["schemas"];
export type ToolSummary = Schemas["ToolSummary"];
export type ToolDetail = Schemas["ToolDetail"];
export type Preview = Schemas["Preview"];
export type RunRecord = Schemas["RunRecord"];
export type RunPage = Schemas["RunPage"];
export type RunDetail = Schemas["RunDetail"];
export type Packet = Schemas["Packet"];
export type ApprovalRecord = Schemas["ApprovalRecord"];
export type ChainStatus = Schemas["ChainStatus"];
export type Diagnostic = Schemas["Diagnostic"];
export type Session = Schemas["Session"];
export type ToolResponse = Schemas["ToolResponse"];
export type EngineEvent = Schemas["Event"];
export type PolicyView = Schemas["PolicyView"];
export type MetricsSnapshot = Schemas["MetricsSnapshot"];
export type ErrorMessage = Schemas["ErrorMessage"];
export type RunbookSummary = Schemas["RunbookSummary"];
export type RunbookDetail = Schemas["RunbookDetail"];
export type RunbookRunRecord = Schemas["RunbookRunRecord"];
export type RunView = Schemas["RunView"];
export type Waiting = Schemas["Waiting"];
export type Need = Schemas["Need"];
export type StepGraph = Schemas["Graph"];
export type StepAction = Schemas["Action"];

/** The typed client over whichever platform the UI runs on. */
export function apiClient(platform: Platform) {
  return createClient<paths>({
    baseUrl: platform.baseUrl,
    fetch: (request) => platform.fetch(request),
  });
}

export type Api = ReturnType<typeof apiClient>;

/** An API error as the UI shows it: the code and the sentence. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiFailure";
  }
}

/** The data of an answer, or an `ApiFailure` from its `ErrorMessage`. */
export function unwrap<T>(answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.response.ok && answer.data !== undefined) return answer.data;
  if (answer.response.ok && answer.response.status === 204) return undefined as T;
  const body = answer.error as Partial<ErrorMessage> | undefined;
  throw new ApiFailure(
    answer.response.status,
    typeof body?.code === "string" ? body.code : `HTTP ${answer.response.status}`,
    typeof body?.message === "string" ? body.message : answer.response.statusText,
  );
}
