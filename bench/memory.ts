// The memory an operator sees: the real `vigil serve` in a child process, its resident set (RSS,
// from /proc) read after start-up and an idle period, then again after an ingest load and another
// idle period, with the peak. On the embedded default (PGlite on a temporary DATA_DIR), and for
// scale on PostgreSQL (BENCH_DATABASE_URL or TEST_DATABASE_URL, default the local server; the bench
// creates its own database there and drops it), where the database's memory is another process's.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { freePort } from "../test/alertmanager-process.ts";

const BIN = new URL("../bin/vigil.js", import.meta.url).pathname;
const KEY = "bench-bootstrap-key-0123456789";
const ALERTS = Number(process.env.BENCH_MEMORY_ALERTS ?? 20_000);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 15_000);
const CONCURRENCY = 8;
const READY_DEADLINE_MS = 120_000;
const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres";
/** `pglite,postgres` by default; BENCH_ENGINES=pglite measures the embedded default alone. */
const ENGINES = (process.env.BENCH_ENGINES ?? "pglite,postgres").split(",").map((name) => name.trim());

/** Resident set now and at its peak, in MB, from the kernel's view of the process. */
function memoryOf(child: ChildProcess): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
}

function alertmanagerBody(first: number, size: number): string {
  const alerts = Array.from({ length: size }, (_, k) => {
    const n = first + k;
    return {
      status: "firing",
      labels: { alertname: "DiskFilling", service: `svc-${n % 97}`, instance: `host-${n}:9100` },
      annotations: { summary: `disk above 90% on host-${n}` },
      startsAt: new Date().toISOString(),
      endsAt: "0001-01-01T00:00:00Z",
      fingerprint: n.toString(16).padStart(16, "0"),
    };
  });
  return JSON.stringify({ version: "4", status: "firing", receiver: "vigil", alerts });
}

/** Posts ALERTS alerts, 50 to a body (the tail one by one), CONCURRENCY deliveries in flight. */
async function ingest(base: string): Promise<number> {
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const registered = await fetch(`${base}/app/sre/api/v1/alerts/webhook`, {
    method: "POST",
    headers,
    body: JSON.stringify({ source: "alertmanager", integration: "memory-bench" }),
  });
  if (registered.status !== 201)
    throw new Error(`registration: ${registered.status} ${await registered.text()}`);
  const url = `${base}/platform${((await registered.json()) as { platform_webhook_url: string }).platform_webhook_url}`;
  const bodies: string[] = [];
  const single = Math.min(ALERTS, 1_000);
  for (let n = 0; n < ALERTS - single; n += 50)
    bodies.push(alertmanagerBody(n, Math.min(50, ALERTS - single - n)));
  for (let n = ALERTS - single; n < ALERTS; n += 1) bodies.push(alertmanagerBody(n, 1));
  let next = 0;
  let accepted = 0;
  async function sender() {
    while (next < bodies.length) {
      const body = bodies[next++];
      const reply = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      if (reply.status !== 202) throw new Error(`delivery: ${reply.status} ${await reply.text()}`);
      accepted += ((await reply.json()) as { alerts: unknown[] }).alerts.length;
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, sender));
  return accepted;
}

/** What the process says of its own memory (/metrics), in MB: the V8 heap, and memory outside it. */
async function breakdown(base: string): Promise<{ heap: number; external: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const mb = (name: string) => Number(new RegExp(`^vigil_${name} (\\S+)`, "m").exec(text)?.[1]) / 2 ** 20;
  return { heap: mb("nodejs_heap_size_total_bytes"), external: mb("nodejs_external_memory_bytes") };
}

interface Sample {
  rss: number;
  heap: number;
  external: number;
}

interface Figures {
  engine: string;
  idle: Sample;
  loaded: Sample;
  peak: number;
  accepted: number;
  /** bin/vigil.js ran the TypeScript sources, the bundle being older than them: not what users run. */
  fromSources: boolean;
}

async function measure(engine: string, env: Record<string, string>): Promise<Figures> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-memory-"));
  const child = spawn(process.execPath, [BIN, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATA_DIR: dataDir,
      PORT: String(port),
      LOG_LEVEL: "warn",
      BOOTSTRAP_API_KEY: KEY,
      SECRET_KEY: "bench-secret-key",
      // What an operator may set for the process: the cache size, V8 options (NODE_OPTIONS).
      ...(process.env.PGLITE_CACHE_MB ? { PGLITE_CACHE_MB: process.env.PGLITE_CACHE_MB } : {}),
      ...(process.env.NODE_OPTIONS ? { NODE_OPTIONS: process.env.NODE_OPTIONS } : {}),
      ...env,
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
  const base = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + READY_DEADLINE_MS;
    while (
      (await fetch(`${base}/readyz`).then(
        (res) => res.status,
        () => 0,
      )) !== 200
    ) {
      if (child.exitCode !== null) throw new Error(`vigil exited with ${child.exitCode}\n${log}`);
      if (Date.now() > deadline) throw new Error(`not ready in ${READY_DEADLINE_MS} ms\n${log}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const idle = { rss: memoryOf(child).rssMb, ...(await breakdown(base)) };
    const accepted = await ingest(base);
    // Idle again: the workers classify what was ingested, then the process rests.
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
    const after = memoryOf(child);
    const loaded = { rss: after.rssMb, ...(await breakdown(base)) };
    const fromSources = log.includes("running the TypeScript sources");
    return { engine, idle, loaded, peak: after.peakMb, accepted, fromSources };
  } finally {
    child.kill("SIGTERM");
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A database of its own on the PostgreSQL server, or null when none answers. */
async function postgresDatabase(): Promise<{ url: string; drop(): Promise<void> } | null> {
  const serverUrl =
    process.env.BENCH_DATABASE_URL?.trim() || process.env.TEST_DATABASE_URL?.trim() || DEFAULT_POSTGRES;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  try {
    await admin.connect();
  } catch (err) {
    console.log(`  PostgreSQL skipped: unreachable (${(err as Error).message})`);
    return null;
  }
  const name = `vigil_bench_${randomBytes(6).toString("hex")}`;
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

export async function runMemoryBench(): Promise<void> {
  console.log(
    `memory: RSS of \`vigil serve\` (MB) after start-up and ${IDLE_MS / 1000} s idle, then after ${ALERTS} alerts and ${IDLE_MS / 1000} s idle`,
  );
  const results: Figures[] = [];
  if (ENGINES.includes("pglite")) results.push(await measure("embedded (PGlite)", {}));
  const postgres = ENGINES.includes("postgres") ? await postgresDatabase() : null;
  if (postgres) {
    try {
      results.push(await measure("PostgreSQL (Vigil's process only)", { DATABASE_URL: postgres.url }));
    } finally {
      await postgres.drop();
    }
  }
  const shown = (sample: Sample) =>
    `${sample.rss.toFixed(0)} (${sample.heap.toFixed(0)} + ${sample.external.toFixed(0)})`;
  console.log("  RSS (V8 heap + external: PGlite's WebAssembly memory is external)");
  console.log("  | engine | idle | after ingest, idle | peak RSS | alerts accepted |");
  console.log("  |---|---:|---:|---:|---:|");
  for (const result of results) {
    console.log(
      `  | ${result.engine} | ${shown(result.idle)} | ${shown(result.loaded)} | ${result.peak.toFixed(0)} | ${result.accepted} |`,
    );
  }
  if (results.some((result) => result.fromSources)) {
    console.log(
      "  note: dist/vigil.js is older than the sources, so Vigil ran them through tsx, which holds more memory than the bundle `npm start` runs: `npm run build` first",
    );
  }
}
