// What every piece of work receives as `ctx`: request handlers, jobs, the automation engine, pull
// sync. A request adds its caller (`CallerCtx`); work that runs for no caller (a job, a step of a
// run) carries the tenant in its own data.
import type { FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import { actorOf } from "./auth/authenticate.ts";
import type { Actor } from "./auth/tenancy.ts";
import type { Database, Executor } from "./db/database.ts";
import type { Metrics } from "./http/metrics.ts";
import type { Enqueue, EnqueueMany } from "./queue/catalog.ts";
import type { Queue } from "./queue/queue.ts";
import type { Secrets } from "./secrets.ts";

/** The long-lived parts of a running Vigil, shared by requests and jobs. */
export interface Services {
  config: Config;
  database: Database;
  queue: Queue;
  metrics: Metrics;
  secrets: Secrets;
  now: () => Date;
}

export interface Ctx {
  /** The database, or the transaction the work joins. */
  db: Executor;
  log: Logger;
  now: () => Date;
  config: Config;
  secrets: Secrets;
  /** Sends a job, inside the given executor's transaction. */
  enqueue: Enqueue;
  enqueueMany: EnqueueMany;
}

/** A request's context: the work context and the caller. */
export interface CallerCtx extends Ctx {
  actor: Actor;
}

declare module "fastify" {
  interface FastifyInstance {
    services: Services;
  }
}

/** The work context of a running Vigil, logging to `log`. */
export function workContext(
  services: Pick<Services, "database" | "config" | "secrets" | "now"> & {
    queue: Pick<Queue, "enqueue" | "enqueueMany">;
  },
  log: Logger,
): Ctx {
  return {
    db: services.database.db,
    log,
    now: services.now,
    config: services.config,
    secrets: services.secrets,
    enqueue: services.queue.enqueue,
    enqueueMany: services.queue.enqueueMany,
  };
}

export function contextOf(request: FastifyRequest): CallerCtx {
  return {
    ...workContext(request.server.services, request.log as unknown as Logger),
    actor: actorOf(request),
  };
}

/** A request's context for work that only reads: its queries go to the read pool (Database.readDb). */
export function readContextOf(request: FastifyRequest): CallerCtx {
  return { ...contextOf(request), db: request.server.services.database.readDb };
}
