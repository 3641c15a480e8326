// The console's build: Preact (React's API through preact/compat, for TanStack Query), written to
// dist/web, which Vigil serves at `/` (src/web). The build prints the first page's gzipped size.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { gzipSync } from "node:zlib";
import preact from "@preact/preset-vite";
import { defineConfig, type Plugin } from "vite";

const FIRST_PAGE_BUDGET = 300 * 1024;

/** Sums what index.html loads before anything else (its scripts, styles and their static imports). */
function firstPageSize(): Plugin {
  let outDir = "";
  return {
    name: "vigil-first-page-size",
    configResolved(config) {
      outDir = resolve(config.root, config.build.outDir);
    },
    closeBundle() {
      const html = readFileSync(`${outDir}/index.html`, "utf8");
      const files = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);
      const bytes = files.reduce((sum, file) => sum + gzipSync(readFileSync(`${outDir}/${file}`)).length, 0);
      const kb = (bytes / 1024).toFixed(1);
      console.log(`first page: ${kb} KB gzipped (${files.length} files; budget 300 KB)`);
      if (bytes > FIRST_PAGE_BUDGET) throw new Error(`the first page is ${kb} KB gzipped, over 300 KB`);
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  plugins: [preact(), firstPageSize()],
  build: { outDir: "../dist/web", emptyOutDir: true, sourcemap: false, reportCompressedSize: false },
  logLevel: "warn",
});
