// Counts the statements Vigil sends to its database and the time each waits for its answer, by kind
// ("select webhooks", "insert alerts", "begin", ...). On PostgreSQL it wraps pg's Client.prototype.query,
// so it sees every statement of Vigil's pool (application_name "vigil"); pg-boss's own connections are
// left out. On the embedded database it wraps PGlite's protocol calls, so it sees every statement,
// pg-boss's too, and a named statement counts under its name ("alerts.write"); there the time is the
// database's work on the statement, as PGlite runs it in Vigil's own thread.
import { PGlite } from "@electric-sql/pglite";
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

/** The kind of a PGlite protocol call's first message: a named statement's name, else the text's kind. */
function kindOfMessage(message: Uint8Array): string {
  const bytes = Buffer.from(message.buffer, message.byteOffset, message.byteLength);
  const cstring = (from: number) => {
    const end = bytes.indexOf(0, from);
    return {
      text: bytes.toString("utf8", from, Math.min(end < 0 ? bytes.length : end, from + 400)),
      next: end + 1,
    };
  };
  const type = String.fromCharCode(bytes[0] ?? 0);
  if (type === "Q") return kindOfHead(cstring(5).text);
  if (type === "B") {
    const statement = cstring(cstring(5).next).text;
    return statement ? statement : "unnamed";
  }
  if (type === "P") {
    const name = cstring(5);
    return name.text ? `prepare ${name.text}` : kindOfHead(cstring(name.next).text);
  }
  // PGlite's own query() sends each step of a statement in a call of its own.
  return STEPS.get(type) ?? `message ${type}`;
}

const STEPS = new Map([
  ["D", "describe"],
  ["E", "execute"],
  ["H", "flush"],
  ["S", "sync"],
]);

function countPglite(): void {
  type Call = (this: PGlite, message: Uint8Array, ...rest: unknown[]) => Promise<unknown>;
  const proto = PGlite.prototype as unknown as Record<"execProtocolRawStream" | "execProtocolRaw", Call>;
  for (const method of ["execProtocolRawStream", "execProtocolRaw"] as const) {
    const original = proto[method];
    proto[method] = function (message, ...rest) {
      const kind = kindOfMessage(message);
      const started = process.hrtime.bigint();
      return original.call(this, message, ...rest).finally(() => record(kind, started));
    };
  }
}

/** Starts counting (once per process). */
export function installQueryCounter(): void {
  if (installed) return;
  installed = true;
  countPglite();
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
