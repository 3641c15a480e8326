// Files Vigil ships beside its code: the migrations, the migrated database template and the web
// console that `npm install` builds. They are found from the package root (the nearest package.json), so the
// same code finds them run from src/ by tsx and from the bundle in dist/.
import { existsSync, readdirSync, readFileSync } from "node:fs";

function packageRoot(): URL {
  let dir = new URL(".", import.meta.url);
  for (;;) {
    if (existsSync(new URL("package.json", dir))) return dir;
    const parent = new URL("..", dir);
    if (parent.href === dir.href) throw new Error(`no package.json above ${import.meta.url}`);
    dir = parent;
  }
}

const ROOT = packageRoot();

/** The version in Vigil's package.json. */
export const PACKAGE_VERSION: string = JSON.parse(
  readFileSync(new URL("package.json", ROOT), "utf8"),
).version;

export const MIGRATIONS_DIR = new URL("src/core/migrations/", ROOT);

/** The built web console (`npm run build:web`). */
export const CONSOLE_DIR_URL = new URL("dist/web/", ROOT);

/** The migration files, in the order they apply. */
export function migrationNames(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith(".sql"))
    .sort();
}

/** A PGlite data directory with every migration and the job-queue tables applied (may be absent). */
export const PGLITE_TEMPLATE_DIR = new URL("dist/pglite-template/", ROOT);
