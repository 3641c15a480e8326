// Statements on the embedded database. PGlite's own query() sends a statement in six calls into the
// database, describing it first to learn its parameters' types; here every query() is one call
// (queryInOneCall). The hot paths' statements on `alerts` also cost more to plan than to run: a named
// statement is parsed and described once per database, and then each run is one call: bind,
// execute, sync.
import type { PGlite, Results, Transaction } from "@electric-sql/pglite";
import pgUtils from "pg/lib/utils.js";
import { serialize } from "pg-protocol";
import { Parser } from "pg-protocol/dist/parser.js";
import { keepTransactionTypesAsText } from "./pglite-text-types.ts";

interface Prepared {
  text: string;
  paramTypes: number[];
  fields: { name: string; dataTypeID: number }[];
}

interface BackendMessage {
  name: string;
  text?: string;
  dataTypeIDs?: number[];
  fields?: unknown[];
  channel?: string;
  payload?: string;
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
      // One call per statement first, then drizzle's parsers left out before it (see database.ts).
      queryTransactionInOneCall(client, tx);
      keepTransactionTypesAsText(tx);
      return callback(tx);
    });
}

type QueryOptions = Parameters<PGlite["query"]>[2];

/**
 * Answers the client's query() in one call into the database: parse, bind, describe, execute and
 * sync leave together, where PGlite sends each alone and first describes the statement to learn its
 * parameters' types (six calls: a small read took 660 µs that way and 450 in one call). The parameters are written
 * as node-postgres writes them (pg's prepareValue), so a statement's values mean the same on both
 * engines. A query with options this path does not handle (a blob, parameter types, parsers or
 * serializers) goes to PGlite's own query().
 */
export function queryInOneCall(client: PGlite): void {
  const query = client.query.bind(client);
  client.query = ((text: string, params?: unknown[], options?: QueryOptions) =>
    inOneCall(options)
      ? exclusively(client, false, () => runInOneCall(client, false, text, params ?? [], options?.rowMode))
      : query(text, params, options)) as PGlite["query"];
}

/** The same for a transaction's query(). */
function queryTransactionInOneCall(client: PGlite, tx: Transaction): void {
  const query = tx.query.bind(tx);
  tx.query = (async (text: string, params?: unknown[], options?: QueryOptions) => {
    if (!inOneCall(options)) return query(text, params, options);
    if (tx.closed) throw new Error("Transaction is closed");
    return exclusively(client, true, () => runInOneCall(client, true, text, params ?? [], options?.rowMode));
  }) as Transaction["query"];
}

const inOneCall = (options: QueryOptions) =>
  !options || Object.keys(options).every((key) => key === "rowMode");

/** Commands whose completion counts the rows they changed, as PGlite's query() counts them. */
const COUNTING_COMMANDS = new Set(["INSERT", "UPDATE", "DELETE", "COPY", "MERGE"]);

async function runInOneCall(
  pglite: PGlite,
  inTransaction: boolean,
  text: string,
  params: unknown[],
  rowMode: "object" | "array" = "object",
): Promise<Results> {
  const values = params.map((param) => pgUtils.prepareValue(param));
  const messages = await exchange(
    pglite,
    Buffer.concat([
      serialize.parse({ text }),
      serialize.bind({ values }),
      serialize.describe({ type: "P" }),
      serialize.execute({}),
      serialize.sync(),
    ]),
    !inTransaction,
  );
  const description = messages.find((message) => message.name === "rowDescription");
  const fields = ((description?.fields ?? []) as Prepared["fields"]).map(({ name, dataTypeID }) => ({
    name,
    dataTypeID,
  }));
  let affectedRows = 0;
  for (const message of messages) {
    if (message.name !== "commandComplete") continue;
    const words = String(message.text).split(" ");
    if (COUNTING_COMMANDS.has(words[0] as string))
      affectedRows += Number.parseInt(words.at(-1) as string, 10);
  }
  return { rows: rowsOf(pglite, messages, fields, rowMode), fields, affectedRows };
}

/**
 * Sends `message` (a statement's protocol messages, ending with sync) and returns the answers, read
 * by node-postgres's parser. PGlite's own reader copies each value's bytes before decoding them:
 * under a flood of one-alert deliveries, reading answers took about 8% of an embedded Vigil's CPU
 * that way and 5% this way. The database's error, if any, is thrown once the exchange is over
 * (after the sync, the session is ready again).
 */
async function exchange(pglite: PGlite, message: Buffer, syncToFs: boolean): Promise<BackendMessage[]> {
  const parser = new Parser();
  const messages: BackendMessage[] = [];
  const keep = (answer: BackendMessage) => messages.push(answer);
  await pglite.execProtocolRawStream(message, {
    syncToFs,
    // A piece is a view of the database's memory, which the next piece overwrites: the parser keeps
    // a message split across pieces, so it gets a copy.
    onRawData: (piece) => parser.parse(Buffer.from(piece), keep),
  });
  const error = messages.find((answer) => answer.name === "error");
  if (error) throw error;
  for (const answer of messages) if (answer.name === "notification") deliver(pglite, answer);
  return messages;
}

type Listener = (payload: string) => void;
const listeners = new WeakMap<PGlite, Map<string, Set<Listener>>>();

/**
 * Keeps the channels `client` listens on (PGlite's listen and unlisten), so that a notification
 * answering one of this module's statements reaches them, as PGlite's own reader would hand it over:
 * the job queue's workers wake on the notification of a job sent. PGlite's client-wide
 * onNotification hears only the statements PGlite runs itself; Vigil does not use it.
 */
export function trackListeners(client: PGlite): void {
  const byChannel = new Map<string, Set<Listener>>();
  listeners.set(client, byChannel);
  const listen = client.listen.bind(client);
  client.listen = async (channel, callback, tx) => {
    const unlisten = await listen(channel, callback, tx);
    const name = postgresName(channel);
    byChannel.set(name, (byChannel.get(name) ?? new Set()).add(callback));
    return unlisten;
  };
  const unlisten = client.unlisten.bind(client);
  client.unlisten = async (channel, callback, tx) => {
    // The function listen() returned passes the channel's name already folded.
    for (const name of new Set([channel, postgresName(channel)])) {
      if (callback) byChannel.get(name)?.delete(callback);
      else byChannel.delete(name);
    }
    return unlisten(channel, callback, tx);
  };
}

/** A channel's name as PostgreSQL reads it: folded to lower case unless quoted. */
function postgresName(channel: string): string {
  return channel.startsWith('"') && channel.endsWith('"') ? channel.slice(1, -1) : channel.toLowerCase();
}

function deliver(pglite: PGlite, { channel, payload }: BackendMessage): void {
  for (const listener of listeners.get(pglite)?.get(channel ?? "") ?? []) {
    queueMicrotask(() => listener(payload ?? ""));
  }
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
  let turnedAt = performance.now();
  let watching = false;
  // Runs at the next turn of the loop, whatever makes it turn: the chain has not been running since.
  const turned = () => {
    turnedAt = performance.now();
    watching = false;
  };
  const beforeStatement = async () => {
    if (performance.now() - turnedAt >= STATEMENT_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (!watching) {
      watching = true;
      setImmediate(turned);
    }
  };
  // PGlite's own query() runs through the first, the statements of this module through the second.
  const stream = client.execProtocolStream.bind(client);
  client.execProtocolStream = async (...args: Parameters<PGlite["execProtocolStream"]>) => {
    await beforeStatement();
    return stream(...args);
  };
  const rawStream = client.execProtocolRawStream.bind(client);
  client.execProtocolRawStream = async (...args: Parameters<PGlite["execProtocolRawStream"]>) => {
    await beforeStatement();
    return rawStream(...args);
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
  return exclusively(pglite, inTransaction, () => runNamed(pglite, inTransaction, statement));
}

/** Runs `fn` alone on the database; outside a transaction, as query() does, once any transaction under way has ended. */
async function exclusively<T>(pglite: PGlite, inTransaction: boolean, fn: () => Promise<T>): Promise<T> {
  const internals = pglite as unknown as {
    _checkReady(): Promise<void>;
    _runExclusiveTransaction<U>(fn: () => Promise<U>): Promise<U>;
  };
  // A closed database says so, as query() does.
  await internals._checkReady();
  const run = () => pglite.runExclusive(fn);
  if (inTransaction) return run();
  return internals._runExclusiveTransaction(run);
}

async function runNamed(
  pglite: PGlite,
  inTransaction: boolean,
  { name, text, params }: NamedStatement,
): Promise<{ rows: Record<string, unknown>[] }> {
  const prepared = await prepare(pglite, name, text);
  const values = params.map((param, i) => {
    if (param === null || param === undefined) return null;
    // Bytes are bound as they are, in binary format, as node-postgres binds a Buffer.
    if (Buffer.isBuffer(param)) return param;
    const serializer = pglite.serializers[prepared.paramTypes[i] as number];
    return serializer ? serializer(param) : String(param);
  });
  const messages = await exchange(
    pglite,
    Buffer.concat([serialize.bind({ statement: name, values }), serialize.execute({}), serialize.sync()]),
    !inTransaction,
  );
  return { rows: rowsOf(pglite, messages, prepared.fields, "object") as Record<string, unknown>[] };
}

/** The data rows among `messages`, each value parsed by the client's parser for its type. */
function rowsOf(
  pglite: PGlite,
  messages: BackendMessage[],
  fields: Prepared["fields"],
  rowMode: "object" | "array",
): (Record<string, unknown> | unknown[])[] {
  // Dates and times stay as the database wrote them: the client keeps them as text (pglite-text-types.ts).
  const parsers = fields.map((field) => pglite.parsers[field.dataTypeID]);
  const parse = (value: string | null | undefined, i: number) => {
    const parser = parsers[i];
    const type = (fields[i] as Prepared["fields"][number]).dataTypeID;
    return value === null || value === undefined ? null : parser ? parser(value, type) : value;
  };
  const rows: (Record<string, unknown> | unknown[])[] = [];
  for (const message of messages) {
    if (message.name !== "dataRow") continue;
    const values = message.fields as (string | null)[];
    if (rowMode === "array") {
      rows.push(fields.map((_, i) => parse(values[i], i)));
      continue;
    }
    const row: Record<string, unknown> = {};
    fields.forEach((field, i) => {
      row[field.name] = parse(values[i], i);
    });
    rows.push(row);
  }
  return rows;
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
  const messages = await exchange(
    pglite,
    Buffer.concat([
      serialize.parse({ name, text }),
      serialize.describe({ type: "S", name }),
      serialize.sync(),
    ]),
    false,
  );
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
