import { describe, expect, it } from "vitest";
import { render, screen, within } from "@testing-library/react";
import { WhatRuns } from "./WhatRuns";

describe("WhatRuns", () => {
  it("shows the command line argument by argument, so a space cannot pass for two", () => {
    render(
      <WhatRuns
        request={{
          argv: ["git", "log", "--pretty=format:%h %s", "v1..HEAD", ""],
          definition: { file: "tools/changelog.tool.yaml", line: 3, sha256: "ab".repeat(32) },
          code_files: [{ path: "bin/report.sh", sha256: null }],
        }}
      />,
    );
    const items = within(screen.getByRole("list", { name: "Command line" })).getAllByRole(
      "listitem",
    );
    expect(items.map((li) => li.textContent)).toEqual([
      "git",
      "log",
      "--pretty=format:%h %s",
      "v1..HEAD",
      '""',
    ]);
    expect(screen.getByText("tools/changelog.tool.yaml:3")).toBeTruthy();
    expect(screen.getByText("bin/report.sh")).toBeTruthy();
    expect(screen.getByText("(missing)")).toBeTruthy();
  });

  it("shows nothing more than the arguments for a built-in", () => {
    const { container } = render(
      <WhatRuns
        request={{
          args: { path: "a.txt" },
          definition: {
            file: "<std>/tools/file_write.tool.yaml",
            line: 1,
            sha256: "cd".repeat(32),
          },
          code_files: [],
        }}
      />,
    );
    expect(container.textContent).toBe("");
  });
});
