import type { IconName } from "../components/Icon";

/** The places in the navigation, in order. */
export const places: { id: string; label: string; icon: IconName }[] = [
  { id: "tools", label: "Tools", icon: "tools" },
  { id: "approvals", label: "Approvals", icon: "approvals" },
  { id: "jobs", label: "Jobs", icon: "jobs" },
  { id: "audit", label: "Audit", icon: "audit" },
  { id: "runbooks", label: "Runbooks", icon: "runbooks" },
  { id: "problems", label: "Problems", icon: "problems" },
  { id: "policy", label: "Policy", icon: "policy" },
  { id: "metrics", label: "Metrics", icon: "metrics" },
];
