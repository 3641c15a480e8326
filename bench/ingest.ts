// Webhook ingest through the real HTTP trigger: a Vigil listening on loopback, Alertmanager webhook
// bodies posted from this process over keep-alive connections with a bounded number in flight. Runs
// on the embedded default (PGlite on a temporary DATA_DIR: durable files) and on PostgreSQL
// (BENCH_DATABASE_URL or TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres; the
// bench creates its own database there and drops it). Scenarios: 1-alert and 50-alert bodies, new
// alerts (unique fingerprints), then the same bodies again (re-notifications). The sender runs in a
// worker thread (ingest-client.ts), so the event loop measured is the server's alone.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { type Config, loadConfig } from "../src/config.ts";
import { startVigil, type Vigil } from "../src/start.ts";
import { type DriveResult, post, startLoadGenerator } from "./ingest-client.ts";
import { startProfile, stopProfile } from "./profiler.ts";
import { installQueryCounter, queryStats, resetQueryStats } from "./query-counter.ts";

const BOOTSTRAP_KEY = "bench-bootstrap-key-0123456789";
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const SCENARIO_MS = Number(process.env.BENCH_SCENARIO_MS ?? 10_000);
/** Deliveries sent before the scenarios, unmeasured: the JIT's compiling (on the same 2 cores) is over by then. */
const WARM_UP_REQUESTS = Number(process.env.BENCH_WARM_UP ?? 3_000);
const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres";
/** `pglite,postgres` by default; BENCH_ENGINES=postgres runs one (for profiling). */
const ENGINES = (process.env.BENCH_ENGINES ?? "pglite,postgres").split(",").map((name) => name.trim());

interface Scenario {
  name: string;
  alertsPerBody: number;
  maxRequests: number;
  /** Replays the bodies of the scenario before it instead of making new ones. */
  replay: boolean;
}

const SCENARIOS: Scenario[] = [
  { name: "1-alert, new", alertsPerBody: 1, maxRequests: 15_000, replay: false },
  { name: "1-alert, re-notify", alertsPerBody: 1, maxRequests: 15_000, replay: true },
  { name: "50-alert, new", alertsPerBody: 50, maxRequests: 1_500, replay: false },
  { name: "50-alert, re-notify", alertsPerBody: 50, maxRequests: 1_500, replay: true },
].filter(
  // BENCH_SCENARIOS=50-alert runs the scenarios whose name holds one of the words (for profiling).
  (scenario) =>
    !process.env.BENCH_SCENARIOS ||
    process.env.BENCH_SCENARIOS.split(",").some((word) => scenario.name.includes(word.trim())),
);

interface Result extends DriveResult {
  engine: string;
  scenario: string;
  /** How busy the server's event loop was (the sender has its own thread). */
  loopPercent: number;
  /** PostgreSQL only: WAL written during the scenario (cluster-wide), bytes. */
  walBytes: number | null;
  queries: [string, { count: number; ms: number }][];
}

// ---- one engine ----

interface Target {
  engine: string;
  config: Config;
  /** PostgreSQL only: the current WAL position in bytes. */
  walPosition?: () => Promise<number>;
  cleanup(): Promise<void>;
}

async function pgliteTarget(): Promise<Target> {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  return {
    engine: "PGlite (files)",
    config: loadConfig(
      {},
      {
        dataDir,
        databaseUrl: null,
        logLevel: "silent",
        ...(process.env.BENCH_ROLE ? { role: process.env.BENCH_ROLE as "api" } : {}),
        secretKey: "bench-secret-key",
        bootstrapApiKey: BOOTSTRAP_KEY,
      },
    ),
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

async function postgresTarget(): Promise<Target | null> {
  const serverUrl =
    process.env.BENCH_DATABASE_URL?.trim() || process.env.TEST_DATABASE_URL?.trim() || DEFAULT_POSTGRES;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  let version = "";
  try {
    await admin.connect();
    const { rows } = await admin.query(
      "select current_setting('server_version') as v, current_setting('synchronous_commit') as s, current_setting('fsync') as f",
    );
    const row = rows[0] as { v: string; s: string; f: string };
    version = `${row.v}, synchronous_commit=${row.s}, fsync=${row.f}`;
  } catch (err) {
    await admin.end().catch(() => {});
    const shown = new URL(serverUrl);
    shown.password = "";
    console.log(`PostgreSQL skipped: ${shown} is unreachable (${(err as Error).message})`);
    return null;
  }
  const name = `vigil_bench_${randomBytes(6).toString("hex")}`;
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  return {
    engine: `PostgreSQL ${version.split(" ")[0]}`,
    config: loadConfig(
      {},
      {
        dataDir,
        databaseUrl: url.toString(),
        logLevel: "silent",
        ...(process.env.BENCH_ROLE ? { role: process.env.BENCH_ROLE as "api" } : {}),
        secretKey: "bench-secret-key",
        bootstrapApiKey: BOOTSTRAP_KEY,
      },
    ),
    async walPosition() {
      const { rows } = await admin.query("select pg_current_wal_lsn() - '0/0' as bytes");
      return Number((rows[0] as { bytes: string }).bytes);
    },
    async cleanup() {
      rmSync(dataDir, { recursive: true, force: true });
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
      console.log(`(PostgreSQL ${version})`);
    },
  };
}

async function benchEngine(target: Target): Promise<Result[]> {
  let vigil: Vigil | null = null;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const sender = startLoadGenerator();
  const results: Result[] = [];
  try {
    vigil = await startVigil(target.config);
    await vigil.app.listen({ port: 0, host: "127.0.0.1" });
    const address = vigil.app.server.address();
    if (!address || typeof address !== "object") throw new Error("vigil is not listening");
    const port = address.port;
    const registered = await post(
      agent,
      port,
      "/app/sre/api/v1/alerts/webhook",
      JSON.stringify({ source: "alertmanager", integration: "bench" }),
      { authorization: `Bearer ${BOOTSTRAP_KEY}` },
    );
    if (registered.status !== 201)
      throw new Error(`registration failed: ${registered.status} ${registered.body}`);
    const path = `/platform${(JSON.parse(registered.body) as { platform_webhook_url: string }).platform_webhook_url}`;

    // Warm-up (JIT, connection pool, plan caches) with both body sizes: not measured.
    const drive = { port, path, concurrency: CONCURRENCY, durationMs: SCENARIO_MS };
    for (const [alertsPerBody, maxRequests, prefix] of [
      [1, WARM_UP_REQUESTS, "e"],
      [50, WARM_UP_REQUESTS / 20, "f"],
    ] as const) {
      await sender.run({ ...drive, alertsPerBody, maxRequests, replay: false, prefix });
    }

    for (const scenario of SCENARIOS) {
      resetQueryStats();
      const walBefore = await target.walPosition?.();
      await startProfile();
      const loopBefore = performance.eventLoopUtilization();
      const run = await sender.run({
        ...drive,
        alertsPerBody: scenario.alertsPerBody,
        maxRequests: scenario.maxRequests,
        replay: scenario.replay,
        prefix: scenario.alertsPerBody === 1 ? "a" : "b",
      });
      const loop = performance.eventLoopUtilization(loopBefore);
      await stopProfile(`${target.engine} ${scenario.name}`);
      const walAfter = await target.walPosition?.();
      results.push({
        engine: target.engine,
        scenario: scenario.name,
        ...run,
        loopPercent: loop.utilization * 100,
        walBytes: walBefore !== undefined && walAfter !== undefined ? walAfter - walBefore : null,
        queries: queryStats(),
      });
    }
  } finally {
    agent.destroy();
    await sender.stop();
    await vigil?.stop();
    await target.cleanup();
  }
  return results;
}

// ---- report ----

function printTable(results: Result[]): void {
  const header = [
    "engine",
    "scenario",
    "deliveries",
    "alerts",
    "alerts/s",
    "deliveries/s",
    "p50 ms",
    "p99 ms",
    "loop%",
  ];
  const rows = results.map((r) => [
    r.engine,
    r.scenario,
    String(r.deliveries),
    String(r.alerts),
    (r.alerts / r.seconds).toFixed(0),
    (r.deliveries / r.seconds).toFixed(0),
    r.p50.toFixed(1),
    r.p99.toFixed(1),
    r.loopPercent.toFixed(0),
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] as string).length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row));
}

function printDetails(results: Result[]): void {
  for (const r of results) {
    const outcomes = Object.entries(r.outcomes)
      .map(([outcome, n]) => `${outcome} ${n}`)
      .join(", ");
    console.log(`${r.engine} / ${r.scenario}: outcomes ${outcomes || "none"}`);
    if (r.walBytes !== null && r.deliveries > 0) {
      console.log(`  WAL ${(r.walBytes / r.deliveries / 1024).toFixed(1)} KiB/delivery (cluster-wide)`);
    }
    if (r.failures > 0) console.log(`  FAILED deliveries: ${r.failures}, first: ${r.firstFailure}`);
    if (r.queries.length > 0 && r.deliveries > 0) {
      const total = r.queries.reduce((sum, [, q]) => sum + q.count, 0);
      const ms = r.queries.reduce((sum, [, q]) => sum + q.ms, 0);
      const parts = r.queries.map(
        ([kind, q]) => `${kind} ${(q.count / r.deliveries).toFixed(1)}x ${(q.ms / q.count).toFixed(2)}ms`,
      );
      console.log(
        `  ${(total / r.deliveries).toFixed(1)} statements/delivery, ${(ms / r.deliveries).toFixed(2)} ms of statement round trips/delivery: ${parts.join("; ")}`,
      );
    }
  }
}

export async function runIngestBench(): Promise<void> {
  installQueryCounter();
  console.log(
    `ingest bench: POST /platform/api/v1/webhooks/trigger (alertmanager), ${CONCURRENCY} in flight, ` +
      `each scenario up to ${SCENARIO_MS / 1000}s or its request count`,
  );
  const results: Result[] = [];
  if (ENGINES.includes("pglite")) results.push(...(await benchEngine(await pgliteTarget())));
  const postgres = ENGINES.includes("postgres") ? await postgresTarget() : null;
  if (postgres) results.push(...(await benchEngine(postgres)));
  console.log("");
  printTable(results);
  console.log("");
  printDetails(results);
  if (results.some((r) => r.failures > 0)) process.exitCode = 1;
}
