// A pg pool that rides out a database server that is momentarily full. Where several instances
// (and other applications) share one server, a burst can take its last connection slot; pg's own
// pool then fails the request at once, and an alert delivery would be answered 503 for want of a
// connection that frees up a few milliseconds later.
import pg from "pg";
import { isRefusedConnection } from "./pg-errors.ts";

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

  constructor({ connectWaitMs = CONNECT_WAIT_MS, ...config }: PatientPoolConfig) {
    super(config);
    this.#connectWaitMs = connectWaitMs;
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
        return guarded(await super.connect());
      } catch (err) {
        const wait = delay * (0.5 + Math.random() / 2);
        if (!isRefusedConnection(err) || this.ending || Date.now() + wait > deadline) throw err;
        this.refused += 1;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}

const guardedClients = new WeakSet<pg.PoolClient>();

/**
 * pg's pool stops listening to a client's errors while it is checked out, and a client whose
 * connection is lost then (the server restarted or terminated it, a reset socket) emits an error no
 * one hears: an uncaught exception that ends the process. The statement in flight fails with that
 * error anyway, and the pool drops the client when it is released (it is no longer queryable), so
 * hearing it is all that is needed.
 */
function guarded(client: pg.PoolClient): pg.PoolClient {
  if (guardedClients.has(client)) return client;
  guardedClients.add(client);
  client.on("error", () => {});
  return client;
}
