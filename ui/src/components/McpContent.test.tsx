import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/react";
import { McpContent, contentBlocksOf } from "./McpContent";
import { ResultBody } from "./ResultBody";

const png = "iVBORw0KGgo=";

describe("McpContent", () => {
  it("reads only the known blocks of an MCP answer, and nothing from other results", () => {
    const text = { type: "text", text: "The sum of 2 and 3 is 5." };
    expect(contentBlocksOf({ content: [text, { type: "video", data: "x" }, null] })).toEqual([
      text,
    ]);
    expect(contentBlocksOf({ content: "not blocks" })).toBeNull();
    expect(contentBlocksOf({ content: [{ type: "text" }] })).toBeNull();
    expect(contentBlocksOf({ path: "a.txt", content: [] })).toBeNull();
    expect(contentBlocksOf(null)).toBeNull();
  });

  it("shows text as text, raster images in place and an SVG only as what it is", () => {
    const blocks = contentBlocksOf({
      content: [
        { type: "text", text: "line one\nline two" },
        { type: "image", data: png, mimeType: "image/png" },
        { type: "image", data: "PHN2Zz4=", mimeType: "image/svg+xml" },
        { type: "resource_link", uri: "file:///notes.txt", name: "notes" },
      ],
    });
    render(<McpContent blocks={blocks ?? []} />);
    expect(screen.getByText(/line one\s+line two/).tagName).toBe("PRE");
    const image = screen.getByRole("img", { name: "Image 2 of the answer (image/png)" });
    expect(image.getAttribute("src")).toBe(`data:image/png;base64,${png}`);
    expect(screen.queryByRole("img", { name: /svg/ })).toBeNull();
    expect(screen.getByText(/An image \(image\/svg\+xml/)).toBeTruthy();
    expect(screen.getByText("file:///notes.txt")).toBeTruthy();
  });

  it("folds the JSON of an MCP answer and shows any other result as JSON", () => {
    const { unmount } = render(
      <ResultBody data={{ content: [{ type: "text", text: "hello" }] }} />,
    );
    expect(screen.getByText("hello").tagName).toBe("PRE");
    expect(screen.getByText("JSON").closest("details")?.open).toBe(false);
    unmount();
    render(<ResultBody data={{ content: "plain file text" }} />);
    expect(screen.queryByText("JSON")).toBeNull();
    expect(screen.getByLabelText("Result")).toBeTruthy();
  });
});
