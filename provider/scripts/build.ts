// Bundles the provider into one executable file (esbuild): `node --import tsx provider/scripts/build.ts
// <out-file> [version]`. One file loads in a fraction of the time node_modules would take, which
// matters because OpenTofu starts the provider several times per command.
import { chmodSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { LATEST_VERSION } from "../src/versions.ts";

const here = dirname(fileURLToPath(import.meta.url));

export async function buildProvider(outFile: string, version = LATEST_VERSION): Promise<string> {
  const target = resolve(outFile);
  mkdirSync(dirname(target), { recursive: true });
  await build({
    entryPoints: [resolve(here, "../src/main.ts")],
    outfile: target,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
    define: { __PROVIDER_VERSION__: JSON.stringify(version) },
    banner: { js: "#!/usr/bin/env node" },
  });
  chmodSync(target, 0o755);
  return target;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [outFile, version] = process.argv.slice(2);
  if (!outFile) {
    process.stderr.write("usage: build.ts <out-file> [version]\n");
    process.exit(2);
  }
  await buildProvider(outFile, version);
}
