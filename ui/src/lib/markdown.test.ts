import { describe, expect, it } from "vitest";
import { parseBlocks, parseInline } from "./markdown";

describe("parseBlocks", () => {
  it("reads headings, paragraphs, rules and quotes", () => {
    expect(
      parseBlocks("# Restart\nIntro line\nsecond line\n\nUnder\n---\n\n***\n\n> quoted\nlazy"),
    ).toEqual([
      { kind: "heading", level: 1, text: "Restart" },
      { kind: "paragraph", text: "Intro line\nsecond line" },
      { kind: "heading", level: 2, text: "Under" },
      { kind: "rule" },
      { kind: "quote", children: [{ kind: "paragraph", text: "quoted\nlazy" }] },
    ]);
  });

  it("keeps code blocks verbatim, fenced with their language or indented", () => {
    expect(
      parseBlocks("```sh\ncurl -s {{ .host }}\n  # *not* emphasis\n```\n\n    indented\n"),
    ).toEqual([
      { kind: "code", lang: "sh", text: "curl -s {{ .host }}\n  # *not* emphasis" },
      { kind: "code", lang: "", text: "indented" },
    ]);
  });

  it("nests lists by indent, keeps the start number and tells tight from loose", () => {
    const [list] = parseBlocks("3. first\n   - a\n   - b\n4. second\n   continued");
    expect(list).toEqual({
      kind: "list",
      ordered: true,
      start: 3,
      tight: true,
      items: [
        [
          { kind: "paragraph", text: "first" },
          {
            kind: "list",
            ordered: false,
            start: 1,
            tight: true,
            items: [[{ kind: "paragraph", text: "a" }], [{ kind: "paragraph", text: "b" }]],
          },
        ],
        [{ kind: "paragraph", text: "second\ncontinued" }],
      ],
    });
    const [loose] = parseBlocks("- one\n\n- two");
    expect(loose).toMatchObject({ kind: "list", tight: false });
  });

  it("starts a new list when the marker changes, and a paragraph ends at a list", () => {
    expect(parseBlocks("Steps:\n- a\n+ b").map((b) => b.kind)).toEqual([
      "paragraph",
      "list",
      "list",
    ]);
    // A number other than 1 does not interrupt a paragraph (a year at a line's start).
    expect(parseBlocks("Released in\n2024. Then")).toEqual([
      { kind: "paragraph", text: "Released in\n2024. Then" },
    ]);
  });
});

describe("parseInline", () => {
  it("reads code spans, emphasis, strong and escapes", () => {
    expect(parseInline("run ``a ` b`` then **both *hosts***, not snake_case_name \\*x\\*")).toEqual(
      [
        "run ",
        { kind: "code", text: "a ` b" },
        " then ",
        { kind: "strong", children: ["both ", { kind: "em", children: ["hosts"] }] },
        ", not snake_case_name *x*",
      ],
    );
    expect(parseInline("*a **b** c*")).toEqual([
      { kind: "em", children: ["a ", { kind: "strong", children: ["b"] }, " c"] },
    ]);
    expect(parseInline("`*not*` and * spaced *")).toEqual([
      { kind: "code", text: "*not*" },
      " and * spaced *",
    ]);
  });

  it("reads links and autolinks, drops images and raw HTML", () => {
    expect(
      parseInline(
        '[the *dash*](https://g.example/d/(1) "title") <https://x.example> ![p](https://t/p.png)',
      ),
    ).toEqual([
      {
        kind: "link",
        href: "https://g.example/d/(1)",
        children: ["the ", { kind: "em", children: ["dash"] }],
      },
      " ",
      { kind: "link", href: "https://x.example", children: ["https://x.example"] },
      " ",
    ]);
    expect(parseInline('<img src=x onerror="alert(1)"> <b>bold</b><!-- c --> 1 < 2')).toEqual([
      " bold 1 < 2",
    ]);
    expect(parseInline("[not a link] (x)")).toEqual(["[not a link] (x)"]);
  });

  it("turns two trailing spaces or a backslash into a line break", () => {
    expect(parseInline("one  \ntwo\\\nthree\nfour")).toEqual([
      "one",
      { kind: "br" },
      "two",
      { kind: "br" },
      "three\nfour",
    ]);
  });
});

describe("hostile instructions", () => {
  // A runbook's author picks the text a reviewer's page parses: none of these may take more than
  // linear time (the suite's timeout is the bound) or overflow the stack.
  const n = 100_000;
  it.each([
    ["unmatched emphasis", "*a ".repeat(n / 3)],
    ["unmatched underscores", "_a ".repeat(n / 3)],
    ["open brackets", "[".repeat(n)],
    ["labels without destinations", "[a]".repeat(n / 3)],
    [
      "backtick runs of growing length",
      Array.from({ length: 400 }, (_, i) => "`".repeat(i + 1)).join(" x "),
    ],
    ["unclosed comments", "<!--".repeat(n / 4)],
    ["spaces before a newline", " ".repeat(n) + "x\ny"],
    ["a heading of hashes", "# " + "#".repeat(n) + "x"],
    ["a fence's info string", "```" + " ".repeat(n) + "`"],
  ])("parses %s", (_name, text) => {
    const blocks = parseBlocks(text);
    for (const block of blocks) if ("text" in block) parseInline(block.text);
    expect(blocks.length).toBeGreaterThan(0);
  });

  it("stops nesting lists, quotes and emphasis at a depth, keeping the rest as text", () => {
    const deep = parseBlocks("- ".repeat(5_000) + "x");
    let depth = 0;
    for (let b = deep[0]; b?.kind === "list"; b = b.items[0]?.[0]) depth++;
    expect(depth).toBe(16);
    expect(JSON.stringify(parseBlocks(">".repeat(5_000) + " x"))).toContain(">");
    expect(JSON.stringify(parseInline("*".repeat(40) + "x" + "*".repeat(40)))).toContain("*");
  });
});
