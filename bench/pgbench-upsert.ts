// The machine's own upsert rate, for scale beside the ingest figures: pgbench (PostgreSQL's client,
// /usr/bin/pgbench) runs two short custom scripts against a scratch database this creates and drops:
// one upsert per commit, and 50 rows upserted in one statement per commit, 16 clients, durable commits
// as the server is configured.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { onPath } from "../test/alertmanager-process.ts";

const SCRIPTS = {
  1: [
    "\\set id random(1, 1000000)",
    "insert into upserts (id, n, body) values (:id, 1, 'firing')",
    "  on conflict (id) do update set n = upserts.n + 1, body = excluded.body;",
  ],
  50: [
    "\\set id random(1, 1000000)",
    "insert into upserts (id, n, body) select g, 1, 'firing' from generate_series(:id, :id + 49) as g",
    "  on conflict (id) do update set n = upserts.n + 1, body = excluded.body;",
  ],
} as const;

export interface UpsertRate {
  rowsPerCommit: number;
  rowsPerSecond: number;
}

/** Upserted rows/s with 1 and with 50 rows per commit; null (with the reason printed) when it cannot run. */
export async function pgbenchUpsertRates(
  serverUrl: string,
  clients: number,
  seconds: number,
): Promise<UpsertRate[] | null> {
  const pgbench = onPath("pgbench") ?? "/usr/bin/pgbench";
  const admin = new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3_000 });
  admin.on("error", () => {});
  const name = `vigil_bench_pgbench_${randomBytes(6).toString("hex")}`;
  const dir = mkdtempSync(join(tmpdir(), "vigil-pgbench-"));
  let created = false;
  try {
    await admin.connect();
    await admin.query(`create database ${name}`);
    created = true;
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    await db.query("create table upserts (id bigint primary key, n integer not null, body text not null)");
    await db.end();
    const rates: UpsertRate[] = [];
    for (const [rows, lines] of Object.entries(SCRIPTS)) {
      const script = join(dir, `upsert-${rows}.sql`);
      writeFileSync(script, `${lines.join("\n")}\n`);
      const { stdout } = await promisify(execFile)(
        pgbench,
        ["-n", "-c", String(clients), "-j", "2", "-T", String(seconds), "-f", script, url.toString()],
        { timeout: (seconds + 60) * 1000 },
      );
      const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout)?.[1];
      if (!tps) throw new Error(`no tps in pgbench's output:\n${stdout}`);
      rates.push({ rowsPerCommit: Number(rows), rowsPerSecond: Number(tps) * Number(rows) });
    }
    return rates;
  } catch (err) {
    console.log(`pgbench skipped: ${(err as Error).message}`);
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (created) await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end().catch(() => {});
  }
}
