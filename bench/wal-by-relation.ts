// Where a scenario's WAL went, relation by relation (tables, their indexes and TOAST apart), read
// from the records between two WAL positions with pg_walinspect, an extension PostgreSQL 15 ships
// in its contrib package. Each record counts for the first block it touches; records that touch
// none (commits, for instance) are left out. Only the records of Vigil's database count.
import pg from "pg";

export interface RelationWal {
  relation: string;
  bytes: number;
}

/** The current WAL position, as PostgreSQL writes it (`0/3000148`). */
export async function walLsn(admin: pg.Client): Promise<string> {
  const { rows } = await admin.query("select pg_current_wal_lsn()::text as lsn");
  return (rows[0] as { lsn: string }).lsn;
}

/**
 * The WAL bytes each relation of `databaseUrl`'s database took between `from` and `to`, largest
 * first; the reason as text when they cannot be read (no pg_walinspect, or the segments are gone).
 * Records past the flushed position are left out: pg_walinspect refuses to read them, and `to`, read
 * as written, can be ahead of it while the last commits flush.
 */
export async function walByRelation(
  admin: pg.Client,
  databaseUrl: string,
  from: string,
  to: string,
): Promise<RelationWal[] | string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  try {
    await admin.query("create extension if not exists pg_walinspect");
    await client.connect();
    const { rows: own } = await client.query(
      "select oid::text from pg_database where datname = current_database()",
    );
    const { rows } = await admin.query(
      `select block[2] as node, sum(record_length)::bigint as bytes
       from pg_get_wal_records_info($1, least($2::pg_lsn, pg_current_wal_flush_lsn())) r, regexp_match(r.block_ref, 'rel \\d+/(\\d+)/(\\d+)') block
       where block[1] = $3
       group by 1`,
      [from, to, (own[0] as { oid: string }).oid],
    );
    // TOAST tables are named after the table whose long values they hold.
    const { rows: names } = await client.query(
      `select c.relfilenode::text as node, coalesce(owner.relname || ' (TOAST)', c.relname) as relation
       from pg_class c left join pg_class owner on owner.reltoastrelid = c.oid
       where c.relfilenode = any($1::oid[])`,
      [rows.map((row) => (row as { node: string }).node)],
    );
    const nameOf = new Map(names.map((row) => [String(row.node), String(row.relation)]));
    return rows
      .map((row) => ({
        relation: nameOf.get(String(row.node)) ?? `relfilenode ${row.node}`,
        bytes: Number(row.bytes),
      }))
      .sort((a, b) => b.bytes - a.bytes);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await client.end().catch(() => {});
  }
}
