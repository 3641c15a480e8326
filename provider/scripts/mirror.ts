// Publishes provider builds into a filesystem mirror (OpenTofu's unpacked layout
// HOST/NAMESPACE/TYPE/VERSION/OS_ARCH/terraform-provider-TYPE_vVERSION):
// `node --import tsx provider/scripts/mirror.ts <mirror-dir> [version ...]`, by default 0.1.26
// (svc_app only) and 0.1.27 (both resources). A CLI configuration with
// `provider_installation { filesystem_mirror { path = "<mirror-dir>" } }` then installs them offline.
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildProvider } from "./build.ts";

export const PUBLISHED_VERSIONS = ["0.1.26", "0.1.27"];
export const REGISTRY_HOST = "registry.opentofu.org";

function platform(): string {
  const os = process.platform === "win32" ? "windows" : process.platform;
  const arch = { x64: "amd64", arm64: "arm64", ia32: "386" }[process.arch as string] ?? process.arch;
  return `${os}_${arch}`;
}

export async function publishToMirror(mirrorDir: string, versions = PUBLISHED_VERSIONS): Promise<void> {
  for (const version of versions) {
    const folder = join(resolve(mirrorDir), REGISTRY_HOST, "vigil", "svc", version, platform());
    await buildProvider(join(folder, `terraform-provider-svc_v${version}`), version);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [mirrorDir, ...versions] = process.argv.slice(2);
  if (!mirrorDir) {
    process.stderr.write("usage: mirror.ts <mirror-dir> [version ...]\n");
    process.exit(2);
  }
  await publishToMirror(mirrorDir, versions.length > 0 ? versions : undefined);
}
