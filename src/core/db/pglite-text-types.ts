// Dates, times, intervals and a few arrays reach Vigil as the database wrote them: drizzle reads
// them so on both engines, and maps them itself. Its PGlite session asks for that with parsers of its
// own on every query, and PGlite then copies its whole table of parsers (over 300, one per type and
// array type) into a new object for each query: 0.3 ms a statement in the ingest bench, more than
// many of those statements take to run. So the embedded database keeps these types as text itself,
// drizzle's parsers are left out, and pg-boss, which expects them parsed as on PostgreSQL, reads
// through `typedJobStore`.
import type { PGlite, Results, Transaction } from "@electric-sql/pglite";
import { types } from "@electric-sql/pglite";

/** The types drizzle's PGlite session keeps as text. */
const TEXT_TYPES: readonly number[] = [
  types.TIMESTAMP,
  types.TIMESTAMPTZ,
  types.INTERVAL,
  types.DATE,
  1231, // numeric[]
  1115, // timestamp[]
  1185, // timestamptz[]
  1187, // interval[]
  1182, // date[]
];
const textTypes = new Set(TEXT_TYPES);

type Parser = (value: string, typeId: number) => unknown;
type QueryOptions = Parameters<PGlite["query"]>[2];

/**
 * Makes `client` keep TEXT_TYPES as text and answer drizzle's queries without their parsers.
 * Returns the parsers it replaced, for `typedJobStore`.
 */
export function keepTypesAsText(client: PGlite): Map<number, Parser> {
  const replaced = new Map<number, Parser>();
  for (const type of TEXT_TYPES) {
    const parser = client.parsers[type];
    if (parser) replaced.set(type, parser);
    client.parsers[type] = (value) => value;
  }
  const query = client.query.bind(client);
  client.query = ((text: string, params?: unknown[], options?: QueryOptions) =>
    query(text, params, withoutTextParsers(options))) as PGlite["query"];
  return replaced;
}

/** The same for a transaction's queries (called for each transaction as it starts). */
export function keepTransactionTypesAsText(tx: Transaction): void {
  const query = tx.query.bind(tx);
  tx.query = ((text: string, params?: unknown[], options?: QueryOptions) =>
    query(text, params, withoutTextParsers(options))) as Transaction["query"];
}

/** The options without their parsers when those only keep TEXT_TYPES as text, as the client now does. */
function withoutTextParsers(options: QueryOptions): QueryOptions {
  if (!options?.parsers) return options;
  for (const type of Object.keys(options.parsers)) if (!textTypes.has(Number(type))) return options;
  const { parsers: _, ...rest } = options;
  return rest;
}

/** The client for pg-boss: query() and exec() with TEXT_TYPES parsed as the client did before. */
export function typedJobStore(
  client: PGlite,
  parsers: Map<number, Parser>,
): Pick<PGlite, "query" | "exec" | "listen"> {
  const typed = <T>(result: Results<T>): Results<T> => {
    const fields = result.fields.filter((field) => parsers.has(field.dataTypeID));
    for (const field of fields) {
      const parse = parsers.get(field.dataTypeID) as Parser;
      for (const row of result.rows as Record<string, unknown>[]) {
        const value = row[field.name];
        if (typeof value === "string") row[field.name] = parse(value, field.dataTypeID);
      }
    }
    return result;
  };
  return {
    query: (async (text: string, params?: unknown[], options?: QueryOptions) =>
      typed(await client.query(text, params, options))) as PGlite["query"],
    exec: async (text, options) => (await client.exec(text, options)).map(typed),
    // Notifications wake pg-boss's workers in this process, as on the client itself.
    listen: client.listen.bind(client),
  };
}
