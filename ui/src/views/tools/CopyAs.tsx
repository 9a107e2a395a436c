import { useState } from "react";
import { Icon } from "../../components/Icon";
import { curlCommand, jigCallCommand, mcpToolsCall } from "../../lib/shell";

type Form = "jig call" | "curl" | "MCP";

/** Where the API is, for curl: this page's origin when it is served over HTTP. */
function origin(): string {
  return window.location.protocol.startsWith("http") ? window.location.origin : "$JIG_URL";
}

/**
 * The request the form describes, copied as the person will make it elsewhere: `jig call` in a
 * terminal, curl against the API, an MCP `tools/call` an agent sends. Each copy is said.
 */
export function CopyAs({ tool, args }: { tool: string; args: Record<string, unknown> }) {
  const [copied, setCopied] = useState<Form | null>(null);
  const text = (form: Form) =>
    form === "jig call"
      ? jigCallCommand(tool, args)
      : form === "curl"
        ? curlCommand(origin(), tool, args)
        : mcpToolsCall(tool, args);
  return (
    <span className="row copy-as" role="group" aria-label="Copy the request">
      <Icon name="copy" />
      <span className="muted">Copy as</span>
      {(["jig call", "curl", "MCP"] as const).map((form) => (
        <button
          key={form}
          type="button"
          className="ghost"
          aria-label={`Copy as ${form}`}
          title={text(form)}
          onClick={() => {
            void navigator.clipboard.writeText(text(form)).then(() => {
              setCopied(form);
            });
          }}
        >
          <code>{form}</code>
        </button>
      ))}
      <span role="status" className="muted">
        {copied ? `${copied} copied` : ""}
      </span>
    </span>
  );
}
