#!/usr/bin/env node
// Runs the bundle that `npm run build` (and `npm install`) makes, dist/vigil.js, when it is at
// least as new as every source file and the installed packages: loading it takes a fraction of
// compiling the TypeScript sources at start. Otherwise it runs the sources through tsx's loader and
// says why on stderr. VIGIL_FROM_SOURCE=1 always runs the sources.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = new URL("../", import.meta.url);
const bundle = new URL("dist/vigil.js", root);

/** Why the bundle cannot run, or null when it can. */
function bundleUnusable() {
  let built;
  try {
    built = statSync(bundle).mtimeMs;
  } catch {
    return "dist/vigil.js is missing (`npm run build` makes it)";
  }
  // The bundle holds the packages too: an install or upgrade since the build makes it stale as well.
  const installed = new URL("node_modules/.package-lock.json", root);
  try {
    if (statSync(installed).mtimeMs > built) {
      return "dist/vigil.js is older than the installed packages (`npm run build` updates it)";
    }
  } catch {
    // No record of the install: only the sources count.
  }
  const src = new URL("src/", root);
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name.endsWith(".test.ts")) continue;
    const path = join(entry.parentPath ?? entry.path, entry.name);
    if (statSync(path).mtimeMs > built) {
      return `dist/vigil.js is older than ${path.slice(root.pathname.length)} (\`npm run build\` updates it)`;
    }
  }
  return null;
}

const why = process.env.VIGIL_FROM_SOURCE === "1" ? null : bundleUnusable();
if (process.env.VIGIL_FROM_SOURCE !== "1" && why === null) {
  await import(bundle.href);
} else {
  if (why) process.stderr.write(`vigil: running the TypeScript sources: ${why}\n`);
  const { register } = await import("tsx/esm/api");
  register();
  await import("../src/main.ts");
}
