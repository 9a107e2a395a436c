import { describe, expect, it, vi } from "vitest";
import { screen, waitFor, within } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import type { ToolDetail } from "../../api/client";
import { json } from "../../platform/mock";
import { pathOf, renderWith } from "../../test/render";
import { RunPanel } from "./RunPanel";

// CodeMirror measures a laid-out page, which jsdom has not: here the JSON editor is a plain
// text box with the same contract (its completion and marks are tested in chromium,
// ui/e2e/workbench.test.mjs, and its parts in json/*.test.ts).
vi.mock("./json/JsonEditor", () => ({
  default: ({
    value,
    onChange,
    label,
    describedBy,
    invalid,
  }: {
    value: string;
    onChange: (text: string) => void;
    label: string;
    describedBy?: string;
    invalid: boolean;
  }) => (
    <textarea
      aria-label={label}
      aria-describedby={describedBy}
      aria-invalid={invalid}
      value={value}
      onChange={(e) => {
        onChange(e.target.value);
      }}
    />
  ),
}));

/** A schema with what makes forms hard: $defs/$ref, oneOf, nullable, arrays of objects, enums. */
const hard = {
  type: "object",
  $defs: {
    member: {
      type: "object",
      properties: {
        login: { type: "string", pattern: "^[a-z]+$" },
        role: { enum: ["owner", "reader"] },
      },
      required: ["login", "role"],
      additionalProperties: false,
    },
  },
  properties: {
    target: {
      oneOf: [
        {
          title: "A branch",
          type: "object",
          properties: { branch: { type: "string", minLength: 1 } },
          required: ["branch"],
          additionalProperties: false,
        },
        {
          title: "A tag",
          type: "object",
          properties: { tag: { type: "string", minLength: 1 } },
          required: ["tag"],
          additionalProperties: false,
        },
      ],
    },
    members: { type: "array", minItems: 1, items: { $ref: "#/$defs/member" } },
    note: { type: ["string", "null"], maxLength: 10, default: null },
  },
  required: ["target", "members"],
  additionalProperties: false,
};

const tool = {
  id: "acme.grant",
  version: "1.0.0",
  description: "Grant access.",
  tags: [],
  package: "acme",
  kind: "cli",
  side_effects: ["none"],
  risk: "low",
  deterministic: true,
  verdict: { action: "allow", rule: "rules[1]", reason: "low risk" },
  source: "tools/grant.tool.yaml:1",
  input_schema: hard,
  output_schema: { type: "object" },
  definition: {},
} as unknown as ToolDetail;

function api(calls: unknown[]) {
  return async (request: Request) => {
    const path = pathOf(request);
    if (path === "/api/session")
      return json({
        person: { name: "alice", role: "runner" },
        project: "acme",
        registry_hash: "x",
        tools: 1,
      });
    if (path === "/api/tools/acme.grant/preview") {
      const body = (await request.json()) as { args: { members?: unknown[] } };
      const valid = (body.args.members?.length ?? 0) > 0;
      return json({
        tool: "acme.grant",
        version: "1.0.0",
        valid,
        problems: valid ? [] : [{ pointer: "/members", message: "too short" }],
        decision: valid ? { action: "allow", rule: "rules[1]", reason: "low risk" } : null,
        self_approval: null,
      });
    }
    if (path === "/api/calls") {
      calls.push(await request.json());
      return json({ request_id: "r-1" }, 202);
    }
    return json({ type: "ErrorMessage", code: "E_NOT_FOUND", message: path }, 404);
  };
}

describe("the run form", () => {
  it("renders $ref, oneOf, nullable and arrays of objects, checks as you type, and runs the arguments it shows", async () => {
    const user = userEvent.setup();
    const calls: unknown[] = [];
    const { platform } = renderWith(<RunPanel tool={tool} />, api(calls));

    // oneOf: an option selector named by its label, and the chosen option's field.
    const selector = await screen.findByLabelText(/^target/);
    await user.selectOptions(selector, "A tag");
    await user.type(screen.getByLabelText(/^tag/), "v1.2");

    // The array of $ref'd objects starts with its one required item.
    await user.type(screen.getByLabelText(/^login/), "Alice");
    // The pattern is broken: the error shows inline, beside its constraint.
    expect(await screen.findByText(/does not match pattern/)).toBeInTheDocument();
    expect(screen.getAllByText("matches /^[a-z]+$/").length).toBeGreaterThan(0);
    await user.clear(screen.getByLabelText(/^login/));
    await user.type(screen.getByLabelText(/^login/), "alice");
    await waitFor(() => {
      expect(screen.queryByText(/does not match pattern/)).not.toBeInTheDocument();
    });
    await user.selectOptions(screen.getByLabelText(/^role/), "owner");

    // Nullable: a string or nothing; the constraint is shown.
    expect(screen.getByText("at most 10 characters")).toBeInTheDocument();

    // The JSON view shows exactly what the form holds.
    await user.click(screen.getByRole("radio", { name: "JSON" }));
    const text = (await screen.findByLabelText<HTMLTextAreaElement>("Arguments (JSON)")).value;
    const shown: unknown = JSON.parse(text);
    expect(shown).toEqual({
      target: { tag: "v1.2" },
      members: [{ login: "alice", role: "owner" }],
      note: null,
    });

    // The preview names the rule; Run sends what was shown.
    const preview = await screen.findByRole("status", { name: "Preview" });
    await within(preview).findByText("rules[1]");
    const run = screen.getByRole("button", { name: "Run" });
    await waitFor(() => {
      expect(run).toBeEnabled();
    });
    await user.click(run);
    await waitFor(() => {
      expect(calls).toHaveLength(1);
    });
    expect(calls[0]).toEqual({ tool: "acme.grant", args: shown });

    // The response arrives on the event stream and is shown, checked against the output schema.
    platform.emit({
      event: "ToolResponse",
      type: "ToolResponse",
      ok: true,
      tool: "acme.grant",
      request_id: "r-1",
      duration_ms: 3,
      data: { granted: 1 },
      errors: [],
      replayed: false,
    });
    expect(await screen.findByRole("heading", { name: "Succeeded" })).toBeInTheDocument();
    expect(screen.getByText("matches the output schema")).toBeInTheDocument();
  });

  it("keeps Run off while the JSON does not parse, and says why", async () => {
    const user = userEvent.setup();
    renderWith(<RunPanel tool={tool} />, api([]));
    await user.click(await screen.findByRole("radio", { name: "JSON" }));
    const area = await screen.findByLabelText("Arguments (JSON)");
    await user.clear(area);
    await user.type(area, "[[1,2]");
    expect(document.getElementById("raw-args-error")).toHaveTextContent(/JSON/);
    expect(document.getElementById("raw-args-error")).not.toHaveTextContent("valid JSON");
    expect(area).toHaveAttribute("aria-invalid", "true");
    expect(screen.getByRole("button", { name: "Run" })).toBeDisabled();
  });
});

describe("content fields", () => {
  it("take several lines: Enter makes a new line, kept in the arguments", async () => {
    const user = userEvent.setup();
    const writer = {
      ...tool,
      input_schema: {
        type: "object",
        properties: { path: { type: "string" }, content: { type: "string" } },
        required: ["path", "content"],
      },
    } as unknown as ToolDetail;
    renderWith(<RunPanel tool={writer} />, api([]));
    const content = await screen.findByLabelText(/^content/);
    expect(content.tagName).toBe("TEXTAREA");
    expect((await screen.findByLabelText(/^path/)).tagName).toBe("INPUT");
    await user.type(content, "line one{Enter}line two");
    await user.click(screen.getByRole("radio", { name: "JSON" }));
    const text = (await screen.findByLabelText<HTMLTextAreaElement>("Arguments (JSON)")).value;
    expect(JSON.parse(text)).toEqual({ content: "line one\nline two" });
  });
});

describe("a free-form object", () => {
  it("takes key-value pairs", async () => {
    const user = userEvent.setup();
    const writer = {
      ...tool,
      input_schema: {
        type: "object",
        properties: { attribution: { type: "object", description: "Who asked." } },
      },
    } as unknown as ToolDetail;
    renderWith(<RunPanel tool={writer} />, api([]));
    const add = await screen.findByRole("button", { name: /add/i });
    await user.click(add);
    await user.click(screen.getByRole("radio", { name: "JSON" }));
    const text = (await screen.findByLabelText<HTMLTextAreaElement>("Arguments (JSON)")).value;
    const shown = JSON.parse(text) as { attribution: Record<string, unknown> };
    expect(Object.keys(shown.attribution)).toHaveLength(1);
  });
});
