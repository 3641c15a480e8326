// Once per test run: the migrated template (`npm run build` prepares it) as one in-memory image, which
// each test file's embedded database starts from. Creating an empty cluster costs every file several
// seconds of CPU; loading the image costs a fraction of that. Without a usable template the files'
// databases start empty and migrate from nothing, as before.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import type { TestProject } from "vitest/node";
import { TEMPLATE_STAMP, templateUnusable } from "../src/core/db/pglite-template.ts";
import { PGLITE_TEMPLATE_DIR } from "../src/core/package-files.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** A file holding the template's image (PGlite's dumpDataDir), or "" when there is none. */
    pgliteImage: string;
  }
}

export default async function setup(project: TestProject) {
  const template = fileURLToPath(PGLITE_TEMPLATE_DIR);
  const work = mkdtempSync(join(tmpdir(), "vigil-test-image-"));
  let image = "";
  if (!templateUnusable(template)) {
    // Opened from a copy: starting a cluster writes to its files, and the template stays as built.
    const copy = join(work, "pglite");
    cpSync(template, copy, { recursive: true, filter: (source) => !source.endsWith(TEMPLATE_STAMP) });
    const client = await PGlite.create(copy, { extensions: { pg_trgm } });
    const dump = await client.dumpDataDir("none");
    await client.close();
    rmSync(copy, { recursive: true, force: true });
    image = join(work, "template.tar");
    writeFileSync(image, Buffer.from(await dump.arrayBuffer()));
  }
  project.provide("pgliteImage", image);
  return () => rmSync(work, { recursive: true, force: true });
}
