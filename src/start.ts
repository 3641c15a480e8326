// Brings a Vigil up (database, migrations, bootstrap key, job queue, HTTP app) and down again in
// the reverse order. Used by `vigil serve` and by the tests, so both run the same start-up.
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import pino, { type DestinationStream, type Logger } from "pino";
import { type StormCorrelator, startStormCorrelator } from "./alerts/index.ts";
import { buildApp } from "./app.ts";
import { configureAgentRunners } from "./automation/index.ts";
import type { Config } from "./config.ts";
import { ensureBootstrapKey } from "./core/auth/keys.ts";
import type { Services } from "./core/context.ts";
import { type Database, openDatabase } from "./core/db/database.ts";
import { migrate } from "./core/db/migrate.ts";
import { createMetrics } from "./core/http/metrics.ts";
import type { JobDefinition, JobSchedule } from "./core/queue/catalog.ts";
import { startQueue } from "./core/queue/queue.ts";
import { redactSecrets } from "./core/redact.ts";
import { createSecrets, resolveSecretKey } from "./core/secrets.ts";
import { configureInvestigations } from "./investigations/index.ts";
import { JOBS, SCHEDULES } from "./jobs.ts";

export interface Vigil {
  app: FastifyInstance;
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

export async function openConfiguredDatabase(config: Config): Promise<Database> {
  return config.databaseUrl
    ? openDatabase({ url: config.databaseUrl })
    : openDatabase({ dataDir: config.dataDir });
}

export async function startVigil(config: Config, options: StartOptions = {}): Promise<Vigil> {
  const log = options.logger ?? createLogger(config);
  const database = options.database ?? (await openConfiguredDatabase(config));
  let correlator: StormCorrelator | null = null;
  try {
    const applied = await migrate(database.db);
    if (applied.length > 0) log.info({ applied }, "migrations applied");
    if (config.bootstrapApiKey) await ensureBootstrapKey(database.db, config.bootstrapApiKey);
    const secrets = createSecrets(resolveSecretKey(config.secretKey, config.dataDir));
    const now = options.now ?? (() => new Date());
    const queue = await startQueue({
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
    if (config.role !== "api") await queue.work();
    correlator =
      config.role === "api"
        ? null
        : startStormCorrelator(database.db, {
            now,
            impact: { environmentCriticality: config.environmentCriticality },
            log,
          });
    const services: Services = { config, database, queue, metrics: createMetrics(), secrets, now };
    const app = await buildApp(services, log, options.extraRoutes);
    await app.ready();
    return {
      app,
      services,
      log,
      // Order matters: stop taking requests (in-flight ones finish), then let running jobs finish,
      // then close the database so PGlite flushes its files.
      async stop() {
        await app.close();
        await correlator?.stop();
        await queue.stop();
        await database.close();
      },
    };
  } catch (err) {
    await correlator?.stop();
    await database.close();
    throw err;
  }
}
