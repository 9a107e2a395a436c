import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import { Markdown } from "./Markdown";

describe("Markdown", () => {
  it("draws lists, code and emphasis from a runbook's instructions", () => {
    render(
      <Markdown
        text={
          "Check **both** hosts:\n\n1. `web-1`\n2. `web-2`\n\nSee [the dashboard](https://grafana.example/d/1)."
        }
      />,
    );
    expect(screen.getByText("both").tagName).toBe("STRONG");
    expect(screen.getAllByRole("listitem").map((li) => li.textContent)).toEqual(["web-1", "web-2"]);
    const link = screen.getByRole("link", { name: "the dashboard" });
    expect(link.getAttribute("href")).toBe("https://grafana.example/d/1");
    expect(link.getAttribute("target")).toBe("_blank");
    expect(link.getAttribute("rel")).toContain("noopener");
  });

  it("keeps raw HTML, images and script links out", () => {
    const { container } = render(
      <Markdown
        text={
          '<img src=x onerror="alert(1)"> <b>bold</b>\n\n![pixel](https://tracker.example/p.png)\n\n[click](javascript:alert(1))'
        }
      />,
    );
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector("b")).toBeNull();
    expect(container.innerHTML).not.toContain("onerror");
    expect(container.innerHTML).not.toContain("javascript:");
    expect(screen.getByText("click").closest("a")).toBeNull();
  });
});
