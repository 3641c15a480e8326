// Brings a Vigil up (database, migrations, bootstrap key, job queue, HTTP app) and down again in
// the reverse order. Used by `vigil serve` and by the tests, so both run the same start-up.

import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import pino, { type DestinationStream, type Logger } from "pino";
import { reclassifyAfterRoleChange, reportAlertBacklogs, startStormCorrelator } from "./alerts/index.ts";
import { buildApp } from "./app.ts";
import { configureApps } from "./apps/index.ts";
import { configureAgentRunners } from "./automation/index.ts";
import type { Config } from "./config.ts";
import { ensureBootstrapKey } from "./core/auth/keys.ts";
import type { Services } from "./core/context.ts";
import { noteServingUrl } from "./core/db/data-dir-lock.ts";
import { type Database, openDatabase } from "./core/db/database.ts";
import { startEmbeddedMaintenance } from "./core/db/embedded-maintenance.ts";
import { migrate, unknownMigrations } from "./core/db/migrate.ts";
import { checkServerSettings } from "./core/db/server-settings.ts";
import { createMetrics } from "./core/http/metrics.ts";
import { buildOperationsApp } from "./core/http/operations.ts";
import type { JobDefinition, JobSchedule } from "./core/queue/catalog.ts";
import { startQueue } from "./core/queue/queue.ts";
import { redactSecrets } from "./core/redact.ts";
import type { Repeating } from "./core/repeat.ts";
import { createSecrets, resolveSecretKey, type Secrets } from "./core/secrets.ts";
import { configureInvestigations } from "./investigations/index.ts";
import { JOBS, SCHEDULES } from "./jobs.ts";

export interface Vigil {
  app: FastifyInstance;
  /** The probes and metrics alone, for OPERATIONS_PORT; null when it is not set. */
  operations: FastifyInstance | null;
  services: Services;
  log: Logger;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** An open database to use instead of the one the config names (tests). */
  database?: Database;
  logger?: Logger;
  jobs?: JobDefinition[];
  /** Recurring jobs; the catalog's SCHEDULES by default, none when `jobs` replaces the catalog. */
  schedules?: JobSchedule[];
  pollingIntervalSeconds?: number;
  now?: () => Date;
  extraRoutes?: FastifyPluginAsync[];
}

/** The service's logger; `destination` (stdout by default) lets a test read the lines. */
export function createLogger(config: Config, destination?: DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: { service: "vigil" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Every finished line, whatever logged it: a webhook token in a request URL, or a credential
      // quoted in an error, never reaches the log.
      hooks: { streamWrite: redactSecrets },
    },
    destination,
  );
}

export async function openConfiguredDatabase(config: Config, log?: Logger): Promise<Database> {
  const { databaseUrl } = config;
  if (databaseUrl) {
    log?.info({ engine: "postgres" }, "opening the database");
    try {
      return await openDatabase({ url: databaseUrl, poolSize: config.databasePoolSize }, log);
    } catch (err) {
      // The driver's own words ("connect ECONNREFUSED 127.0.0.1:5432", "role "x" does not exist")
      // do not say which setting they are about.
      const reason = reasonOf(err);
      throw new Error(
        `cannot connect to the database of DATABASE_URL (${databaseWithoutCredentials(databaseUrl)}): ${reason}`,
        { cause: err },
      );
    }
  }
  log?.info({ engine: "pglite", dataDir: config.dataDir }, "opening the database");
  return openDatabase({ dataDir: config.dataDir, cacheMb: config.pgliteCacheMb }, log);
}

/** A postgres:// URL's host, port and database, never its user or password: postgres://db:5432/vigil. */
function databaseWithoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    // A host given as a parameter (a Unix socket's directory) stands in for an empty one.
    const host = parsed.hostname || parsed.searchParams.get("host") || "localhost";
    return `${parsed.protocol}//${host}:${parsed.port || "5432"}${parsed.pathname}`;
  } catch {
    return "an unreadable URL";
  }
}

/** An error's message; a connection tried on several addresses fails with their errors and none of its own. */
function reasonOf(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err.message) return err.message;
  if (err instanceof AggregateError) return err.errors.map(reasonOf).join("; ");
  return err.name;
}

/** Applies the pending migrations, saying which one runs ("applying migration 2 of 7"). */
export function migrateLogged(database: Database, log: Logger): Promise<string[]> {
  return migrate(database.db, (name, index, count) =>
    log.info({ migration: name }, `applying migration ${index} of ${count}`),
  );
}

/**
 * Refuses to start with a SECRET_KEY that cannot open what the database holds sealed (webhook
 * tokens, app tokens, integration credentials): such an instance answered ready, then 500 on every
 * request that read a secret, so a load balancer kept sending it traffic.
 */
export async function checkSecretKey(database: Database, secrets: Secrets): Promise<void> {
  const { rows } = await database.db.execute(sql`
    (select token_sealed as sealed from webhooks limit 1)
    union all (select app_token_sealed from app_installations where app_token_sealed is not null limit 1)
    union all (select credentials_sealed from integrations where credentials_sealed is not null limit 1)`);
  for (const { sealed } of rows) {
    try {
      secrets.decrypt(String(sealed));
    } catch {
      throw new Error(
        "SECRET_KEY does not open the secrets this database holds (webhook tokens, app tokens, integration credentials): start with the key they were sealed with (every instance of one database shares it)",
      );
    }
  }
}

export async function startVigil(config: Config, options: StartOptions = {}): Promise<Vigil> {
  const log = options.logger ?? createLogger(config);
  const database = options.database ?? (await openConfiguredDatabase(config, log));
  let correlator: Repeating | null = null;
  let maintenance: Repeating | null = null;
  try {
    const applied = await migrateLogged(database, log);
    log.info({ applied: applied.length }, applied.length ? "migrations applied" : "schema is current");
    const unknown = await unknownMigrations(database.db);
    if (unknown.length > 0) {
      log.warn(
        { migrations: unknown },
        "the database was migrated by a newer Vigil: this version runs on it, but ignores what the newer one added; run the newer version",
      );
    }
    await checkServerSettings(database, log);
    if (config.bootstrapApiKey) {
      const { revoked } = await ensureBootstrapKey(database.db, config.bootstrapApiKey);
      if (revoked) {
        log.warn(
          "BOOTSTRAP_API_KEY names a key that was revoked: it stays revoked; set another key, or unset BOOTSTRAP_API_KEY",
        );
      }
    }
    const secrets = createSecrets(resolveSecretKey(config.secretKey, config.dataDir));
    await checkSecretKey(database, secrets);
    const now = options.now ?? (() => new Date());
    log.info("starting the job queue");
    const metrics = createMetrics();
    const queue = await startQueue({
      metrics,
      database,
      config,
      log,
      jobs: options.jobs ?? JOBS,
      schedules: options.schedules ?? (options.jobs ? [] : SCHEDULES),
      secrets,
      pollingIntervalSeconds: options.pollingIntervalSeconds,
      now,
    });
    // llm agents run only with an LLM configured; otherwise their nodes fail with "no LLM configured".
    configureAgentRunners(config);
    configureInvestigations();
    configureApps();
    if (config.role !== "api") await queue.work();
    correlator =
      config.role === "api"
        ? null
        : startStormCorrelator(database.db, {
            now,
            impact: { environmentCriticality: config.environmentCriticality },
            reclassify: reclassifyAfterRoleChange(queue.enqueue),
            log,
          });
    // The embedded database has no autovacuum and no checkpointer of its own, whatever the role.
    maintenance = database.engine === "pglite" ? startEmbeddedMaintenance(database.db, { log }) : null;
    const services: Services = { config, database, queue, metrics, secrets, now };
    reportAlertBacklogs(metrics, database.db);
    metrics.countedElsewhere(
      "vigil_database_connections_refused_total",
      "New connections the PostgreSQL server refused for now (at its connection limit, starting up) and that were asked for again",
      database.refusedConnections,
    );
    log.info("preparing the HTTP API");
    const app = await buildApp(services, log, options.extraRoutes);
    await app.ready();
    if (database.engine === "pglite") {
      // Commands refused the data directory then name the port this server really listens on.
      app.server.once("listening", () => {
        const url = loopbackUrlOf(app.server.address());
        if (url) noteServingUrl(config.dataDir, url);
      });
    }
    const operations = config.operationsPort === null ? null : await buildOperationsApp(services, log);
    return {
      app,
      operations,
      services,
      log,
      // Order matters: stop taking requests (in-flight ones finish), then let running jobs finish,
      // then close the database so PGlite flushes its files.
      // SHUTDOWN_TIMEOUT_MS bounds both waits together: a request still in flight then (a slow
      // upload) has its connection closed, so it cannot hold the jobs and the database past it.
      async stop() {
        const deadline = Date.now() + config.shutdownTimeoutMs;
        const cutOff = setTimeout(() => app.server.closeAllConnections(), config.shutdownTimeoutMs);
        try {
          await Promise.all([app.close(), operations?.close()]);
        } finally {
          clearTimeout(cutOff);
        }
        await correlator?.stop();
        await maintenance?.stop();
        await queue.stop(deadline - Date.now());
        await database.close();
      },
    };
  } catch (err) {
    await correlator?.stop();
    await maintenance?.stop();
    await database.close();
    throw err;
  }
}

/** A URL on this machine for a listening address: a wildcard address is reached through loopback. */
function loopbackUrlOf(address: string | AddressInfo | null): string | null {
  // A pipe or socket path is no URL.
  if (!address || typeof address === "string") return null;
  const host =
    address.family === "IPv6" ? `[${address.address === "::" ? "::1" : address.address}]` : address.address;
  return `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${address.port}`;
}
