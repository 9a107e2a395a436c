/** What an approved call will start, as the engine recorded it when it asked: the command line
 * token by token (so a space inside an argument cannot pass for two), and the tool's definition
 * and code files with their hashes, which the approval is bound to. */
export interface ApprovalRequest {
  args?: unknown;
  argv?: string[];
  definition?: { file: string; line: number; sha256: string };
  code_files?: { path: string; sha256: string | null }[];
}

export function WhatRuns({ request }: { request: ApprovalRequest | null }) {
  if (!request) return null;
  const { argv, definition, code_files: files = [] } = request;
  return (
    <div className="what-runs">
      {argv && argv.length > 0 && (
        <div>
          <div className="muted">Runs, argument by argument:</div>
          <ol className="argv" aria-label="Command line">
            {argv.map((token, i) => (
              <li key={i}>
                <code>{token === "" ? '""' : token}</code>
              </li>
            ))}
          </ol>
        </div>
      )}
      {/* A built-in (`<std>/…`) is part of Jig itself: nothing of the project to bind. */}
      {definition && !definition.file.startsWith("<") && (
        <div className="muted">
          Defined in{" "}
          <code>
            {definition.file}:{definition.line}
          </code>{" "}
          <span title={definition.sha256}>({definition.sha256.slice(0, 12)})</span>
          {files.map((file) => (
            <span key={file.path}>
              {" · code "}
              <code>{file.path}</code>{" "}
              <span title={file.sha256 ?? "missing"}>
                ({file.sha256 ? file.sha256.slice(0, 12) : "missing"})
              </span>
            </span>
          ))}
          . Approving binds to these: if they change, the approval no longer fits.
        </div>
      )}
    </div>
  );
}
