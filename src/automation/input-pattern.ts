// Input patterns (a workflow's or agent's `inputs[].pattern`) are written by users and tested on text
// from anyone who can trigger a webhook or send an Ask. They run on RE2's engine (re2js), whose time
// grows linearly with the text: with JavaScript's backtracking RegExp, `^(a+)+$` held the event
// loop, and every request with it, for 9 s on 29 characters. RE2 has no look-around and no
// back-references; a pattern using them is refused when saved.
import { RE2JS } from "re2js";

const CACHED = 500;
const compiled = new Map<string, RE2JS>();

/** The compiled pattern; throws when it is not valid RE2 syntax. */
function compile(pattern: string): RE2JS {
  let found = compiled.get(pattern);
  if (!found) {
    found = RE2JS.compile(pattern);
    if (compiled.size >= CACHED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(pattern, found);
  }
  return found;
}

/** Why `pattern` cannot be used, or null when it can. */
export function patternError(pattern: string): string | null {
  try {
    compile(pattern);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Whether `value` contains a match, as RegExp.test answers; false for a pattern that does not compile. */
export function matchesPattern(pattern: string, value: string): boolean {
  try {
    return compile(pattern).matcher(value).find();
  } catch {
    return false;
  }
}
