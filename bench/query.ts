// The alert console's reads at scale: 1,000,000 alerts loaded into PostgreSQL with set-based SQL (a
// realistic mix of sources, integrations, statuses, severities, storms and tenants), then
// GET /app/sre/api/v1/alerts (listAlerts) and the categorization summary measured through the real
// HTTP app (app.inject: routing, auth, validation, serialization), one request at a time.
// PostgreSQL from BENCH_DATABASE_URL or TEST_DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/postgres): the bench creates its own database and drops it
// (BENCH_KEEP=1 keeps it, for EXPLAIN; BENCH_REUSE=<database> measures a kept one again without
// loading or dropping it). BENCH_ALERTS changes the row count, BENCH_REQUESTS the requests per case,
// BENCH_CASES=a,b measures only the cases whose name contains a or b; BENCH_PROFILE_DIR as in ingest.ts.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { SOURCE_TYPES } from "../src/alerts/sources/types.ts";
import { loadConfig } from "../src/config.ts";
import { startVigil, type Vigil } from "../src/start.ts";
import { percentile } from "./percentile.ts";
import { startProfile, stopProfile } from "./profiler.ts";

const BOOTSTRAP_KEY = "bench-bootstrap-key-0123456789";
const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres";
const ALERTS = Number(process.env.BENCH_ALERTS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 60);
const WARMUP = 5;
/** A case stops early once it has spent this long (a slow case still reports its figures). */
const CASE_BUDGET_MS = 12_000;
const TARGET_P99_MS = 50;

const SOURCES = SOURCE_TYPES;
const INTEGRATIONS = ["prod", "staging", "eu-west", "us-east", "payments", "k8s-core"];
/** In about 1 title in 10 (the common search word). */
const COMMON_WORD = "latency";
/** In about 1 description in 10,000 (the rare search word). */
const RARE_WORD = "zookeeper";

/** A pseudo-random integer in [0, n) from the row number g and a salt: deterministic, well mixed. */
function pick(salt: number, n: number): string {
  return `(abs(hashint4(g * ${salt} + ${salt})::bigint) % ${n})`;
}

/**
 * One insert of rows [first, last]. Tenancy: 90% in the bench user's personal namespace, the rest in
 * four orgs. Status: about 20% active, 75% resolved, 5% ignored; every 400 rows a storm of 2..20
 * active members (storm_scope set). Severities Critical 10%, High 20%, Medium 30%, Low 25%, info 15%.
 */
function insertAlerts(first: number, last: number, owner: string, orgs: string[]): string {
  const inStorm = `(g % 400 < 2 + (g / 400) % 19)`;
  const status = `case when ${inStorm} then 'active' else (case when ${pick(3, 100)} < 20 then 'active' when ${pick(3, 100)} < 95 then 'resolved' else 'ignored' end) end`;
  const sev = pick(5, 100);
  const severity = `case when ${sev} < 10 then 'Critical' when ${sev} < 30 then 'High' when ${sev} < 60 then 'Medium' when ${sev} < 85 then 'Low' else 'info' end`;
  const priority = `case when ${sev} < 10 then 1 when ${sev} < 30 then 2 when ${sev} < 60 then 3 when ${sev} < 85 then 4 else 5 end`;
  // Skewed: the first sources are the most common, as in a real fleet.
  const source = `(array[${SOURCES.map((s) => `'${s}'`).join(",")}])[1 + floor(16 * power(${pick(7, 10000)} / 10000.0, 2))::int]`;
  const integration = `(array[${INTEGRATIONS.map((s) => `'${s}'`).join(",")}])[1 + ${pick(11, INTEGRATIONS.length)}]`;
  // Storm members share the bench tenant, as correlation only groups alerts of one tenant.
  const tenant = `(case when ${inStorm} then 0 else ${pick(13, 100)} end)`;
  const orgId = `case when ${tenant} < 90 then null else (array[${orgs.map((o) => `'${o}'::uuid`).join(",")}])[1 + ${tenant} % ${orgs.length}] end`;
  const ownerId = `case when ${tenant} < 90 then '${owner}'::uuid else md5('other-owner' || (${tenant} % 7))::uuid end`;
  const att = pick(17, 100);
  const attention = `case when ${att} < 15 then 'needs_attention' when ${att} < 65 then 'needs_review' when ${att} < 75 then 'false_positive' else 'others' end`;
  const an = pick(19, 100);
  const analysis = `case when ${an} < 40 then 'none' when ${an} < 90 then 'completed' when ${an} < 95 then 'failed' when ${an} < 98 then 'queued' else 'running' end`;
  const rl = pick(23, 100);
  const role = `case when ${rl} < 30 then 'symptom' when ${rl} < 40 then 'cause' else 'unknown' end`;
  const impact = `case when ${pick(29, 100)} < 40 then 0 else 1 + ${pick(31, 100)} end`;
  const what = `(array['High error rate','Disk usage above 90%','CPU throttling','Pod crash looping','Request ${COMMON_WORD} p99 above SLO','Memory pressure','Certificate expires soon','Node not ready','Replication lag','Queue backlog growing'])[1 + ${pick(37, 10)}]`;
  const service = `(array['checkout','payments','search','auth','catalog','ledger','gateway','notifications','inventory','billing','profile','reports'])[1 + ${pick(41, 12)}]`;
  const host = `'host-' || ${pick(43, 5000)}`;
  const triggered = `now() - make_interval(secs => ${pick(47, 90 * 86400)})`;
  const description = `'Threshold crossed for ' || ${service} || ' on ' || ${host} || ' in cluster prod-' || ${pick(53, 8)} || case when ${pick(59, 10000)} = 0 then ' (${RARE_WORD} ensemble degraded)' else ' over the last 5 minutes; see the runbook for the usual remediation steps' end`;
  return `
    insert into alerts (id, org_id, owner_id, webhook_id, source_type, integration_name, external_uid,
      title, description, source_severity, severity, display_priority, severity_mapping, impact_score,
      status, ignored_by, ignore_reason, analysis_status, attention, triggered_at, created_at, updated_at,
      resolved_at, last_status_change_at, labels, links, alert_role, storm_id, storm_scope,
      ingested_via, raw_payload_id, event_seq)
    select md5('alert' || g)::uuid, ${orgId}, ${ownerId}, null, s.source, s.integration, 'uid-' || g,
      s.what || ' on ' || s.service, s.description, lower(s.severity), s.severity, s.priority, 'mapped',
      s.impact, s.status,
      case when s.status = 'ignored' then 'source' end,
      case when s.status = 'ignored' then 'silenced' end,
      case when s.status = 'active' then s.analysis else 'completed' end,
      s.attention, s.triggered, s.triggered, s.triggered,
      case when s.status = 'resolved' then s.triggered + interval '17 minutes' end,
      s.triggered,
      jsonb_build_object('alertname', s.what, 'service', s.service, 'instance', s.host,
        'severity', lower(s.severity), 'cluster', 'prod-' || (g % 8)),
      '[]'::jsonb, s.role,
      case when ${inStorm} then md5('storm' || (g / 400))::uuid end,
      case when ${inStorm} then 'cluster:prod-' || (g / 400 % 8) end,
      'push', md5('payload' || (g / 50))::uuid, 1
    from generate_series(${first}, ${last}) g,
    lateral (select ${source} as source, ${integration} as integration, ${status} as status,
      ${severity} as severity, ${priority} as priority, ${attention} as attention,
      ${analysis} as analysis, ${role} as role, ${impact} as impact, ${what} as what,
      ${service} as service, ${host} as host, ${triggered} as triggered,
      ${description} as description) s`;
}

/** One stored delivery body (about 1.5 KB) per 50 alerts. */
function insertPayloads(count: number): string {
  return `
    insert into alert_payloads (id, body, received_at)
    select md5('payload' || p)::uuid,
      jsonb_build_object('receiver', 'vigil', 'status', 'firing', 'version', '4',
        'alerts', (select jsonb_agg(jsonb_build_object('labels', jsonb_build_object('alertname', 'HighErrorRate',
          'instance', 'host-' || (p * 3 + k) || ':9100', 'job', 'node'), 'startsAt', '2025-01-01T00:00:00Z',
          'fingerprint', md5(p::text || k))) from generate_series(1, 8) k))::text,
      now()
    from generate_series(0, ${count}) p`;
}

interface Case {
  name: string;
  path: string;
}

const LIST = "/app/sre/api/v1/alerts";

function cases(stormId: string): Case[] {
  return [
    { name: "default (active, severity)", path: LIST },
    { name: "status=resolved", path: `${LIST}?status=resolved` },
    { name: "status=ignored", path: `${LIST}?status=ignored` },
    { name: "attention=needs_attention", path: `${LIST}?attention=needs_attention` },
    { name: "source_type=datadog", path: `${LIST}?source_type=datadog` },
    { name: "source_type=checkmk (rare)", path: `${LIST}?source_type=checkmk` },
    { name: "integration_names=prod,payments", path: `${LIST}?integration_names=prod,payments` },
    { name: "storm_id", path: `${LIST}?storm_id=${stormId}` },
    { name: "signal_severity=Critical", path: `${LIST}?signal_severity=Critical` },
    { name: "alert_role=cause", path: `${LIST}?alert_role=cause` },
    { name: `q=${COMMON_WORD} (common)`, path: `${LIST}?q=${COMMON_WORD}` },
    { name: `q=${RARE_WORD} (rare)`, path: `${LIST}?q=${RARE_WORD}` },
    { name: `q=${RARE_WORD}, status=resolved`, path: `${LIST}?q=${RARE_WORD}&status=resolved` },
    { name: "sort_by=impact", path: `${LIST}?sort_by=impact` },
    { name: "sort_by=impact, status=resolved", path: `${LIST}?sort_by=impact&status=resolved` },
    { name: "page=500 (page_size 20)", path: `${LIST}?page=500&page_size=20` },
    { name: "page=500, status=resolved", path: `${LIST}?page=500&status=resolved` },
    { name: "page_size=500", path: `${LIST}?page_size=500` },
    { name: "categorization summary", path: `${LIST}/categorization/summary` },
  ];
}

interface Result {
  name: string;
  requests: number;
  /** `total`, with "+" when it is a lower bound (a search count that stopped at its limit). */
  total: string | null;
  p50: number;
  p99: number;
}

async function measure(vigil: Vigil, spec: Case): Promise<Result> {
  const headers = { authorization: `Bearer ${BOOTSTRAP_KEY}` };
  let total: string | null = null;
  const latencies: number[] = [];
  const started = performance.now();
  await startProfile();
  for (let i = 0; i < WARMUP + REQUESTS; i += 1) {
    const sent = performance.now();
    const reply = await vigil.app.inject({ method: "GET", url: spec.path, headers });
    const ms = performance.now() - sent;
    if (reply.statusCode !== 200) {
      throw new Error(`${spec.name}: ${reply.statusCode} ${reply.body.slice(0, 300)}`);
    }
    if (i === 0) {
      const body = reply.json() as { total?: number; total_exact?: boolean; total_active?: number };
      const n = body.total ?? body.total_active;
      total = n === undefined ? null : `${n}${body.total_exact === false ? "+" : ""}`;
    }
    if (i >= WARMUP) latencies.push(ms);
    if (i >= WARMUP && performance.now() - started > CASE_BUDGET_MS) break;
  }
  await stopProfile(`query ${spec.name}`);
  latencies.sort((a, b) => a - b);
  return {
    name: spec.name,
    requests: latencies.length,
    total,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
  };
}

function printTable(results: Result[]): void {
  const header = ["case", "matching", "requests", "p50 ms", "p99 ms"];
  const rows = results.map((r) => [
    r.name,
    r.total ?? "",
    String(r.requests),
    r.p50.toFixed(1),
    `${r.p99.toFixed(1)}${r.p99 > TARGET_P99_MS ? " *" : ""}`,
  ]);
  const widths = header.map((title, i) =>
    Math.max(title.length, ...rows.map((row) => (row[i] as string).length)),
  );
  const line = (cells: string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number)));
  console.log(line(header).join("  "));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows) console.log(line(row).join("  "));
  if (results.some((r) => r.p99 > TARGET_P99_MS)) console.log(`* p99 above ${TARGET_P99_MS} ms`);
}

export async function runQueryBench(): Promise<void> {
  const serverUrl =
    process.env.BENCH_DATABASE_URL?.trim() || process.env.TEST_DATABASE_URL?.trim() || DEFAULT_POSTGRES;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  try {
    await admin.connect();
  } catch (err) {
    await admin.end().catch(() => {});
    const shown = new URL(serverUrl);
    shown.password = "";
    console.log(`query bench skipped: ${shown} is unreachable (${(err as Error).message})`);
    return;
  }
  const { rows: versionRows } = await admin.query("select current_setting('server_version') as v");
  const version = (versionRows[0] as { v: string }).v;
  const reused = process.env.BENCH_REUSE?.trim() || null;
  const name = reused ?? `vigil_bench_${randomBytes(6).toString("hex")}`;
  if (!reused) await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  let vigil: Vigil | null = null;
  const loader = new pg.Client({ connectionString: url.toString() });
  try {
    vigil = await startVigil(
      loadConfig(
        {},
        {
          dataDir,
          databaseUrl: url.toString(),
          logLevel: "silent",
          secretKey: "bench-secret-key",
          bootstrapApiKey: BOOTSTRAP_KEY,
          role: "api",
        },
      ),
    );
    await loader.connect();
    const { rows: userRows } = await loader.query(
      "select user_id from api_keys where name = 'bootstrap' limit 1",
    );
    const owner = (userRows[0] as { user_id: string }).user_id;
    const orgs = [1, 2, 3, 4].map((n) => `00000000-0000-4000-8000-00000000000${n}`);

    const loadStarted = performance.now();
    if (reused) {
      console.log(`query bench: reusing database ${name} (PostgreSQL ${version}), no load`);
    } else {
      console.log(`query bench: loading ${ALERTS.toLocaleString("en")} alerts into PostgreSQL ${version}...`);
      await loader.query(insertPayloads(Math.ceil(ALERTS / 50)));
      const chunk = 250_000;
      for (let first = 1; first <= ALERTS; first += chunk) {
        await loader.query(insertAlerts(first, Math.min(ALERTS, first + chunk - 1), owner, orgs));
      }
      // A steady-state database has been vacuumed: planner statistics, and a visibility map that lets
      // counts be index-only scans.
      await loader.query("vacuum (analyze) alerts");
      await loader.query("vacuum (analyze) alert_payloads");
      await loader.query("vacuum (analyze) alert_search");
    }
    const { rows: mix } = await loader.query(
      `select status, count(*)::int as n, count(*) filter (where org_id is null and owner_id = $1)::int as bench
       from alerts group by status order by status`,
      [owner],
    );
    const { rows: storms } = await loader.query(
      `select storm_id, count(*)::int as n from alerts where storm_id is not null
       group by storm_id order by count(*) desc, storm_id limit 1`,
    );
    const storm = storms[0] as { storm_id: string; n: number };
    console.log(
      `loaded in ${((performance.now() - loadStarted) / 1000).toFixed(0)}s: ` +
        mix.map((row) => `${row.status} ${row.n} (bench tenant ${row.bench})`).join(", ") +
        `; largest storm ${storm.n} members`,
    );
    console.log(
      `${REQUESTS} requests per case after ${WARMUP} warm-up, one at a time (app.inject), ` +
        "page_size 20 unless said; matching = total (or total_active; " +
        ": a lower bound)\n",
    );
    const results: Result[] = [];
    const only = process.env.BENCH_CASES?.split(",").map((part) => part.trim()) ?? null;
    for (const spec of cases(storm.storm_id)) {
      if (!only || only.some((part) => spec.name.includes(part))) results.push(await measure(vigil, spec));
    }
    printTable(results);
  } finally {
    await vigil?.stop();
    await loader.end().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    if (reused || process.env.BENCH_KEEP === "1") {
      console.log(`(kept database ${name})`);
    } else {
      await admin.query(`drop database if exists ${name} with (force)`);
    }
    await admin.end();
  }
}
