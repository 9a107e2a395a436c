/** One difference between two JSON values, at a JSON pointer. */
export interface Difference {
  pointer: string;
  change: "added" | "removed" | "changed";
  left?: unknown;
  right?: unknown;
}

function escape(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Every leaf-level difference from `left` to `right`, in document order. */
export function jsonDiff(left: unknown, right: unknown, pointer = ""): Difference[] {
  if (Object.is(left, right)) return [];
  if (isObject(left) && isObject(right)) {
    const keys = [...new Set([...Object.keys(left), ...Object.keys(right)])];
    return keys.flatMap((key) => {
      const path = `${pointer}/${escape(key)}`;
      if (!(key in right)) return [{ pointer: path, change: "removed" as const, left: left[key] }];
      if (!(key in left)) return [{ pointer: path, change: "added" as const, right: right[key] }];
      return jsonDiff(left[key], right[key], path);
    });
  }
  if (Array.isArray(left) && Array.isArray(right)) {
    const out: Difference[] = [];
    for (let i = 0; i < Math.max(left.length, right.length); i++) {
      const path = `${pointer}/${i}`;
      if (i >= right.length) out.push({ pointer: path, change: "removed", left: left[i] });
      else if (i >= left.length) out.push({ pointer: path, change: "added", right: right[i] });
      else out.push(...jsonDiff(left[i], right[i], path));
    }
    return out;
  }
  if (JSON.stringify(left) === JSON.stringify(right)) return [];
  return [{ pointer: pointer || "/", change: "changed", left, right }];
}
