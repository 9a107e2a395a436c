import { syntaxTree } from "@codemirror/language";
import type { EditorState } from "@codemirror/state";
import type { SyntaxNode } from "@lezer/common";
import type { Step } from "./schemaAt";

/** Where the cursor is in a JSON document, for completion. */
export interface Place {
  /** A key of the object at `path`, or a value at `path`. */
  kind: "key" | "value";
  path: Step[];
  /** The keys the object already has (for `key`). */
  present: string[];
}

const VALUES = new Set(["Object", "Array", "String", "Number", "True", "False", "Null"]);

/**
 * What is being typed at `pos` (which starts the word being typed: after an opening quote or
 * at a letter), worked out from the text before it and the syntax tree — the document is
 * usually unfinished while someone types, so the tree is read only for its containers.
 */
export function placeAt(state: EditorState, pos: number): Place | null {
  const before = state.doc.sliceString(Math.max(0, pos - 2000), pos);
  const last = /\S(?=\s*$)/.exec(before)?.[0];
  const container = containerAt(state, pos);
  if (!container) return null;
  const path = pathTo(container, state);
  if (container.name === "Object") {
    if (last === "{" || last === ",")
      return { kind: "key", path, present: keysOf(container, state, pos) };
    const key = /"((?:[^"\\]|\\.)*)"\s*:\s*$/.exec(before)?.[1];
    if (last === ":" && key !== undefined)
      return { kind: "value", path: [...path, unescape(key)], present: [] };
    return null;
  }
  if (last === "[" || last === ",") {
    let index = 0;
    for (let c = container.firstChild; c && c.to <= pos; c = c.nextSibling)
      if (VALUES.has(c.name)) index++;
    return { kind: "value", path: [...path, index], present: [] };
  }
  return null;
}

/** The innermost object or array that `pos` is inside (unclosed ones included). */
function containerAt(state: EditorState, pos: number): SyntaxNode | null {
  let node: SyntaxNode | null = syntaxTree(state).resolveInner(pos, -1);
  for (; node; node = node.parent) {
    if ((node.name === "Object" || node.name === "Array") && node.from < pos) {
      const closed =
        state.doc.sliceString(node.to - 1, node.to) === (node.name === "Object" ? "}" : "]");
      if (pos < node.to || !closed) return node;
    }
  }
  return null;
}

/** The keys and indices from the document's root to `node`. */
export function pathTo(node: SyntaxNode, state: EditorState): Step[] {
  const path: Step[] = [];
  let child = node;
  for (let parent = node.parent; parent; child = parent, parent = parent.parent) {
    if (parent.name === "Property") {
      const name = parent.getChild("PropertyName");
      if (name && name.from !== child.from) path.unshift(nameOf(name, state));
    } else if (parent.name === "Array") {
      let index = 0;
      for (let c = parent.firstChild; c && c.from < child.from; c = c.nextSibling)
        if (VALUES.has(c.name)) index++;
      path.unshift(index);
    }
  }
  return path;
}

/** The value node at `path` (or the deepest one found on the way), for marking a problem. */
export function nodeAt(state: EditorState, path: string[]): SyntaxNode | null {
  let node = syntaxTree(state).topNode.firstChild;
  while (node && !VALUES.has(node.name)) node = node.nextSibling;
  for (const step of path) {
    if (!node) return null;
    let next: SyntaxNode | null = null;
    if (node.name === "Object") {
      for (const property of node.getChildren("Property")) {
        const name = property.getChild("PropertyName");
        if (name && nameOf(name, state) === step) {
          next =
            property.lastChild && VALUES.has(property.lastChild.name) ? property.lastChild : name;
          break;
        }
      }
    } else if (node.name === "Array") {
      let index = Number(step);
      for (let c = node.firstChild; c; c = c.nextSibling) {
        if (VALUES.has(c.name) && index-- === 0) {
          next = c;
          break;
        }
      }
    }
    if (!next) return node;
    node = next;
  }
  return node;
}

function keysOf(object: SyntaxNode, state: EditorState, pos: number): string[] {
  const keys: string[] = [];
  for (const property of object.getChildren("Property")) {
    const name = property.getChild("PropertyName");
    // The key being typed is not yet one the object has.
    if (name && !(name.from <= pos && pos <= name.to)) keys.push(nameOf(name, state));
  }
  return keys;
}

function nameOf(name: SyntaxNode, state: EditorState): string {
  return unescape(state.doc.sliceString(name.from + 1, name.to - 1));
}

function unescape(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
