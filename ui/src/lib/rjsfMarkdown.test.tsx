import { render, screen } from "@testing-library/react";
import Form from "@rjsf/core";
import { describe, expect, it } from "vitest";
import { formValidator } from "./schema";

describe("rjsf's Markdown", () => {
  it("draws rjsf's own message with its code span and emphasis, through Jig's stand-in", () => {
    const { container } = render(
      <Form
        schema={{ type: "object", properties: { x: { type: "mystery" as "string" } } }}
        validator={formValidator}
      />,
    );
    expect(screen.getByText(/Unsupported field schema/)).toBeInTheDocument();
    // markdown-to-jsx wrapped the message in a span of its own; the stand-in draws it in place.
    const message = container.querySelector(".unsupported-field p");
    expect(message?.querySelector(":scope > code")?.textContent).toBe("root_x");
    expect(message?.querySelector(":scope > em")?.textContent).toBe("Unknown field type mystery");
    expect(message?.textContent).toBe(
      "Unsupported field schema for field root_x: Unknown field type mystery.",
    );
  });
});
