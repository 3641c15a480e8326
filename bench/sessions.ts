// listSessions at scale: 100,000 sessions (and a run for every other one) loaded into PostgreSQL with
// set-based SQL, then GET /platform/api/v1/sessions measured through the real HTTP app (app.inject),
// one request at a time, with and without q. PostgreSQL from BENCH_DATABASE_URL or TEST_DATABASE_URL
// (default postgres://postgres@127.0.0.1:5432/postgres); the bench creates its own database and drops
// it (BENCH_KEEP=1 keeps it). BENCH_SESSIONS changes the count, BENCH_REQUESTS the requests per case.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { loadConfig } from "../src/config.ts";
import { startVigil, type Vigil } from "../src/start.ts";
import { percentile } from "./percentile.ts";

const BOOTSTRAP_KEY = "bench-bootstrap-key-0123456789";
const DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres";
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 60);
const WARMUP = 5;
const TARGET_P99_MS = 50;
/** In about 1 prompt in 8 (the common word); the rare word in 1 in 10,000. */
const COMMON_WORD = "restart";
const RARE_WORD = "zookeeper";

const pick = (salt: number, n: number) => `(abs(hashint4(g * ${salt} + ${salt})::bigint) % ${n})`;

/** Sessions 1..n: 90% of the bench user's, the rest of other owners; prompts from a realistic mix. */
function insertSessions(n: number, owner: string): string {
  const verb = `(array['${COMMON_WORD}','roll back','scale','investigate latency of','silence alerts for','flush the cache of','renew the certificate of','page on-call for'])[1 + ${pick(3, 8)}]`;
  const service = `(array['checkout','payments','search','auth','catalog','ledger','gateway','inventory','billing','profile'])[1 + ${pick(5, 10)}]`;
  const rare = `case when ${pick(7, 10000)} = 0 then ' near the ${RARE_WORD} ensemble' else '' end`;
  const prompt = `${verb} || ' the ' || ${service} || ' service in prod-' || ${pick(11, 8)} || ${rare}`;
  const owner_ = `case when ${pick(13, 100)} < 90 then '${owner}'::uuid else md5('other' || ${pick(13, 7)})::uuid end`;
  const app = `(array['chatops','console','cli','runbook-bot'])[1 + ${pick(17, 4)}]`;
  const responder = `(array['restart-deployment','rollback-release','scale-service','latency-investigation','silence-alerts','flush-cache','cert-renew','oncall-page'])[1 + ${pick(3, 8)}]`;
  return `
    insert into sessions (id, org_id, owner_id, title, initiator, source_app, source_metadata, first_prompt,
      prompt_key, responder_type, responder_name, search_text, created_at, updated_at)
    select s.id, null, s.owner, s.prompt, 'user:' || s.owner, s.app,
      jsonb_build_object('ticket', 'OPS-' || g, 'channel', '#team-' || ${pick(19, 40)}), s.prompt,
      lower(s.prompt), 'workflow', s.responder,
      lower(concat_ws(' ', s.id::text, s.prompt, s.prompt, 'user:' || s.owner, s.app, s.responder,
        'ticket OPS-' || g || ' channel #team-' || ${pick(19, 40)}, s.responder)),
      s.at, s.at
    from generate_series(1, ${n}) g,
      lateral (select md5('session' || g)::uuid as id, ${prompt} as prompt, ${owner_} as owner, ${app} as app,
        ${responder} as responder, now() - make_interval(secs => ${pick(23, 60 * 86400)}) as at) s`;
}

/** A completed run in every other session. */
const insertExecutions = () => `
  insert into executions (trace_id, run_id, session_id, org_id, owner_id, target_type, target_name,
    workflow_version, agent_name, stages, status, input, started_at, finished_at, settled, total_cost)
  select md5('trace' || s.id)::uuid, md5('run' || s.id)::uuid, s.id, null, s.owner_id, 'workflow',
    s.responder_name, 1, s.responder_name, '[]'::jsonb, 'completed', '{}'::jsonb, s.created_at,
    s.created_at + interval '20 seconds', true, 0.002
  from sessions s where get_byte(decode(md5(s.id::text), 'hex'), 0) % 2 = 0`;

interface Result {
  name: string;
  shown: number;
  p50: number;
  p99: number;
}

async function measure(vigil: Vigil, name: string, path: string): Promise<Result> {
  const headers = { authorization: `Bearer ${BOOTSTRAP_KEY}` };
  const latencies: number[] = [];
  let shown = 0;
  for (let i = 0; i < WARMUP + REQUESTS; i += 1) {
    const started = performance.now();
    const reply = await vigil.app.inject({ method: "GET", url: path, headers });
    const elapsed = performance.now() - started;
    if (reply.statusCode !== 200) throw new Error(`${path}: ${reply.statusCode} ${reply.body}`);
    shown = reply.json().items.length;
    if (i >= WARMUP) latencies.push(elapsed);
  }
  latencies.sort((a, b) => a - b);
  return { name, shown, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) };
}

export async function runSessionsBench(): Promise<void> {
  const serverUrl =
    process.env.BENCH_DATABASE_URL?.trim() || process.env.TEST_DATABASE_URL?.trim() || DEFAULT_POSTGRES;
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  try {
    await admin.connect();
  } catch (err) {
    await admin.end().catch(() => {});
    console.log(`sessions bench skipped: the database server is unreachable (${(err as Error).message})`);
    return;
  }
  const name = `vigil_bench_${randomBytes(6).toString("hex")}`;
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  const loader = new pg.Client({ connectionString: url.toString() });
  let vigil: Vigil | null = null;
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
    const { rows } = await loader.query("select user_id from api_keys where name = 'bootstrap' limit 1");
    const owner = (rows[0] as { user_id: string }).user_id;
    const started = performance.now();
    await loader.query(insertSessions(SESSIONS, owner));
    await loader.query(insertExecutions());
    await loader.query("vacuum (analyze) sessions");
    await loader.query("vacuum (analyze) executions");
    const { rows: counts } = await loader.query(
      "select count(*)::int as n, count(*) filter (where owner_id = $1)::int as mine from sessions",
      [owner],
    );
    const { rows: sample } = await loader.query(
      "select id::text as id from sessions where owner_id = $1 order by id limit 1",
      [owner],
    );
    const someId = (sample[0] as { id: string }).id;
    console.log(
      `sessions bench: ${counts[0].n} sessions (${counts[0].mine} of the bench user), loaded in ` +
        `${((performance.now() - started) / 1000).toFixed(0)}s; ${REQUESTS} requests per case after ${WARMUP} warm-up, one at a time (app.inject), limit 20\n`,
    );
    const base = "/platform/api/v1/sessions";
    const cases: [string, string][] = [
      ["no q", base],
      [`q=${COMMON_WORD} (1 in 8)`, `${base}?q=${COMMON_WORD}`],
      ["q=checkout (1 in 10)", `${base}?q=checkout`],
      [
        `q=${COMMON_WORD} checkout prod-3`,
        `${base}?q=${encodeURIComponent(`${COMMON_WORD} checkout prod-3`)}`,
      ],
      [`q=${RARE_WORD} (1 in 10,000)`, `${base}?q=${RARE_WORD}`],
      ["q=ops-4242 (one ticket)", `${base}?q=ops-4242`],
      ["q=<session id>", `${base}?q=${someId}`],
      ["q=no match", `${base}?q=${randomUUID().slice(0, 8)}xq`],
      ["source_app=chatops", `${base}?source_app=chatops`],
      ["q=checkout offset=2000", `${base}?q=checkout&offset=2000`],
    ];
    const results: Result[] = [];
    for (const [caseName, path] of cases) results.push(await measure(vigil, caseName, path));
    const width = Math.max(...results.map((r) => r.name.length));
    console.log(`${"case".padEnd(width)}  items  p50 ms  p99 ms`);
    for (const r of results) {
      const flag = r.p99 > TARGET_P99_MS ? " *" : "";
      console.log(
        `${r.name.padEnd(width)}  ${String(r.shown).padStart(5)}  ${r.p50.toFixed(1).padStart(6)}  ${r.p99.toFixed(1).padStart(6)}${flag}`,
      );
    }
    if (results.some((r) => r.p99 > TARGET_P99_MS)) console.log(`* p99 above ${TARGET_P99_MS} ms`);
  } finally {
    await vigil?.stop();
    await loader.end().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    if (process.env.BENCH_KEEP === "1") console.log(`(kept database ${name})`);
    else await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
