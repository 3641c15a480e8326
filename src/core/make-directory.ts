// `mkdir -p` that stops at the first directory it cannot create. Node's own recursive mkdir loops
// forever where the parent refuses new entries with ENOENT (a path under /proc): a DATA_DIR there
// hung the start with a busy core instead of saying what is wrong.
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";

/** Creates `path` and its missing parents; `what` names it in the error (`DATA_DIR`). */
export function makeDirectory(path: string, what: string): void {
  const missing: string[] = [];
  for (let dir = resolve(path); !existsSync(dir); dir = dirname(dir)) {
    missing.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Another process may create it at the same time.
      if (code === "EEXIST") continue;
      throw new Error(`cannot create ${what} ${path}: ${code ?? String(err)} at ${dir}`);
    }
  }
}
