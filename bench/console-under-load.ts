// The console under ingest load, on PostgreSQL (BENCH_DATABASE_URL or TEST_DATABASE_URL, default
// postgres://postgres@127.0.0.1:5432/postgres; the bench creates its own database and drops it).
// A Vigil listening on loopback with its workers running, as `vigil` runs by default. Two figures,
// each measured idle and then while the ingest bench's sender (its own thread) keeps 16 deliveries
// in flight:
//   - listAlerts: GET /app/sre/api/v1/alerts (page_size 20, the console's first page), one request
//     at a time, latency as the client sees it;
//   - immediate classification: a one-alert delivery to a registration with classify_mode
//     immediate every SAMPLE_EVERY_MS; from its 202 to the moment its alert reads
//     analysis_status completed (read straight from the database every 20 ms).
// The load itself goes to a registration with the default settings (batch classification; critical
// alerts, a third of them, bypass the batch and are classified at once).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import { startVigil, type Vigil } from "../src/start.ts";
import { type DriveResult, post, startLoadGenerator } from "./ingest-client.ts";
import { percentile } from "./percentile.ts";

const BOOTSTRAP_KEY = "bench-bootstrap-key-0123456789";
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const LOAD_MS = Number(process.env.BENCH_LOAD_MS ?? 20_000);
const WARM_UP_REQUESTS = Number(process.env.BENCH_WARM_UP ?? 3_000);
const SAMPLE_EVERY_MS = 250;
const IDLE_LISTS = 100;
const IDLE_SAMPLES = 20;
/** A sample not classified this long after the load ends counts as this long. */
const SAMPLE_GIVE_UP_MS = 30_000;
const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function get(agent: Agent, port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { agent, host: "127.0.0.1", port, path, headers: { authorization: `Bearer ${BOOTSTRAP_KEY}` } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** One firing Alertmanager webhook body with one alert of a fingerprint never used before. */
function sampleBody(fingerprint: string): string {
  return JSON.stringify({
    receiver: "vigil",
    status: "firing",
    alerts: [
      {
        status: "firing",
        labels: { alertname: "CheckoutLatency", service: "checkout", severity: "warning", env: "prod" },
        annotations: { summary: "checkout p99 above 2s" },
        startsAt: new Date(Date.now() - 60_000).toISOString(),
        endsAt: "0001-01-01T00:00:00Z",
        generatorURL: "http://prometheus.example:9090/graph",
        fingerprint,
      },
    ],
    groupLabels: { alertname: "CheckoutLatency" },
    commonLabels: {},
    commonAnnotations: {},
    externalURL: "http://alertmanager.example:9093",
    version: "4",
    groupKey: `{}:{alertname="CheckoutLatency",f="${fingerprint}"}`,
    truncatedAlerts: 0,
  });
}

interface Bench {
  port: number;
  agent: Agent;
  loadPath: string;
  samplePath: string;
  admin: pg.Client;
}

/** listAlerts, one at a time, until `until()` says stop (or `count` requests): latencies in ms. */
async function readLists(bench: Bench, until: () => boolean, count = Number.POSITIVE_INFINITY) {
  const latencies: number[] = [];
  let failures = 0;
  while (!until() && latencies.length + failures < count) {
    const started = performance.now();
    const reply = await get(bench.agent, bench.port, "/app/sre/api/v1/alerts?page_size=20");
    if (reply.status !== 200) failures += 1;
    else latencies.push(performance.now() - started);
  }
  return { latencies, failures };
}

/** Sends one sample every SAMPLE_EVERY_MS until `until()`; answers each sample's ms from 202 to completed. */
async function sampleClassification(bench: Bench, until: () => boolean, count = Number.POSITIVE_INFINITY) {
  const pending = new Map<string, number>();
  const latencies: number[] = [];
  let failures = 0;
  let sent = 0;
  let sending = true;
  const poller = (async () => {
    while (sending || pending.size > 0) {
      if (pending.size > 0) {
        const { rows } = await bench.admin.query(
          "select external_uid from alerts where external_uid = any($1) and analysis_status = 'completed'",
          [[...pending.keys()]],
        );
        const seenAt = performance.now();
        for (const row of rows as { external_uid: string }[]) {
          latencies.push(seenAt - (pending.get(row.external_uid) as number));
          pending.delete(row.external_uid);
        }
        if (!sending) {
          for (const [uid, at] of pending) {
            if (seenAt - at > SAMPLE_GIVE_UP_MS) {
              latencies.push(SAMPLE_GIVE_UP_MS);
              pending.delete(uid);
            }
          }
        }
      }
      await sleep(20);
    }
  })();
  while (!until() && sent < count) {
    const next = performance.now() + SAMPLE_EVERY_MS;
    const fingerprint = `s${randomBytes(7).toString("hex")}0`;
    const reply = await post(bench.agent, bench.port, bench.samplePath, sampleBody(fingerprint));
    if (reply.status === 202) pending.set(fingerprint, performance.now());
    else failures += 1;
    sent += 1;
    await sleep(Math.max(0, next - performance.now()));
  }
  sending = false;
  await poller;
  return { latencies, failures };
}

async function register(bench: Pick<Bench, "agent" | "port">, body: object): Promise<string> {
  const reply = await post(bench.agent, bench.port, "/app/sre/api/v1/alerts/webhook", JSON.stringify(body), {
    authorization: `Bearer ${BOOTSTRAP_KEY}`,
  });
  if (reply.status !== 201) throw new Error(`registration failed: ${reply.status} ${reply.body}`);
  return `/platform${(JSON.parse(reply.body) as { platform_webhook_url: string }).platform_webhook_url}`;
}

/** Waits until no classification job is due (the warm-up's backlog), at most two minutes. */
async function drainClassification(admin: pg.Client): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const { rows } = await admin.query(
      "select count(*)::int as n from pgboss.job where name = 'alerts.classify' and state in ('created', 'retry', 'active') and start_after <= now()",
    );
    if ((rows[0] as { n: number }).n === 0) return;
    await sleep(250);
  }
}

const ms = (value: number) =>
  Number.isNaN(value) ? "-" : value >= SAMPLE_GIVE_UP_MS ? `>${SAMPLE_GIVE_UP_MS}` : value.toFixed(0);

export async function runConsoleUnderLoadBench(): Promise<void> {
  const serverUrl =
    process.env.BENCH_DATABASE_URL?.trim() || process.env.TEST_DATABASE_URL?.trim() || DEFAULT_POSTGRES;
  const server = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 });
  await server.connect();
  const name = `vigil_bench_${randomBytes(6).toString("hex")}`;
  await server.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  const admin = new pg.Client({ connectionString: url.toString() });
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const sender = startLoadGenerator();
  let vigil: Vigil | null = null;
  try {
    vigil = await startVigil(
      loadConfig(
        {},
        {
          dataDir,
          databaseUrl: url.toString(),
          logLevel: (process.env.BENCH_LOG_LEVEL ?? "silent") as "silent",
          secretKey: "bench-secret-key",
          bootstrapApiKey: BOOTSTRAP_KEY,
        },
      ),
    );
    await vigil.app.listen({ port: 0, host: "127.0.0.1" });
    await admin.connect();
    const address = vigil.app.server.address();
    if (!address || typeof address !== "object") throw new Error("vigil is not listening");
    const port = address.port;
    const loadPath = await register({ agent, port }, { source: "alertmanager", integration: "bench" });
    const samplePath = await register(
      { agent, port },
      { source: "alertmanager", integration: "sample", classify_mode: "immediate" },
    );
    const bench: Bench = { port, agent, loadPath, samplePath, admin };
    const drive = { port, path: loadPath, concurrency: CONCURRENCY, alertsPerBody: 1, replay: false };

    console.log(
      `console-under-load bench: PostgreSQL, ${CONCURRENCY} one-alert deliveries in flight for ${LOAD_MS / 1000}s; ` +
        `listAlerts one at a time; an immediate-classification sample every ${SAMPLE_EVERY_MS} ms`,
    );
    // Warm-up (JIT, pool, plan caches; a table of a few thousand alerts): not measured.
    await sender.run({ ...drive, maxRequests: WARM_UP_REQUESTS, durationMs: 60_000, prefix: "e" });
    await drainClassification(admin);

    const never = () => false;
    // How late Vigil's event loop (the bench shares it) runs what is ready: a request waits that long
    // before its handler runs, and again at each query it awaits.
    const idleLoop = monitorEventLoopDelay({ resolution: 10 });
    idleLoop.enable();
    const idleLists = await readLists(bench, never, IDLE_LISTS);
    const idleSamples = await sampleClassification(bench, never, IDLE_SAMPLES);
    idleLoop.disable();
    const busyLoop = monitorEventLoopDelay({ resolution: 10 });
    busyLoop.enable();

    let loadDone = false;
    const load = sender
      .run({ ...drive, maxRequests: 1_000_000, durationMs: LOAD_MS, prefix: "a" })
      .finally(() => {
        loadDone = true;
      });
    const stopped = () => loadDone;
    const [ingest, lists, samples] = (await Promise.all([
      load,
      readLists(bench, stopped),
      sampleClassification(bench, stopped),
    ])) as [
      DriveResult,
      Awaited<ReturnType<typeof readLists>>,
      Awaited<ReturnType<typeof sampleClassification>>,
    ];
    busyLoop.disable();

    const rows = [
      ["", "n", "p50 ms", "p99 ms", "max ms"],
      ["listAlerts, idle", ...figures(idleLists.latencies)],
      ["listAlerts, under ingest", ...figures(lists.latencies)],
      ["classification, idle", ...figures(idleSamples.latencies)],
      ["classification, under ingest", ...figures(samples.latencies)],
      ["event loop delay, idle", ...loopFigures(idleLoop)],
      ["event loop delay, under ingest", ...loopFigures(busyLoop)],
    ];
    console.log("");
    for (const row of rows) {
      console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(30) : cell.padStart(7))).join("  "));
    }
    console.log(
      `\ningest while measured: ${ingest.deliveries} deliveries in ${ingest.seconds.toFixed(1)} s ` +
        `(${(ingest.deliveries / ingest.seconds).toFixed(0)}/s), 202 p50 ${ingest.p50.toFixed(1)} ms, ` +
        `p99 ${ingest.p99.toFixed(1)} ms, failures ${ingest.failures}`,
    );
    const failures = idleLists.failures + lists.failures + idleSamples.failures + samples.failures;
    if (failures > 0 || ingest.failures > 0) {
      console.log(`FAILED requests: ${failures} reads or samples, ${ingest.failures} deliveries`);
      process.exitCode = 1;
    }
  } finally {
    agent.destroy();
    await sender.stop();
    await vigil?.stop();
    await admin.end().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    await server.query(`drop database if exists ${name} with (force)`);
    await server.end();
  }
}

function loopFigures(delay: ReturnType<typeof monitorEventLoopDelay>): string[] {
  const at = (value: number) => ms(value / 1e6);
  return ["-", at(delay.percentile(50)), at(delay.percentile(99)), at(delay.max)];
}

function figures(latencies: number[]): string[] {
  return [
    String(latencies.length),
    ms(percentile(latencies, 0.5)),
    ms(percentile(latencies, 0.99)),
    ms(latencies.length ? Math.max(...latencies) : Number.NaN),
  ];
}
