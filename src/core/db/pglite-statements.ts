// Named statements on the embedded database. PGlite's query() parses, describes and plans every
// statement again, in six calls into the database; the hot paths' statements on `alerts` cost more
// to plan than to run. A named statement is parsed and described once per database, and then each
// run is one call: bind, execute, sync.
import type { PGlite, Transaction } from "@electric-sql/pglite";
import { serialize } from "pg-protocol";
import { keepTransactionTypesAsText } from "./pglite-text-types.ts";

interface Prepared {
  text: string;
  paramTypes: number[];
  fields: { name: string; dataTypeID: number }[];
}

interface BackendMessage {
  name: string;
  dataTypeIDs?: number[];
  fields?: unknown[];
}

/** Each database's transactions, so that a statement run in one finds the database it runs on. */
const owners = new WeakMap<Transaction, PGlite>();
const statements = new WeakMap<PGlite, Map<string, Prepared>>();

/** Makes the transactions of `client` known to `pgliteOf`. Called once, when the database opens. */
export function trackTransactions(client: PGlite): void {
  const transaction = client.transaction.bind(client);
  client.transaction = <T>(callback: (tx: Transaction) => Promise<T>) =>
    transaction((tx) => {
      owners.set(tx, client);
      keepTransactionTypesAsText(tx);
      return callback(tx);
    });
}

/** How long a chain of embedded statements runs before it lets the event loop turn. */
export const STATEMENT_SLICE_MS = 50;

/**
 * Lets the event loop turn between the statements of `client` once they have run STATEMENT_SLICE_MS
 * without one. PGlite runs a statement in this thread and answers with a promise that is already
 * settled, so a chain of statements (a worker's round, a maintenance pass) ran in microtasks alone:
 * no timer fired, no socket was read and no delivery answered until the chain ended, 27 s once under
 * a flood of deliveries. A turn before every statement instead would add a turn's latency to each
 * statement of a lone delivery.
 */
export function yieldBetweenStatements(client: PGlite): void {
  const execute = client.execProtocolStream.bind(client);
  let turnedAt = performance.now();
  let watching = false;
  // Runs at the next turn of the loop, whatever makes it turn: the chain has not been running since.
  const turned = () => {
    turnedAt = performance.now();
    watching = false;
  };
  client.execProtocolStream = async (...args: Parameters<PGlite["execProtocolStream"]>) => {
    if (performance.now() - turnedAt >= STATEMENT_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (!watching) {
      watching = true;
      setImmediate(turned);
    }
    return execute(...args);
  };
}

/** The database a drizzle session's client runs on, and whether it is an open transaction. */
export function pgliteOf(client: unknown): { pglite: PGlite; inTransaction: boolean } | null {
  if (!client || typeof client !== "object") return null;
  if ("execProtocolStream" in client) return { pglite: client as PGlite, inTransaction: false };
  const pglite = owners.get(client as Transaction);
  return pglite ? { pglite, inTransaction: true } : null;
}

/** A statement with the name it is prepared under. One name must always carry one text. */
interface NamedStatement {
  name: string;
  text: string;
  params: unknown[];
}

/** Runs `statement`, preparing it the first time. Rows come back as objects, as from drizzle's execute(). */
export async function executeNamedOnPglite(
  pglite: PGlite,
  inTransaction: boolean,
  statement: NamedStatement,
): Promise<{ rows: Record<string, unknown>[] }> {
  const run = () => pglite.runExclusive(() => runNamed(pglite, inTransaction, statement));
  // Outside a transaction it waits, as query() does, for any transaction under way to end.
  if (inTransaction) return run();
  return (
    pglite as unknown as { _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T> }
  )._runExclusiveTransaction(run);
}

async function runNamed(
  pglite: PGlite,
  inTransaction: boolean,
  { name, text, params }: NamedStatement,
): Promise<{ rows: Record<string, unknown>[] }> {
  const prepared = await prepare(pglite, name, text);
  const values = params.map((param, i) => {
    if (param === null || param === undefined) return null;
    const serializer = pglite.serializers[prepared.paramTypes[i] as number];
    return serializer ? serializer(param) : String(param);
  });
  const messages = (await pglite.execProtocolStream(
    Buffer.concat([serialize.bind({ statement: name, values }), serialize.execute({}), serialize.sync()]),
    { syncToFs: !inTransaction },
  )) as BackendMessage[];
  const rows: Record<string, unknown>[] = [];
  for (const message of messages) {
    if (message.name !== "dataRow") continue;
    const row: Record<string, unknown> = {};
    const fields = message.fields as (string | null)[];
    prepared.fields.forEach((field, i) => {
      const value = fields[i];
      // Dates and times stay as the database wrote them: the client keeps them as text (pglite-text-types.ts).
      const parser = pglite.parsers[field.dataTypeID];
      row[field.name] =
        value === null || value === undefined ? null : parser ? parser(value, field.dataTypeID) : value;
    });
    rows.push(row);
  }
  return { rows };
}

async function prepare(pglite: PGlite, name: string, text: string): Promise<Prepared> {
  let known = statements.get(pglite);
  if (!known) {
    known = new Map();
    statements.set(pglite, known);
  }
  const found = known.get(name);
  if (found) {
    if (found.text !== text) throw new Error(`statement ${name} was prepared with another text`);
    return found;
  }
  // A failure leaves nothing prepared: the error ends the messages' run before the sync.
  const messages = (await pglite.execProtocolStream(
    Buffer.concat([
      serialize.parse({ name, text }),
      serialize.describe({ type: "S", name }),
      serialize.sync(),
    ]),
    { syncToFs: false },
  )) as BackendMessage[];
  const parameters = messages.find((message) => message.name === "parameterDescription");
  const description = messages.find((message) => message.name === "rowDescription");
  const prepared: Prepared = {
    text,
    paramTypes: parameters?.dataTypeIDs ?? [],
    fields: (description?.fields as Prepared["fields"] | undefined) ?? [],
  };
  known.set(name, prepared);
  return prepared;
}
