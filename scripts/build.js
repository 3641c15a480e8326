// `npm run build` (also run by `npm install` through `prepare`): bundles the TypeScript sources into
// dist/vigil.js, which bin/vigil.js runs instead of compiling the sources at every start, and
// prepares dist/pglite-template, a migrated embedded database that a fresh DATA_DIR starts as a
// copy of.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("../", import.meta.url));
const dist = join(root, "dist");
const started = performance.now();
const say = (what) => console.log(`build: ${what} (${Math.round(performance.now() - started)} ms)`);

await build({
  entryPoints: [join(root, "src/main.ts")],
  outfile: join(dist, "vigil.js"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // The packages are bundled too: loading one file costs a third of resolving and loading several
  // hundred modules. Those that read their own files at run time (PGlite's WebAssembly and data,
  // Swagger UI's static pages) stay outside and load from node_modules.
  external: ["@electric-sql/pglite", "@electric-sql/pglite/*", "@fastify/swagger-ui", "pg-native"],
  // CommonJS packages inside an ES module bundle still call require().
  banner: {
    js: 'import { createRequire as vigilCreateRequire } from "node:module"; const require = vigilCreateRequire(import.meta.url);',
  },
  sourcemap: "linked",
  logLevel: "warning",
});
say("dist/vigil.js");

// The template: `vigil migrate` on an empty DATA_DIR (every migration and the job-queue tables),
// then its database directory moved into place with a stamp saying what made it.
const building = join(dist, "pglite-template.building");
const template = join(dist, "pglite-template");
rmSync(building, { recursive: true, force: true });
const migrate = spawnSync(process.execPath, [join(dist, "vigil.js"), "migrate"], {
  env: { ...process.env, DATA_DIR: building, DATABASE_URL: "", LOG_LEVEL: "warn" },
  stdio: "inherit",
});
if (migrate.status !== 0) {
  console.error(`build: \`vigil migrate\` for the database template exited with ${migrate.status}`);
  process.exit(1);
}
const pgliteMain = createRequire(import.meta.url).resolve("@electric-sql/pglite");
const stamp = {
  pglite: JSON.parse(readFileSync(join(dirname(pgliteMain), "..", "package.json"), "utf8")).version,
  migrations: readdirSync(join(root, "src/core/migrations")).filter((name) => name.endsWith(".sql")),
};
writeFileSync(join(building, "pglite", "vigil-template.json"), `${JSON.stringify(stamp, null, 2)}\n`);
rmSync(template, { recursive: true, force: true });
renameSync(join(building, "pglite"), template);
rmSync(building, { recursive: true, force: true });
say("dist/pglite-template");
