// How deep a parsed JSON value nests. Deeper input would overflow the stack of every recursive reader
// on its way (JSON.stringify into a jsonb parameter, templates, the storable-text walk): the API
// refuses it, and the webhook trigger takes it as text.

/** Objects and arrays within one another, counting the outermost as 1. */
export const MAX_JSON_DEPTH = 256;

interface Visit {
  value: unknown;
  depth: number;
  key: string;
  parent: Visit | null;
}

/**
 * The path (keys and indexes from the top) to the first object or array nested deeper than
 * MAX_JSON_DEPTH, or null when none is. Read without recursion, which the input would overflow.
 */
export function tooDeepAt(value: unknown): string[] | null {
  const stack: Visit[] = [{ value, depth: 1, key: "", parent: null }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    if (visit.value === null || typeof visit.value !== "object") continue;
    if (visit.depth > MAX_JSON_DEPTH) return pathOf(visit);
    for (const [key, child] of Object.entries(visit.value)) {
      stack.push({ value: child, depth: visit.depth + 1, key, parent: visit });
    }
  }
  return null;
}

function pathOf(visit: Visit): string[] {
  const path: string[] = [];
  for (let at: Visit | null = visit; at?.parent; at = at.parent) path.push(at.key);
  return path.reverse();
}
