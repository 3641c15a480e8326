// A pg pool that rides out a database server that is momentarily full. Where several instances
// (and other applications) share one server, a burst can take its last connection slot; pg's own
// pool then fails the request at once, and an alert delivery would be answered 503 for want of a
// connection that frees up a few milliseconds later.
import pg from "pg";
import type { Logger } from "pino";
import { isRefusedConnection, markConnectFailure } from "./pg-errors.ts";

/** How long a request waits, at most, for the server to accept a new connection. */
export const CONNECT_WAIT_MS = 5000;
const FIRST_DELAY_MS = 50;
const LONGEST_DELAY_MS = 1000;

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

export interface PatientPoolConfig extends pg.PoolConfig {
  /** How long a refused connection is asked for again (CONNECT_WAIT_MS unless set). */
  connectWaitMs?: number;
  /** Hears each connection the server ends (a warning); pg's own `log` option is its debug trace. */
  logger?: Logger;
}

/**
 * A new connection the server refuses for now (at its limit, starting up: `isRefusedConnection`)
 * is asked for again, after 50 ms and then twice as long each time (at most 1 s, jittered so that
 * instances refused together do not return together), until `connectWaitMs` has passed. Nothing
 * ran on a refused connection, so asking again is safe; any other failure is the caller's at once.
 */
export class PatientPool extends pg.Pool {
  /** Connections the server refused and that were asked for again, since the pool opened. */
  refused = 0;
  readonly #connectWaitMs: number;
  readonly #checkedOut = new WeakSet<pg.PoolClient>();

  constructor({ connectWaitMs = CONNECT_WAIT_MS, logger, ...config }: PatientPoolConfig) {
    super(config);
    this.#connectWaitMs = connectWaitMs;
    // pg's pool listens to a client's errors only while the client is idle: from the moment it is
    // handed out (even before whoever asked for it has it) until it is released, an error no one
    // hears (the server ended the connection: pg_terminate_backend, a restart, a reset socket) is
    // an uncaught exception that ends the process. Its FATAL can arrive in the very socket read
    // that made a new connection ready, so the listener goes on before the client is handed out:
    // 'connect' is emitted then, once per new client.
    this.on("connect", (client) => {
      let heard = false;
      client.on("error", (err) => {
        // The socket's end follows the server's FATAL as a second error: one line per connection.
        if (!heard) {
          heard = true;
          logger?.warn(
            { err, application: config.application_name },
            "the database server ended a connection; the pool drops it",
          );
        }
        if (this.#checkedOut.has(client)) releaseLost(client, err);
      });
    });
    // An idle client's error is passed on to the pool's own 'error' event, which must be heard as
    // well: the client's listener above has said it, and the pool has dropped the client.
    this.on("error", () => {});
    this.on("acquire", (client) => this.#checkedOut.add(client));
    this.on("release", (_err, client) => this.#checkedOut.delete(client));
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  // pg's pool calls `this.connect(callback)` for each `query` it runs, so both forms wait alike.
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    const connected = this.#connectPatiently();
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | undefined)),
      (err: Error) => callback(err, undefined, () => {}),
    );
    return undefined;
  }

  async #connectPatiently(): Promise<pg.PoolClient> {
    const deadline = Date.now() + this.#connectWaitMs;
    for (let delay = FIRST_DELAY_MS; ; delay = Math.min(delay * 2, LONGEST_DELAY_MS)) {
      try {
        return await super.connect();
      } catch (err) {
        const wait = delay * (0.5 + Math.random() / 2);
        if (!isRefusedConnection(err) || this.ending || Date.now() + wait > deadline) {
          throw markConnectFailure(err);
        }
        this.refused += 1;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}

/**
 * Gives a lost connection back to the pool at once, which drops it and may open another in its
 * place; the holder's own release later does nothing, and its statements fail as on any lost
 * connection. Left to the holder, a client could stay checked out for good: drizzle's transaction
 * releases its client only once BEGIN has succeeded, so each connection lost under a BEGIN took a
 * slot of the pool until every request waited for a connection that never came.
 */
function releaseLost(client: pg.PoolClient, err: Error): void {
  const release = client.release;
  client.release = () => {};
  release(err);
}
