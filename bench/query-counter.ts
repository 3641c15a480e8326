// Counts the statements Vigil sends to PostgreSQL and the time each waits for its answer, by kind
// ("select webhooks", "insert alerts", "begin", ...). It wraps pg's Client.prototype.query, so it sees
// every statement of Vigil's pool (application_name "vigil"); pg-boss's own connections are left out.
import pg from "pg";

export interface QueryStats {
  count: number;
  ms: number;
}

type QueryFn = (...args: unknown[]) => unknown;

const stats = new Map<string, QueryStats>();
let installed = false;

function kindOf(args: unknown[]): string {
  const first = args[0];
  const text =
    typeof first === "string"
      ? first
      : typeof first === "object" && first !== null && typeof (first as { text?: unknown }).text === "string"
        ? (first as { text: string }).text
        : "";
  // The head names the statement; lower-casing a whole 50-alert write would cost more than it. The
  // kind of each head is kept: the counter runs inside the measured process.
  const head = text.slice(0, 400);
  const known = kinds.get(head);
  if (known !== undefined) return known;
  const kind = kindOfHead(head);
  if (kinds.size < 10_000) kinds.set(head, kind);
  return kind;
}

const kinds = new Map<string, string>();

function kindOfHead(head: string): string {
  const sql = head.trim().toLowerCase().replace(/\s+/g, " ");
  const verb = /^(select|insert|update|delete|begin|commit|rollback|with)/.exec(sql)?.[1] ?? "other";
  if (sql.includes("pg_advisory_xact_lock")) return "select pg_advisory_xact_lock";
  const table = /(?:from|into|update) "?([a-z_.]+)"?/.exec(sql)?.[1];
  return table ? `${verb} ${table}` : verb;
}

function record(kind: string, started: bigint): void {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const entry = stats.get(kind) ?? { count: 0, ms: 0 };
  entry.count += 1;
  entry.ms += ms;
  stats.set(kind, entry);
}

/** Starts counting (once per process). */
export function installQueryCounter(): void {
  if (installed) return;
  installed = true;
  const proto = pg.Client.prototype as unknown as { query: QueryFn };
  const original = proto.query;
  proto.query = function (this: { connectionParameters?: { application_name?: string } }, ...args) {
    if (this.connectionParameters?.application_name !== "vigil") return original.apply(this, args);
    const kind = kindOf(args);
    const started = process.hrtime.bigint();
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === "function") {
      args[last] = (...results: unknown[]) => {
        record(kind, started);
        return (callback as QueryFn)(...results);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args);
    if (result && typeof (result as Promise<unknown>).then === "function") {
      (result as Promise<unknown>).then(
        () => record(kind, started),
        () => record(kind, started),
      );
    }
    return result;
  };
}

/** Clears the counts. */
export function resetQueryStats(): void {
  stats.clear();
}

/** The counts since the last reset, most frequent first. */
export function queryStats(): [string, QueryStats][] {
  return [...stats.entries()].sort((a, b) => b[1].count - a[1].count);
}
