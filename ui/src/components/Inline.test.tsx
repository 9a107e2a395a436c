import { describe, expect, it } from "vitest";
import { render } from "@testing-library/react";
import { Inline } from "./Inline";

describe("Inline", () => {
  it("draws code spans as code and leaves the rest as text", () => {
    const { container } = render(
      <p>
        <Inline text="Who asked, e.g. `{task_id: 42}`; a lone ` stays, <b>this</b> is text" />
      </p>,
    );
    expect(container.querySelector("code")?.textContent).toBe("{task_id: 42}");
    expect(container.textContent).toBe(
      "Who asked, e.g. {task_id: 42}; a lone ` stays, <b>this</b> is text",
    );
    expect(container.querySelector("b")).toBeNull();
  });
});
