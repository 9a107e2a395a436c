import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import { ConsentBanner } from "./ConsentBanner";

describe("ConsentBanner", () => {
  it("names what waits, how to give consent, and shows hostile text as text", () => {
    render(
      <ConsentBanner
        waiting={[
          {
            kind: "forwarder",
            name: "siem",
            target: "http://siem.example/c",
            description:
              "forwarder `siem` sends every packet to http://siem.example/c, handing it the value of $AWS_SECRET_ACCESS_KEY <img src=x>",
          },
        ]}
      />,
    );
    const banner = screen.getByRole("region", { name: "Waiting for your consent" });
    expect(banner.textContent).toContain("forwarder siem");
    expect(banner.textContent).toContain("jig trust");
    expect(banner.textContent).toContain("$AWS_SECRET_ACCESS_KEY");
    expect(banner.querySelector("img")).toBeNull();
  });

  it("is nothing when nothing waits", () => {
    const { container } = render(<ConsentBanner waiting={[]} />);
    expect(container.textContent).toBe("");
  });
});
