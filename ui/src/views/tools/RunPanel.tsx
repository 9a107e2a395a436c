import { lazy, Suspense, useCallback, useMemo, useState } from "react";
import Form from "@rjsf/core";
import type { RJSFSchema } from "@rjsf/utils";
import type { ToolDetail } from "../../api/client";
import { useSession } from "../../api/queries";
import { Icon } from "../../components/Icon";
import { formValidator } from "../../lib/schema";
import { formSchema, takesNoArguments, uiSchemaFor } from "../../lib/widgets";
import { CallOutcome } from "./CallOutcome";
import { FieldTemplate } from "./FieldTemplate";
import { TitleField } from "./TitleField";
import { Presets } from "./Presets";
import { CopyAs } from "./CopyAs";
import { DateTimeWidget } from "./DateTimeWidget";
import { History } from "./History";
import { PreviewBox } from "./PreviewBox";
import { useCall } from "./useCall";
import { ShowErrors, touchedWithin } from "./touched";

type Mode = "form" | "json";

const templates = { FieldTemplate, TitleFieldTemplate: TitleField };
// The JSON editor (CodeMirror) loads when someone first switches to JSON: the form is enough
// for most calls, and the editor is the largest part of the page.
const JsonEditor = lazy(() => import("./json/JsonEditor"));
// `date-time` strings: the app's own ISO format in the person's zone, the zone named.
const widgets = { DateTimeWidget };

/** The run form: fields from the input schema (or raw JSON, kept in sync), preview, Run. */
export function RunPanel({ tool }: { tool: ToolDetail }) {
  const [args, setArgs] = useState<Record<string, unknown>>({});
  const [mode, setMode] = useState<Mode>("form");
  const [text, setText] = useState("{}");
  const [textError, setTextError] = useState<string | null>(null);
  const [formErrors, setFormErrors] = useState(0);
  // Fields the person changed or left; `null`: every field shows its errors (arguments filled
  // from a preset, the history or the JSON text were all "typed" at once).
  const [touched, setTouched] = useState<ReadonlySet<string> | null>(new Set<string>());
  const touch = useCallback((id: string | undefined) => {
    if (id) setTouched((was) => (was === null || was.has(id) ? was : new Set(was).add(id)));
  }, []);
  const showErrors = useCallback(
    (id: string) => touched === null || touchedWithin(touched, id),
    [touched],
  );
  const [previewValid, setPreviewValid] = useState(false);
  const call = useCall();
  const role = useSession().data?.person.role;
  const mayRun = role !== undefined && role !== "viewer";
  const schema = useMemo(() => formSchema(tool.input_schema as RJSFSchema), [tool.input_schema]);
  // Multi-line content gets a text area (lib/widgets.ts); the form has no submit button of its
  // own (Run is below, with the preview).
  const uiSchema = useMemo(
    () => ({ ...uiSchemaFor(schema), "ui:submitButtonOptions": { norender: true } }),
    [schema],
  );

  const running = call.view.phase === "starting" || call.view.phase === "running";
  // A job on a scheduler can be cancelled too, but need not block the next run.
  const cancellable = running || call.view.phase === "queued";
  const invalid = formErrors > 0 || textError !== null || !previewValid || !mayRun;
  // The arguments of the call made last: while it waits for a reviewer, running exactly the
  // same again would only ask them twice.
  const [asked, setAsked] = useState<string | null>(null);
  // (Once approved and orphaned, running it again is how the approval is used.)
  const waitsAlready =
    call.view.phase === "waiting" && !call.view.orphaned && asked === JSON.stringify(args);

  const run = () => {
    if (running || invalid || waitsAlready) return;
    setAsked(JSON.stringify(args));
    void call.start(tool.id, args);
  };
  const fill = (next: Record<string, unknown>) => {
    setArgs(next);
    setTouched(null);
    setText(JSON.stringify(next, null, 2));
    setTextError(null);
  };

  return (
    <div
      className="run-panel"
      onKeyDown={(event) => {
        if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
          event.preventDefault();
          run();
        }
      }}
    >
      <div className="row">
        <div className="segmented" role="radiogroup" aria-label="Arguments as">
          {(["form", "json"] as const).map((m) => (
            <button
              key={m}
              type="button"
              role="radio"
              aria-checked={mode === m}
              onClick={() => {
                // The JSON text starts from the form's values; the form reads back what parses.
                if (m === "json" && mode !== "json") setText(JSON.stringify(args, null, 2));
                if (m === "form" && mode !== "form") setTouched(null);
                setMode(m);
              }}
            >
              {m === "form" ? "Form" : "JSON"}
            </button>
          ))}
        </div>
        <span className="grow" />
        <Presets tool={tool.id} args={args} canSave={mayRun} onLoad={fill} />
      </div>
      {mode === "form" && takesNoArguments(schema) ? (
        <p className="muted">This tool takes no arguments: Run calls it as it is.</p>
      ) : mode === "form" ? (
        <div className="rjsf-host">
          <ShowErrors.Provider value={showErrors}>
            <Form
              schema={schema}
              uiSchema={uiSchema}
              templates={templates}
              widgets={widgets}
              formData={args}
              validator={formValidator}
              liveValidate="onChange"
              showErrorList={false}
              noHtml5Validate
              onChange={(event, id) => {
                setArgs((event.formData ?? {}) as Record<string, unknown>);
                setFormErrors(event.errors.length);
                touch(id);
              }}
              onBlur={touch}
            />
          </ShowErrors.Provider>
        </div>
      ) : (
        <div>
          <span className="field-label" aria-hidden="true">
            Arguments (JSON){" "}
            <span className="muted">
              — keys and values from the tool&rsquo;s schema as you type; <kbd>Ctrl</kbd>{" "}
              <kbd>Space</kbd> lists them
            </span>
          </span>
          <Suspense fallback={<div className="json-editor loading" aria-busy="true" />}>
            <JsonEditor
              value={text}
              schema={schema}
              label="Arguments (JSON)"
              describedBy="raw-args-error"
              invalid={textError !== null}
              onChange={(next) => {
                setText(next);
                try {
                  const parsed: unknown = JSON.parse(next);
                  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
                    throw new Error("the arguments are one JSON object");
                  setArgs(parsed as Record<string, unknown>);
                  setTextError(null);
                } catch (error) {
                  setTextError(error instanceof Error ? error.message : String(error));
                }
              }}
            />
          </Suspense>
          <div
            id="raw-args-error"
            role="status"
            className={textError ? "field-error" : "visually-hidden"}
          >
            {textError ?? "valid JSON"}
          </div>
        </div>
      )}
      <PreviewBox
        tool={tool.id}
        args={args}
        disabled={textError !== null}
        onValid={setPreviewValid}
        approved={call.view.orphaned && asked === JSON.stringify(args)}
      />
      <div className="row">
        <button
          type="button"
          className="primary"
          onClick={run}
          disabled={running || invalid || waitsAlready}
          aria-keyshortcuts="Control+Enter"
          aria-describedby={waitsAlready ? "run-waits" : undefined}
        >
          <Icon name="play" /> Run
        </button>
        {waitsAlready && (
          <span id="run-waits" className="muted">
            This request waits for a reviewer already; change an argument to ask for another.
          </span>
        )}
        {cancellable && (
          <button type="button" className="danger" onClick={() => void call.cancel()}>
            <Icon name="stop" /> Cancel
          </button>
        )}
        <CopyAs tool={tool.id} args={args} />
        {mayRun ? (
          <span className="muted">
            <kbd>Ctrl</kbd> <kbd>Enter</kbd> runs
          </span>
        ) : (
          <span className="muted" role="note">
            Your role ({role ?? "unknown"}) may look but not run; ask an admin for the runner role.
          </span>
        )}
      </div>
      <CallOutcome view={call.view} outputSchema={tool.output_schema} />
      <History
        tool={tool.id}
        canRun={mayRun && !running}
        onUse={fill}
        onRerun={(again) => {
          // Run again: the same arguments, through the policy as any call (a write asks again).
          fill(again);
          setAsked(JSON.stringify(again));
          void call.start(tool.id, again);
        }}
      />
    </div>
  );
}
