import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
} from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { json, jsonParseLinter } from "@codemirror/lang-json";
import {
  bracketMatching,
  HighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from "@codemirror/language";
import { linter, lintKeymap, type Diagnostic } from "@codemirror/lint";
import { Compartment, EditorState } from "@codemirror/state";
import { EditorView, keymap, lineNumbers, type ViewUpdate } from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { useEffect, useRef } from "react";
import { schemaCompletion, schemaDiagnostics } from "./complete";

/** Colours from the app's theme, so the editor follows light and dark. */
const highlight = HighlightStyle.define([
  { tag: tags.propertyName, color: "var(--accent)" },
  { tag: tags.string, color: "var(--ok)" },
  { tag: [tags.number, tags.bool, tags.null], color: "var(--warn)" },
  { tag: tags.invalid, color: "var(--bad)" },
]);

const theme = EditorView.theme({
  "&": {
    background: "var(--panel)",
    color: "var(--text)",
    border: "1px solid var(--border)",
    borderRadius: "var(--radius)",
    fontSize: "12.5px",
  },
  "&.cm-focused": { outline: "2px solid var(--focus)", outlineOffset: "1px" },
  ".cm-content": { fontFamily: "var(--mono)", minHeight: "8em", caretColor: "var(--text)" },
  ".cm-scroller": { maxHeight: "28em", overflow: "auto" },
  ".cm-gutters": {
    background: "var(--panel-2)",
    color: "var(--muted)",
    borderRight: "1px solid var(--border)",
  },
  ".cm-cursor": { borderLeftColor: "var(--text)" },
  "&.cm-focused .cm-selectionBackground, .cm-selectionBackground": {
    background: "var(--warn-bg)",
  },
  ".cm-tooltip": {
    background: "var(--panel)",
    color: "var(--text)",
    border: "1px solid var(--border)",
  },
  ".cm-tooltip-autocomplete > ul > li[aria-selected]": {
    background: "var(--accent)",
    color: "var(--accent-text)",
  },
  ".cm-completionDetail": { color: "inherit", opacity: "0.8", marginLeft: "1em" },
  ".cm-diagnostic-error": { borderLeftColor: "var(--bad)" },
});

/**
 * The arguments as JSON text, with the tool's input schema: its keys and values offered as you
 * type (Ctrl-Space asks), its problems underlined where they are. Tab leaves the editor, as it
 * leaves any field; Ctrl-Enter still runs (the run panel's key).
 */
export default function JsonEditor({
  value,
  onChange,
  schema,
  label,
  describedBy,
  invalid,
}: {
  value: string;
  onChange: (text: string) => void;
  schema: object;
  label: string;
  describedBy?: string;
  /** The text is not arguments (said in `describedBy`). */
  invalid: boolean;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const attributes = useRef(new Compartment());
  // The latest callback, read by the editor's listener (made once).
  const changed = useRef(onChange);
  useEffect(() => {
    changed.current = onChange;
  }, [onChange]);

  useEffect(() => {
    if (!host.current) return;
    const parseLint = jsonParseLinter();
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          lineNumbers(),
          history(),
          indentOnInput(),
          bracketMatching(),
          closeBrackets(),
          json(),
          syntaxHighlighting(highlight),
          autocompletion({ override: [schemaCompletion(schema)], icons: false }),
          linter(
            (v): Diagnostic[] => {
              const syntax = parseLint(v);
              return syntax.length > 0 ? syntax : schemaDiagnostics(schema, v.state);
            },
            { delay: 250 },
          ),
          keymap.of([
            ...closeBracketsKeymap,
            ...defaultKeymap,
            ...historyKeymap,
            ...completionKeymap,
            ...lintKeymap,
          ]),
          EditorView.lineWrapping,
          attributes.current.of(contentAttributes(label, describedBy, invalid)),
          EditorView.updateListener.of((update: ViewUpdate) => {
            if (update.docChanged) changed.current(update.state.doc.toString());
          }),
          theme,
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // The editor is made once per schema; `value` follows below without remaking it.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [schema, label, describedBy]);

  useEffect(() => {
    view.current?.dispatch({
      effects: attributes.current.reconfigure(contentAttributes(label, describedBy, invalid)),
    });
  }, [label, describedBy, invalid]);

  // Arguments set from outside (a preset, the history, the form) replace the text.
  useEffect(() => {
    const editor = view.current;
    if (editor && editor.state.doc.toString() !== value) {
      editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: value } });
    }
  }, [value]);

  return <div ref={host} className="json-editor" />;
}

function contentAttributes(label: string, describedBy: string | undefined, invalid: boolean) {
  return EditorView.contentAttributes.of({
    "aria-label": label,
    "aria-invalid": String(invalid),
    ...(describedBy ? { "aria-describedby": describedBy } : {}),
    spellcheck: "false",
  });
}
