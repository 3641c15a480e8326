// PostgreSQL errors by their SQLSTATE, on both engines: drizzle wraps the driver's error (pg or
// PGlite) in its own, so the code may sit on the error or on its cause.

/** The database's own error inside whatever wrapped it: the first with a SQLSTATE code. */
function databaseErrorOf(err: unknown): { code: string; message: string } | undefined {
  for (let current = err, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return { code, message: String(message) };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The SQLSTATE of a database error, wherever the wrapping put it. */
export function sqlStateOf(err: unknown): string | undefined {
  return databaseErrorOf(err)?.code;
}

/** The database's own message for an error drizzle wrapped (its own message names the query). */
export function databaseMessageOf(err: unknown): string {
  return databaseErrorOf(err)?.message ?? (err instanceof Error ? err.message : String(err));
}

export const isUniqueViolation = (err: unknown): boolean => sqlStateOf(err) === "23505";

/**
 * A unique violation or a deadlock: two writers raced for the same new row. The loser's
 * transaction is rolled back whole, so running it again is safe and finds the winner's row.
 */
export const isRetryableConflict = (err: unknown): boolean => {
  const state = sqlStateOf(err);
  return state === "23505" || state === "40P01";
};

/** Runs `work` again (at most `attempts` times in all) while it fails with a retryable conflict. */
export async function retryOnConflict<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !isRetryableConflict(err)) throw err;
    }
  }
}

/**
 * The server refused a new connection for now: it is at its connection limit (53300, the server's
 * or a role's or database's own) or starting up or shutting down (57P03). Nothing ran on it, so
 * asking again is safe.
 */
export const isRefusedConnection = (err: unknown): boolean => {
  const state = sqlStateOf(err);
  return state === "53300" || state === "57P03";
};

/** Socket failures between Vigil and the database server (refused, reset, unreachable, timed out). */
const NETWORK_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** pg's own errors for a connection that ended under a query, or a client left broken by one. */
const CONNECTION_LOST = /^(Connection terminated|Client has encountered a connection error)/;

/** Errors met while opening a connection (markConnectFailure), wherever they are wrapped later. */
const connectFailures = new WeakSet<object>();

/**
 * Marks `err` as met while opening a new connection: the server refused us (a wrong password, a
 * role that may not log in, a database that is gone, that allows no connections or that the role
 * may no longer connect to) or could not be reached. Nothing ran, and what was refused is the
 * operator's to fix: isDatabaseUnavailable then takes it as an unavailable database, whatever its
 * SQLSTATE (a 42501 there is CONNECT revoked, not a statement's missing grant).
 */
export function markConnectFailure(err: unknown): unknown {
  if (err && typeof err === "object") connectFailures.add(err);
  return err;
}

/**
 * The database could not be reached or could not take the work (a connection refused, lost or
 * terminated, the server short of resources): a request that met it may succeed when sent again,
 * so it is answered 503, not 500. Any failure to open a connection (markConnectFailure); SQLSTATE
 * classes 08 (connection exception), 28 (authorization: only ever raised as a connection opens)
 * and 53 (insufficient resources), 57P01..57P04 (the server shutting down or starting, the
 * database dropped); the sockets' own errors, and pg's own for a connection that ended mid-query.
 * Any other error of a statement on an open connection is not: a 42501 there is a missing grant on
 * a table, which sending the request again does not fix, and is answered 500 and logged as an error.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let current = err, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    if (connectFailures.has(current)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  const state = sqlStateOf(err);
  if (state) return /^(08|28|53)/.test(state) || /^57P0[1-4]$/.test(state);
  for (let current = err, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    // fetch (a model, a peer) fails with the same socket codes under its own TypeError.
    if (current instanceof TypeError && message === "fetch failed") return false;
    if (typeof code === "string" && NETWORK_ERRORS.has(code)) return true;
    if (typeof message === "string" && CONNECTION_LOST.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
