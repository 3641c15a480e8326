// From `vigil serve` to the first /readyz 200, as an operator starts it: the real command in a child
// process on the embedded default, 5 times on a fresh DATA_DIR (which starts as a copy of the
// migrated template) and 5 times restarting on the same one. Beside each median it prints the same
// starts from the TypeScript sources through tsx (VIGIL_FROM_SOURCE=1, no template: a fresh
// DATA_DIR is created and migrated from nothing), measured in the same run, so the ratio means
// something on a loaded machine. It also prints the CPU each start used until ready, which load
// changes less than the wall clock.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/alertmanager-process.ts";
import { cpuSeconds } from "./process-cpu.ts";

const BIN = new URL("../bin/vigil.js", import.meta.url).pathname;
const RUNS = Number(process.env.BENCH_STARTUP_RUNS ?? 5);
const DEADLINE_MS = 120_000;

interface Start {
  seconds: number;
  cpuSeconds: number | null;
  log: string;
}

async function readyStatus(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

async function startOnce(dataDir: string, fromSource: boolean): Promise<Start> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: "info",
      ...(fromSource ? { VIGIL_FROM_SOURCE: "1" } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  child.stdout?.on("data", (chunk) => {
    log += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    log += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  try {
    while ((await readyStatus(`http://127.0.0.1:${port}/readyz`)) !== 200) {
      if (child.exitCode !== null) throw new Error(`vigil exited with ${child.exitCode}\n${log}`);
      if (performance.now() - started > DEADLINE_MS)
        throw new Error(`not ready in ${DEADLINE_MS} ms\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return {
      seconds: (performance.now() - started) / 1000,
      cpuSeconds: child.pid === undefined ? null : cpuSeconds(child.pid),
      log,
    };
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

interface Figures {
  fresh: Start[];
  restart: Start[];
}

/** Fresh and restart starts interleaved with the baseline's, so both see the same load. */
async function measure(): Promise<{ bundle: Figures; source: Figures }> {
  const bundle: Figures = { fresh: [], restart: [] };
  const source: Figures = { fresh: [], restart: [] };
  for (let run = 0; run < RUNS; run++) {
    for (const [figures, fromSource] of [
      [bundle, false],
      [source, true],
    ] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-startup-"));
      try {
        figures.fresh.push(await startOnce(dataDir, fromSource));
        figures.restart.push(await startOnce(dataDir, fromSource));
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    }
  }
  return { bundle, source };
}

function describe(starts: Start[]): string {
  const cpu = starts.map((start) => start.cpuSeconds).filter((value) => value !== null);
  const cpuText = cpu.length === starts.length ? `, ${median(cpu).toFixed(2)} s CPU` : "";
  return `${median(starts.map((start) => start.seconds)).toFixed(2)} s${cpuText}`;
}

export async function runStartupBench(): Promise<void> {
  const fromBundle = existsSync(new URL("../dist/vigil.js", import.meta.url));
  if (!fromBundle)
    console.log("startup: no dist/vigil.js (npm run build): the first column runs the sources");
  console.log(`startup: median of ${RUNS} starts to the first /readyz 200 (wall clock, CPU of the process)`);
  const { bundle, source } = await measure();
  const ratio = (a: Start[], b: Start[]) =>
    (median(b.map((start) => start.seconds)) / median(a.map((start) => start.seconds))).toFixed(1);
  const froms = new Set(bundle.fresh.map((start) => /"from":"(\w+)"/.exec(start.log)?.[1] ?? "?"));
  console.log(`  ran from: ${[...froms].join(", ")} (baseline: source)`);
  console.log(
    `  fresh DATA_DIR   ${describe(bundle.fresh)}   baseline ${describe(source.fresh)}   (${ratio(bundle.fresh, source.fresh)}x)`,
  );
  console.log(
    `  restart          ${describe(bundle.restart)}   baseline ${describe(source.restart)}   (${ratio(bundle.restart, source.restart)}x)`,
  );
}
