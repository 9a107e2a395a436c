import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import { OutputLog } from "./OutputLog";

describe("OutputLog", () => {
  it("shows stderr told from stdout, colours instead of escape codes, and counts lines", () => {
    render(
      <OutputLog
        live={false}
        chunks={[
          { stream: "stdout", text: "building\n\u001b[32mok\u001b[0m 3 tests\n" },
          { stream: "stderr", text: 'Traceback (most recent call last):\n  File "x.py"\n' },
        ]}
      />,
    );
    const log = screen.getByLabelText("What the tool wrote");
    expect(log.textContent).not.toContain("\u001b");
    expect(log.textContent).not.toContain('{"stream"');
    expect(log.querySelector(".fg-green")?.textContent).toBe("ok");
    expect(log.querySelector(".stderr")?.textContent).toContain("stderr: Traceback");
    expect(screen.getByText(/4 lines/)).toBeInTheDocument();
    expect(screen.getByText("2 on stderr")).toBeInTheDocument();
  });

  it("draws the end of a very long log and says how much it left out", () => {
    const text = Array.from({ length: 6000 }, (_, i) => `line ${i}\n`).join("");
    render(<OutputLog live={false} chunks={[{ stream: "stdout", text }]} />);
    expect(screen.getByText(/The first 1000 lines are not shown here/)).toBeInTheDocument();
    const drawn = screen.getByLabelText("What the tool wrote").textContent;
    expect(drawn).toContain("line 5999\n");
    expect(drawn).toContain("line 1000\n");
    expect(drawn).not.toContain("line 999\n");
  });
});
