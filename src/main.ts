// The `vigil` command: serve, migrate, and key and org administration.
import { Command, Option } from "commander";
import { inArray } from "drizzle-orm";
import { type Config, ConfigError, loadConfig, publicUrlWarning } from "./config.ts";
import {
  createKeyOverHttp,
  createOrgOverHttp,
  explainDataDirInUse,
  listKeysOverHttp,
  revokeKeyOverHttp,
  type ServerOptions,
  serverFrom,
} from "./core/auth/admin-cli.ts";
import { createApiKey, createOrg, DEFAULT_USER, listApiKeys, revokeApiKey } from "./core/auth/keys.ts";
import { isScope, SCOPES, type Scope } from "./core/auth/scopes.ts";
import { orgs } from "./core/auth/tables.ts";
import type { Database } from "./core/db/database.ts";
import { migrate } from "./core/db/migrate.ts";
import { collectWhenIdle } from "./core/idle-collection.ts";
import { isUuid } from "./core/ids.ts";
import { PACKAGE_VERSION } from "./core/package-files.ts";
import { installJobSchema } from "./core/queue/queue.ts";
import { JOBS } from "./jobs.ts";
import { createLogger, migrateLogged, openConfiguredDatabase, startVigil } from "./start.ts";

async function withDatabase<T>(config: Config, fn: (database: Database) => Promise<T>): Promise<T> {
  const database = await openConfiguredDatabase(config);
  try {
    await migrate(database.db);
    return await fn(database);
  } finally {
    await database.close();
  }
}

// The bundle (dist/vigil.js) or the TypeScript sources run by tsx: said in the first line logged.
const RUNNING_FROM = import.meta.url.endsWith(".ts") ? "source" : "bundle";

async function serve(config: Config): Promise<void> {
  const log = createLogger(config);
  log.info({ from: RUNNING_FROM, pid: process.pid, role: config.role }, "starting vigil");
  let stopping: string | null = null;
  let stop: ((signal: string) => Promise<void>) | null = null;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = signal;
    // A signal during start-up (Ctrl-C while migrations run) stops once the start is done, so the
    // data directory is released as cleanly as after any other stop.
    if (!stop) log.info({ signal }, "stopping as soon as start-up finishes");
    else await stop(signal);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  const vigil = await startVigil(config, { logger: log });
  const idleCollection = collectWhenIdle();
  stop = async (signal) => {
    log.info({ signal }, "shutting down: finishing in-flight requests and jobs");
    const timer = setTimeout(() => {
      log.error("shutdown timed out");
      process.exit(1);
    }, config.shutdownTimeoutMs + 5000);
    timer.unref();
    try {
      await idleCollection.stop();
      await vigil.stop();
      log.info("stopped");
      process.exit(0);
    } catch (err) {
      log.error({ err }, "shutdown failed");
      process.exit(1);
    }
  };
  if (stopping) return stop(stopping);
  if (vigil.operations && config.operationsPort !== null) {
    const address = await vigil.operations.listen({ port: config.operationsPort, host: config.host });
    log.info({ address }, `probes and metrics on ${address}`);
  }
  if (config.role === "worker") {
    log.info("worker started");
    return;
  }
  const address = await vigil.app.listen({ port: config.port, host: config.host });
  log.info(
    { address, engine: vigil.services.database.engine, role: config.role },
    `vigil listening on ${address}`,
  );
  const warning = publicUrlWarning(config);
  if (warning) log.warn({ publicUrl: config.publicUrl }, warning);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const program = new Command("vigil")
  .description("Vigil: SRE alert and automation service (no command: serve)")
  .version(PACKAGE_VERSION);

program
  .command("serve", { isDefault: true })
  .description("run the API and the workers")
  .addOption(new Option("--role <role>", "all, api or worker").choices(["all", "api", "worker"]))
  .action(async (options: { role?: Config["role"] }) => {
    await serve(loadConfig(process.env, options.role ? { role: options.role } : {}));
  });

program
  .command("migrate")
  .description("apply pending database migrations and exit")
  .action(async () => {
    const config = loadConfig();
    const log = createLogger(config);
    const database = await openConfiguredDatabase(config, log);
    try {
      const applied = await migrateLogged(database, log);
      log.info({ applied }, applied.length ? "migrations applied" : "schema is current");
      log.info("installing the job queue's tables");
      await installJobSchema(database, JOBS);
      log.info("job queue tables are current");
    } finally {
      await database.close();
    }
  });

// keys and orgs work on the database directly (bootstrapping: no key exists yet), or ask a running
// Vigil over HTTP when given one (--url or VIGIL_URL): the embedded database admits one process.
function serverOptions(command: Command): Command {
  return command
    .option("--url <url>", "ask the Vigil at this URL over HTTP (default: VIGIL_URL; none: the database)")
    .option("--api-key <key>", "API key for --url (default: VIGIL_API_KEY)");
}

async function directly<T>(scope: Scope, fn: (database: Database) => Promise<T>): Promise<T> {
  const config = loadConfig();
  try {
    return await withDatabase(config, fn);
  } catch (err) {
    throw explainDataDirInUse(err, { args: process.argv.slice(2), scope, url: config.publicUrl });
  }
}

/** Which of these org ids (lower case) exist. */
async function existingOrgs(db: Database["db"], ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.select({ id: orgs.id }).from(orgs).where(inArray(orgs.id, ids));
  return new Set(rows.map((row) => row.id));
}

const keys = program.command("keys").description("manage API keys (the database, or a Vigil with --url)");
serverOptions(
  keys
    .command("create")
    .description("create an API key and print it once")
    .option("--user <name>", "user the key belongs to (without --url; default: default)")
    .option("--name <name>", "label shown in listings", "")
    .option("--org <uuid>", "org the key may act in (repeatable)", collect, [])
    .option(
      "--scope <scope>",
      `scope to grant (repeatable; default: every scope, or with --url the calling key's; known: ${SCOPES.join(", ")})`,
      collect,
      [],
    ),
).action(async (options: { user?: string; name: string; org: string[]; scope: string[] } & ServerOptions) => {
  const unknown = options.scope.filter((scope) => !isScope(scope));
  if (unknown.length)
    throw new ConfigError(`unknown scope ${unknown.join(", ")}; known: ${SCOPES.join(", ")}`);
  const scopes = options.scope as Scope[];
  const notUuid = options.org.find((org) => !isUuid(org));
  if (notUuid !== undefined) throw new ConfigError(`--org ${notUuid}: must be an organization's id (a uuid)`);
  const server = serverFrom(options, process.env);
  if (server && options.user !== undefined) {
    throw new ConfigError("--user: over HTTP a key belongs to the calling key's user; leave --user out");
  }
  const created = server
    ? await createKeyOverHttp(server, {
        name: options.name,
        org_ids: options.org,
        ...(scopes.length ? { scopes } : {}),
      })
    : await directly("api_keys_write", async (database) => {
        // Over HTTP the server answers 404 for an unknown org; the database would take any uuid.
        const orgIds = options.org.map((org) => org.toLowerCase());
        const known = await existingOrgs(database.db, orgIds);
        const unknownOrg = orgIds.find((org) => !known.has(org));
        if (unknownOrg !== undefined) throw new ConfigError(`--org ${unknownOrg}: no such organization`);
        return createApiKey(database.db, {
          userName: options.user ?? DEFAULT_USER,
          name: options.name,
          orgIds,
          scopes: scopes.length ? scopes : SCOPES,
        });
      });
  process.stdout.write(`id:  ${created.id}\nkey: ${created.key}\n(the key is shown only this once)\n`);
});
serverOptions(
  keys
    .command("list")
    .description("list API keys (never the keys themselves); with --url, the caller's user's"),
).action(async (options: ServerOptions) => {
  const server = serverFrom(options, process.env);
  const rows = server
    ? await listKeysOverHttp(server)
    : await directly("api_keys_read", (database) => listApiKeys(database.db));
  process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
});
serverOptions(keys.command("revoke <id>").description("revoke an API key")).action(
  async (id: string, options: ServerOptions) => {
    const server = serverFrom(options, process.env);
    if (server) {
      await revokeKeyOverHttp(server, id);
      process.stdout.write(`revoked ${id}\n`);
      return;
    }
    const revoked = await directly("api_keys_write", (database) => revokeApiKey(database.db, id));
    process.stdout.write(revoked ? `revoked ${id}\n` : `no active key ${id}\n`);
    if (!revoked) process.exitCode = 1;
  },
);

serverOptions(
  program
    .command("orgs")
    .description("manage orgs")
    .command("create <name>")
    .description("create an org and print its id (with --url, the calling key may act in it at once)"),
).action(async (name: string, options: ServerOptions) => {
  const server = serverFrom(options, process.env);
  const id = server
    ? (await createOrgOverHttp(server, name)).id
    : await directly("orgs_write", (database) => createOrg(database.db, name));
  process.stdout.write(`${id}\n`);
});

// serve is the default command, so a mistyped one would reach it as an argument ("too many arguments
// for 'serve'"): it is named as the unknown command it is.
const first = process.argv[2];
const commands = program.commands.map((command) => command.name());
if (first !== undefined && !first.startsWith("-") && ![...commands, "help"].includes(first)) {
  program.error(`error: unknown command '${first}' (commands: ${commands.join(", ")}; see vigil --help)`);
}

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`vigil: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
