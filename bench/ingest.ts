// Webhook ingest beside Prometheus Alertmanager, in the same run and from the same load generator.
// For each Vigil engine (PostgreSQL with the API role alone, PostgreSQL with all roles in one
// process, the embedded default on PGlite files) the bench starts a fresh Alertmanager (the Debian
// package, in memory) and a fresh Vigil, each in its own process, and drives both with the same
// alerts: to Alertmanager as POST /api/v2/alerts, to Vigil as Alertmanager webhook bodies on its
// trigger (durable: the 202 comes after the commit). Scenarios alternate between the two, so both
// see the same machine. CPU per alert is read from /proc for each process (and, on PostgreSQL, for
// the backends of Vigil's database); the generator runs in the bench's own process.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import {
  type AlertmanagerProcess,
  requireAlertmanager,
  startAlertmanager,
} from "../test/alertmanager-process.ts";
import { type DriveRequest, type DriveResult, post, startLoadGenerator, type Wire } from "./ingest-client.ts";
import type { ServerMessage, ServerReply } from "./ingest-server.ts";
import { pgbenchUpsertRates } from "./pgbench-upsert.ts";
import { cpuSeconds } from "./process-cpu.ts";
import type { QueryStats } from "./query-counter.ts";
import { type RelationWal, walByRelation, walLsn } from "./wal-by-relation.ts";

const BOOTSTRAP_KEY = "bench-bootstrap-key-0123456789";
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
/** Each side, each scenario. */
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** Unmeasured deliveries before the scenarios (the JIT, pools and plan caches warm up), at most BENCH_WARM_UP_SECONDS. */
const WARM_UP_REQUESTS = Number(process.env.BENCH_WARM_UP ?? 3_000);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 10);
/** How long to wait for Vigil's background work (triage of the last scenario) before Alertmanager's turn. */
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 20);
const PGBENCH_SECONDS = Number(process.env.BENCH_PGBENCH_SECONDS ?? 5);
/** Relations shown in the WAL-by-relation line of each PostgreSQL scenario. */
const WAL_RELATIONS_SHOWN = 8;
const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres";
const SERVER_URL =
  process.env.BENCH_DATABASE_URL?.trim() || process.env.TEST_DATABASE_URL?.trim() || DEFAULT_POSTGRES;
const START_TIMEOUT_MS = 120_000;

interface Engine {
  key: string;
  label: string;
  postgres: boolean;
  role: "api" | "all";
}

/** BENCH_ENGINES=api,all,embedded (the default) runs those, in that order. */
const ENGINES: Engine[] = [
  { key: "api", label: "PostgreSQL, api role", postgres: true, role: "api" as const },
  { key: "all", label: "PostgreSQL, all roles", postgres: true, role: "all" as const },
  { key: "embedded", label: "embedded (PGlite)", postgres: false, role: "all" as const },
].filter((engine) =>
  (process.env.BENCH_ENGINES ?? "api,all,embedded")
    .split(",")
    .map((word) => word.trim())
    .includes(engine.key),
);

interface Scenario {
  name: string;
  alertsPerBody: number;
  /** Sends the bodies of the scenario before it again instead of new ones. */
  replay: boolean;
  prefix: string;
  /** Requests in flight, when not BENCH_CONCURRENCY. */
  concurrency?: number;
}

const ALL_SCENARIOS: Scenario[] = [
  // One delivery at a time on an idle server: what the group commit must not make slower.
  { name: "1-alert lone", alertsPerBody: 1, replay: false, prefix: "l", concurrency: 1 },
  { name: "1-alert new", alertsPerBody: 1, replay: false, prefix: "a" },
  { name: "1-alert repeat", alertsPerBody: 1, replay: true, prefix: "a" },
  { name: "50-alert new", alertsPerBody: 50, replay: false, prefix: "b" },
  { name: "50-alert repeat", alertsPerBody: 50, replay: true, prefix: "b" },
];
/** BENCH_SCENARIOS=50-alert runs the scenarios whose name holds one of the words (a repeat with its new). */
const SCENARIOS = ALL_SCENARIOS.filter((scenario, i) => {
  const words = process.env.BENCH_SCENARIOS?.split(",").map((word) => word.trim());
  const picked = (s: Scenario | undefined) => !words || words.some((word) => s?.name.includes(word));
  return (
    picked(scenario) || (!scenario.replay && ALL_SCENARIOS[i + 1]?.replay && picked(ALL_SCENARIOS[i + 1]))
  );
});

interface Side extends DriveResult {
  /** CPU seconds of the server process during the scenario. */
  cpu: number;
}

interface Row {
  engine: Engine;
  scenario: Scenario;
  alertmanager: Side;
  vigil: Side & {
    /** CPU seconds of the PostgreSQL backends serving Vigil's database; null on PGlite. */
    databaseCpu: number | null;
    walBytes: number | null;
    /** The WAL of Vigil's database by relation, or why it could not be read; null on PGlite. */
    walByRelation: RelationWal[] | string | null;
    /** Work the workers had left when Vigil's turn ended; null on PGlite. */
    backlog: Backlog | null;
    loopPercent: number;
    queries: [string, QueryStats][];
  };
}

// ---- the processes, and stopping them whatever happens ----

const stops = new Set<() => Promise<void>>();

async function stopAll(): Promise<void> {
  await Promise.allSettled([...stops].map((stop) => stop()));
}

function onSignal(signal: NodeJS.Signals): void {
  console.log(`\n${signal}: stopping Alertmanager and Vigil`);
  void stopAll().finally(() => process.exit(130));
}

interface VigilProcess {
  pid: number;
  port: number;
  ask(message: ServerMessage): Promise<ServerReply>;
  stop(): Promise<void>;
}

const SERVER_ENTRY = fileURLToPath(new URL("./ingest-server.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Vigil as `vigil serve` runs it, from the sources (tsx), in a child process with an IPC channel. */
async function startVigilProcess(env: Record<string, string>): Promise<VigilProcess> {
  // BENCH_NODE_FLAGS: Node flags for Vigil's process, to measure one (README.md).
  const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeFlags, "--import", "tsx", SERVER_ENTRY], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      LOG_LEVEL: "warn",
      // The profiler runs in the server's process (profiler.ts).
      ...(process.env.BENCH_PROFILE_DIR ? { BENCH_PROFILE_DIR: process.env.BENCH_PROFILE_DIR } : {}),
      // The embedded database's cache, to measure its effect (configuration.md).
      ...(process.env.PGLITE_CACHE_MB ? { PGLITE_CACHE_MB: process.env.PGLITE_CACHE_MB } : {}),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  let log = "";
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let exitCode: number | null | undefined;
  child.once("exit", (code) => {
    exitCode = code;
  });
  const next = (type: ServerReply["type"], timeoutMs: number) =>
    new Promise<ServerReply>((resolve, reject) => {
      const timer = setTimeout(
        () => done(new Error(`vigil did not answer ${type} in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onMessage = (reply: ServerReply) => {
        if (reply.type === type) done(null, reply);
      };
      const onExit = () => done(new Error(`vigil exited (code ${exitCode})`));
      function done(err: Error | null, reply?: ServerReply) {
        clearTimeout(timer);
        child.off("message", onMessage);
        child.off("exit", onExit);
        if (err) reject(new Error(`${err.message}\n--- vigil output ---\n${log}`));
        else resolve(reply as ServerReply);
      }
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  const stop = async () => {
    stops.delete(stop);
    if (exitCode !== undefined) return;
    if (child.connected) child.send({ type: "stop" } satisfies ServerMessage);
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(timer);
  };
  stops.add(stop);
  try {
    const listening = await next("listening", START_TIMEOUT_MS);
    return {
      pid: child.pid as number,
      port: (listening as { port: number }).port,
      stop,
      ask(message) {
        const reply = next(message.type === "begin" ? "begun" : "ended", 60_000);
        child.send(message);
        return reply;
      },
    };
  } catch (err) {
    child.kill("SIGKILL");
    await stop();
    throw err;
  }
}

async function startAlertmanagerProcess(): Promise<AlertmanagerProcess> {
  const am = await startAlertmanager(requireAlertmanager());
  const stop = async () => {
    stops.delete(stop);
    await am.stop();
  };
  stops.add(stop);
  return { ...am, stop };
}

/** A database of its own on the PostgreSQL server, dropped by `drop`. */
async function createDatabase(
  admin: pg.Client,
): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `vigil_bench_${randomBytes(6).toString("hex")}`;
  await admin.query(`create database ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const drop = async () => {
    stops.delete(drop);
    await admin.query(`drop database if exists ${name} with (force)`);
  };
  stops.add(drop);
  return { url: url.toString(), name, drop };
}

/** Waits until Vigil's process is nearly idle (under a tenth of a core over a second), at most SETTLE_SECONDS. */
async function settle(pid: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const before = cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = cpuSeconds(pid);
    const waited = (performance.now() - started) / 1000;
    if (before === null || after === null || after - before < 0.1 || waited >= SETTLE_SECONDS) return waited;
  }
}

/** CPU seconds of the backends connected to `database`, by pid. */
async function backendCpu(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.query("select pid from pg_stat_activity where datname = $1", [database]);
  const cpu = new Map<number, number>();
  for (const { pid } of rows as { pid: number }[]) cpu.set(pid, cpuSeconds(pid) ?? 0);
  return cpu;
}

/**
 * The CPU seconds the backends of `database` use from now until `stop`, read every half second as
 * well as at both ends: Vigil's pool closes connections idle for 10 s and opens others, and a backend
 * that ends takes its figure with it, so each counts with the last figure read while it was there.
 */
async function watchBackendCpu(admin: pg.Client, database: string): Promise<{ stop(): Promise<number> }> {
  const first = await backendCpu(admin, database);
  const last = new Map(first);
  const read = async () => {
    for (const [pid, cpu] of await backendCpu(admin, database)) last.set(pid, cpu);
  };
  let reading = Promise.resolve();
  const timer = setInterval(() => {
    reading = reading.then(read, read);
  }, 500);
  return {
    async stop() {
      clearInterval(timer);
      await reading.catch(() => {});
      await read();
      let used = 0;
      for (const [pid, cpu] of last) used += cpu - (first.get(pid) ?? 0);
      return used;
    },
  };
}

async function walPosition(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query("select pg_current_wal_lsn() - '0/0' as bytes");
  return Number((rows[0] as { bytes: string }).bytes);
}

// ---- one engine ----

async function benchEngine(
  engine: Engine,
  sender: ReturnType<typeof startLoadGenerator>,
  admin: pg.Client | null,
): Promise<Row[]> {
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  let database: Awaited<ReturnType<typeof createDatabase>> | null = null;
  let vigil: VigilProcess | null = null;
  let am: AlertmanagerProcess | null = null;
  const rows: Row[] = [];
  try {
    if (engine.postgres && admin) database = await createDatabase(admin);
    am = await startAlertmanagerProcess();
    vigil = await startVigilProcess({
      DATA_DIR: dataDir,
      VIGIL_ROLE: engine.role,
      SECRET_KEY: "bench-secret-key",
      BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      ...(database ? { DATABASE_URL: database.url } : {}),
    });
    const registered = await post(
      agent,
      vigil.port,
      "/app/sre/api/v1/alerts/webhook",
      JSON.stringify({ source: "alertmanager", integration: "bench" }),
      { authorization: `Bearer ${BOOTSTRAP_KEY}` },
    );
    if (registered.status !== 201)
      throw new Error(`registration failed: ${registered.status} ${registered.body}`);
    const webhook = (JSON.parse(registered.body) as { platform_webhook_url: string }).platform_webhook_url;
    const targets: Record<Wire, Pick<DriveRequest, "port" | "path" | "wire">> = {
      alertmanager: { port: am.port, path: "/api/v2/alerts", wire: "alertmanager" },
      vigil: { port: vigil.port, path: `/platform${webhook}`, wire: "vigil" },
    };
    const common = {
      concurrency: CONCURRENCY,
      durationMs: SECONDS * 1000,
      maxRequests: Number.MAX_SAFE_INTEGER,
    };

    for (const target of Object.values(targets)) {
      for (const [alertsPerBody, maxRequests, prefix] of [
        [1, WARM_UP_REQUESTS, "e"],
        [50, Math.ceil(WARM_UP_REQUESTS / 20), "f"],
      ] as const) {
        await sender.run({
          ...common,
          ...target,
          alertsPerBody,
          maxRequests,
          durationMs: WARM_UP_SECONDS * 1000,
          replay: false,
          prefix,
        });
      }
    }

    for (const scenario of SCENARIOS) {
      const waited = await settle(vigil.pid);
      if (waited >= SETTLE_SECONDS)
        console.log(`  (${engine.label}: Vigil still busy after ${waited.toFixed(0)} s)`);
      const drive = { ...common, ...scenario };
      const amBefore = cpuSeconds(am.pid) ?? Number.NaN;
      const amRun = await sender.run({ ...drive, ...targets.alertmanager });
      const amCpu = (cpuSeconds(am.pid) ?? Number.NaN) - amBefore;

      const backends = admin && database ? await watchBackendCpu(admin, database.name) : null;
      const walBefore = admin && database ? await walPosition(admin) : null;
      const lsnBefore = admin && database ? await walLsn(admin) : null;
      await vigil.ask({ type: "begin" });
      const vigilBefore = cpuSeconds(vigil.pid) ?? Number.NaN;
      const vigilRun = await sender.run({ ...drive, ...targets.vigil });
      const vigilCpu = (cpuSeconds(vigil.pid) ?? Number.NaN) - vigilBefore;
      const ended = (await vigil.ask({ type: "end", name: `${engine.key} ${scenario.name}` })) as Extract<
        ServerReply,
        { type: "ended" }
      >;
      let databaseCpu: number | null = null;
      let walBytes: number | null = null;
      let walRelations: RelationWal[] | string | null = null;
      let backlog: Backlog | null = null;
      if (admin && database && backends && walBefore !== null && lsnBefore !== null) {
        databaseCpu = await backends.stop();
        backlog = await backlogOf(database.url);
        walBytes = (await walPosition(admin)) - walBefore;
        walRelations = await walByRelation(admin, database.url, lsnBefore, await walLsn(admin));
      }
      rows.push({
        engine,
        scenario,
        alertmanager: { ...amRun, cpu: amCpu },
        vigil: {
          ...vigilRun,
          cpu: vigilCpu,
          databaseCpu,
          walBytes,
          walByRelation: walRelations,
          backlog,
          loopPercent: ended.loopPercent,
          queries: ended.queries,
        },
      });
      console.log(
        `  ${engine.label}, ${scenario.name}: Alertmanager ${rate(amRun).toFixed(0)} alerts/s, ` +
          `Vigil ${rate(vigilRun).toFixed(0)} alerts/s (${(rate(vigilRun) / rate(amRun)).toFixed(2)}x)`,
      );
    }
  } finally {
    agent.destroy();
    await vigil?.stop();
    await am?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return rows;
}

/**
 * What the workers had still to do when Vigil's turn ended: alerts in the storm correlator's queue,
 * and alerts waiting for classification. On the api role (no workers) it is all the turn's new
 * alerts; with workers, what they had not caught up with. Alerts in a batch window wait for it by
 * design, so a backlog of queued alerts is not by itself a lag.
 */
interface Backlog {
  storms: number;
  queued: number;
  running: number;
}

async function backlogOf(databaseUrl: string): Promise<Backlog> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const { rows } = await client.query(
      `select (select count(*) from alert_storm_queue)::int as storms,
        count(*) filter (where analysis_status = 'queued')::int as queued,
        count(*) filter (where analysis_status = 'running')::int as running
      from alerts where analysis_status in ('queued', 'running')`,
    );
    return rows[0] as Backlog;
  } finally {
    await client.end().catch(() => {});
  }
}

// ---- report ----

const rate = (side: DriveResult) => side.alerts / side.seconds;
const ratioOf = (row: Row) => rate(row.vigil) / rate(row.alertmanager);
const microsPerAlert = (cpu: number | null, side: DriveResult) =>
  cpu === null || side.alerts === 0 ? "" : ((cpu / side.alerts) * 1e6).toFixed(0);

function printTable(rows: Row[]): void {
  const header = [
    "engine",
    "scenario",
    "AM alerts/s",
    "AM p50/p99 ms",
    "AM cpu µs/alert",
    "Vigil alerts/s",
    "Vigil p50/p99 ms",
    "Vigil cpu µs/alert",
    "+PostgreSQL µs/alert",
    "ratio",
  ];
  const cells = rows.map((r) => [
    r.engine.label,
    r.scenario.name,
    rate(r.alertmanager).toFixed(0),
    `${r.alertmanager.p50.toFixed(1)}/${r.alertmanager.p99.toFixed(1)}`,
    microsPerAlert(r.alertmanager.cpu, r.alertmanager),
    rate(r.vigil).toFixed(0),
    `${r.vigil.p50.toFixed(1)}/${r.vigil.p99.toFixed(1)}`,
    microsPerAlert(r.vigil.cpu, r.vigil),
    microsPerAlert(r.vigil.databaseCpu, r.vigil),
    `${ratioOf(r).toFixed(2)}x`,
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...cells.map((row) => (row[i] as string).length)),
  );
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i < 2 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)))
      .join("  ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of cells) console.log(line(row));
}

function printDetails(rows: Row[]): void {
  for (const { engine, scenario, alertmanager, vigil } of rows) {
    const outcomes = Object.entries(vigil.outcomes)
      .map(([outcome, n]) => `${outcome} ${n}`)
      .join(", ");
    console.log(
      `${engine.label} / ${scenario.name}: ${vigil.deliveries} deliveries (Alertmanager ${alertmanager.deliveries}), ` +
        `outcomes ${outcomes || "none"}, Vigil's event loop ${vigil.loopPercent.toFixed(0)}% busy`,
    );
    if (vigil.walBytes !== null && vigil.deliveries > 0) {
      console.log(
        `  WAL ${(vigil.walBytes / vigil.deliveries / 1024).toFixed(1)} KiB/delivery (cluster-wide)`,
      );
    }
    if (vigil.backlog) {
      console.log(
        `  left when the turn ended: ${vigil.backlog.storms} alerts for the storm correlator, ` +
          `${vigil.backlog.queued} queued and ${vigil.backlog.running} running for classification`,
      );
    }
    const created = vigil.outcomes.created ?? 0;
    if (typeof vigil.walByRelation === "string") {
      console.log(`  WAL by relation: not read (${vigil.walByRelation})`);
    } else if (vigil.walByRelation && vigil.alerts > 0) {
      // Per alert of the scenario, whatever its outcome: a repeat's WAL is its invocation record.
      const parts = vigil.walByRelation
        .slice(0, WAL_RELATIONS_SHOWN)
        .map(({ relation, bytes }) => `${relation} ${(bytes / vigil.alerts).toFixed(0)}`);
      console.log(
        `  WAL by relation, bytes/alert (${created} of ${vigil.alerts} alerts created): ${parts.join(", ")}`,
      );
    }
    for (const [who, side] of [
      ["Vigil", vigil],
      ["Alertmanager", alertmanager],
    ] as const) {
      if (side.failures > 0)
        console.log(`  ${who} FAILED deliveries: ${side.failures}, first: ${side.firstFailure}`);
    }
    if (vigil.queries.length > 0 && vigil.deliveries > 0) {
      const total = vigil.queries.reduce((sum, [, q]) => sum + q.count, 0);
      const ms = vigil.queries.reduce((sum, [, q]) => sum + q.ms, 0);
      // Dearest first, by their whole time in the scenario; the rare ones (a worker's round) show as
      // a count per 100 deliveries.
      const parts = [...vigil.queries]
        .sort((a, b) => b[1].ms - a[1].ms)
        .map(
          ([kind, q]) =>
            `${kind} ${((100 * q.count) / vigil.deliveries).toFixed(0)}/100 x ${(q.ms / q.count).toFixed(2)}ms (${((100 * q.ms) / ms).toFixed(0)}%)`,
        );
      console.log(
        `  ${(total / vigil.deliveries).toFixed(1)} statements/delivery, ${(ms / vigil.deliveries).toFixed(2)} ms of statement time/delivery: ${parts.join("; ")}`,
      );
    }
  }
}

/** The aims, as ratios to Alertmanager in this run; "not measured" when the engine or scenario did not run. */
function printAims(rows: Row[]): void {
  const find = (engine: string, scenario: string) =>
    rows.find((r) => r.engine.key === engine && r.scenario.name === scenario);
  const ratio = (engine: string, scenario: string) => {
    const row = find(engine, scenario);
    return row ? ratioOf(row) : null;
  };
  const verdict = (value: number | null, aim: number) =>
    value === null ? "not measured" : value >= aim ? "met" : "NOT MET";
  // [what, measured, aim]: the first three and the last two against Alertmanager, the rest against
  // the api role's ratio in the same scenario (ratios cancel the machine's drift between engines).
  const aims: [string, number | null, number][] = [
    ["api role, 1-alert new / Alertmanager", ratio("api", "1-alert new"), 0.5],
    ["api role, 50-alert new / Alertmanager", ratio("api", "50-alert new"), 1.0],
    ["api role, 50-alert repeat / Alertmanager", ratio("api", "50-alert repeat"), 1.5],
  ];
  // A lone delivery measures latency, not rate: no aim for it.
  for (const scenario of ALL_SCENARIOS.filter((s) => s.concurrency === undefined)) {
    const all = ratio("all", scenario.name);
    const api = ratio("api", scenario.name);
    aims.push([
      `all roles / api role, ${scenario.name}`,
      all !== null && api !== null ? all / api : null,
      0.8,
    ]);
  }
  aims.push(
    ["embedded, 1-alert new / Alertmanager", ratio("embedded", "1-alert new"), 0.1],
    ["embedded, 50-alert new / Alertmanager", ratio("embedded", "50-alert new"), 0.3],
  );
  const width = Math.max(...aims.map(([name]) => name.length));
  for (const [name, value, aim] of aims) {
    const shown = value === null ? "-" : `${value.toFixed(2)}x`;
    console.log(
      `  ${name.padEnd(width)}  ${shown.padStart(6)}  aim >= ${aim.toFixed(1)}x  ${verdict(value, aim)}`,
    );
  }
  // Alertmanager's rate can drift between the engines' blocks too: Vigil's own rates beside them.
  const own = ALL_SCENARIOS.filter((s) => s.concurrency === undefined).flatMap((scenario) => {
    const all = find("all", scenario.name);
    const api = find("api", scenario.name);
    return all && api ? [`${scenario.name} ${(rate(all.vigil) / rate(api.vigil)).toFixed(2)}x`] : [];
  });
  if (own.length > 0) console.log(`  Vigil's own rates, all roles / api role: ${own.join(", ")}`);
}

const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(", ");

export async function runIngestBench(): Promise<void> {
  console.log(
    `ingest bench: Alertmanager (POST /api/v2/alerts) and Vigil (webhook trigger) from one generator, ` +
      `${CONCURRENCY} requests in flight, ${SECONDS} s per scenario and side; load average ${load()}`,
  );
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const admin = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  let postgres: string | null = null;
  try {
    await admin.connect();
    const { rows } = await admin.query(
      "select current_setting('server_version') as v, current_setting('synchronous_commit') as s, current_setting('fsync') as f",
    );
    const row = rows[0] as { v: string; s: string; f: string };
    postgres = `PostgreSQL ${row.v}, synchronous_commit=${row.s}, fsync=${row.f}`;
  } catch (err) {
    const shown = new URL(SERVER_URL);
    shown.password = "";
    console.log(`PostgreSQL engines skipped: ${shown} is unreachable (${(err as Error).message})`);
  }

  const sender = startLoadGenerator();
  const rows: Row[] = [];
  try {
    if (postgres) {
      console.log(postgres);
      const rates = await pgbenchUpsertRates(SERVER_URL, CONCURRENCY, PGBENCH_SECONDS);
      for (const { rowsPerCommit, rowsPerSecond } of rates ?? []) {
        console.log(
          `pgbench, this machine: ${rowsPerSecond.toFixed(0)} rows/s upserted, ${rowsPerCommit} per commit, ${CONCURRENCY} clients`,
        );
      }
    }
    for (const engine of ENGINES) {
      if (engine.postgres && !postgres) continue;
      rows.push(...(await benchEngine(engine, sender, postgres ? admin : null)));
    }
  } finally {
    await sender.stop();
    await stopAll();
    await admin.end().catch(() => {});
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  console.log("");
  printTable(rows);
  console.log("");
  printDetails(rows);
  console.log(`\naims (ratios to Alertmanager in this run; load average now ${load()}):`);
  printAims(rows);
  if (rows.some((r) => r.vigil.failures > 0 || r.alertmanager.failures > 0)) process.exitCode = 1;
}
