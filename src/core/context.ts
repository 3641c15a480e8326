// What domain functions receive as `ctx`: the database, the caller, a logger and a clock.
import type { FastifyRequest } from "fastify";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import { actorOf } from "./auth/authenticate.ts";
import type { Actor } from "./auth/tenancy.ts";
import type { Database, Db } from "./db/database.ts";
import type { Metrics } from "./http/metrics.ts";
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
  db: Db;
  actor: Actor;
  log: Logger;
  now: () => Date;
  services: Services;
}

declare module "fastify" {
  interface FastifyInstance {
    services: Services;
  }
}

export function contextOf(request: FastifyRequest): Ctx {
  const services = request.server.services;
  return {
    db: services.database.db,
    actor: actorOf(request),
    log: request.log as unknown as Logger,
    now: services.now,
    services,
  };
}
