import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { Told } from "./BulkDecide";

describe("Told", () => {
  it("counts what was decided and names each one that was not, with its code", () => {
    render(
      <Told
        outcomes={[
          { id: "aaaaaaaa-1", outcome: "approved", resumed_as: "r1", code: null, message: null },
          {
            id: "bbbbbbbb-2",
            outcome: "error",
            resumed_as: null,
            code: "E_CONFLICT",
            message: "approval bbbbbbbb-2 was already denied",
          },
        ]}
      />,
    );
    expect(screen.getByText("Approved 1 of 2.")).toBeTruthy();
    const failed = screen.getByRole("list", { name: "Not decided" });
    expect(failed.textContent).toContain("bbbbbbbb");
    expect(failed.textContent).toContain("E_CONFLICT: approval bbbbbbbb-2 was already denied");
  });
});
