// A fresh embedded database starts as a copy of the template `npm run build` prepares (every
// migration and the job-queue tables applied): copying takes a fraction of a second, where creating
// the cluster and migrating it from nothing takes several. Migrations newer than the template still
// apply after the copy, as on any restart.
import { cpSync, existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { migrationNames, PGLITE_TEMPLATE_DIR } from "../package-files.ts";

/** Written beside the template's files: what it was made with. */
export interface TemplateStamp {
  pglite: string;
  migrations: string[];
}

export const TEMPLATE_STAMP = "vigil-template.json";

export function pgliteVersion(): string {
  // The package's main file sits in its dist/; its package.json one level up.
  const main = createRequire(import.meta.url).resolve("@electric-sql/pglite");
  const manifest = JSON.parse(readFileSync(join(dirname(main), "..", "package.json"), "utf8"));
  return String(manifest.version);
}

/** Why the template cannot seed a database here, or null when it can. */
export function templateUnusable(template: string): string | null {
  const stampPath = join(template, TEMPLATE_STAMP);
  if (!existsSync(stampPath)) return "no template (npm run build prepares one)";
  const stamp = JSON.parse(readFileSync(stampPath, "utf8")) as TemplateStamp;
  if (stamp.pglite !== pgliteVersion()) return `template made by PGlite ${stamp.pglite}`;
  // A template holding a migration this code does not know was made from other sources.
  const known = new Set(migrationNames());
  const foreign = stamp.migrations.find((name) => !known.has(name));
  if (foreign) return `template holds unknown migration ${foreign}`;
  return null;
}

/**
 * Copies the template into dataPath when dataPath (which exists) is empty. Returns how the database
 * came to be: "existing", "template", or the reason the template was not used (the database is then
 * created from nothing).
 */
export function seedFromTemplate(
  dataPath: string,
  template = fileURLToPath(PGLITE_TEMPLATE_DIR),
): { seeded: boolean; reason: string } {
  if (readdirSync(dataPath).length > 0) return { seeded: false, reason: "existing" };
  const why = templateUnusable(template);
  if (why) return { seeded: false, reason: why };
  // Copied aside, then renamed over the (empty) directory: an interrupted copy leaves no half database.
  const copying = `${dataPath}.copying`;
  rmSync(copying, { recursive: true, force: true });
  cpSync(template, copying, { recursive: true, filter: (source) => !source.endsWith(TEMPLATE_STAMP) });
  renameSync(copying, dataPath);
  return { seeded: true, reason: "template" };
}
