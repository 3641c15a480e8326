// The `vigil` command: serve, migrate, and key and org administration.
import { Command, Option } from "commander";
import { type Config, ConfigError, loadConfig } from "./config.ts";
import { createApiKey, createOrg, listApiKeys, revokeApiKey } from "./core/auth/keys.ts";
import { isScope, SCOPES, type Scope } from "./core/auth/scopes.ts";
import type { Database } from "./core/db/database.ts";
import { migrate } from "./core/db/migrate.ts";
import { createLogger, openConfiguredDatabase, startVigil } from "./start.ts";

async function withDatabase<T>(config: Config, fn: (database: Database) => Promise<T>): Promise<T> {
  const database = await openConfiguredDatabase(config);
  try {
    await migrate(database.db);
    return await fn(database);
  } finally {
    await database.close();
  }
}

async function serve(config: Config): Promise<void> {
  const vigil = await startVigil(config);
  const { log } = vigil;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) {
      log.warn({ signal }, "second signal: exiting now");
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, "shutting down: finishing in-flight requests and jobs");
    const timer = setTimeout(() => {
      log.error("shutdown timed out");
      process.exit(1);
    }, config.shutdownTimeoutMs + 5000);
    timer.unref();
    try {
      await vigil.stop();
      log.info("stopped");
      process.exit(0);
    } catch (err) {
      log.error({ err }, "shutdown failed");
      process.exit(1);
    }
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
  if (config.role === "worker") {
    log.info("worker started");
    return;
  }
  const address = await vigil.app.listen({ port: config.port, host: config.host });
  log.info({ address, engine: vigil.services.database.engine, role: config.role }, "vigil listening");
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const program = new Command("vigil").description("Vigil: SRE alert and automation service");

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
    const applied = await withDatabase(config, (database) => migrate(database.db));
    log.info({ applied }, applied.length ? "migrations applied" : "schema is current");
  });

const keys = program.command("keys").description("manage API keys");
keys
  .command("create")
  .description("create an API key and print it once")
  .option("--user <name>", "user the key belongs to", "default")
  .option("--name <name>", "label shown in listings", "")
  .option("--org <uuid>", "org the key may act in (repeatable)", collect, [])
  .option("--scope <scope>", `scope to grant (repeatable; default all: ${SCOPES.join(", ")})`, collect, [])
  .action(async (options: { user: string; name: string; org: string[]; scope: string[] }) => {
    const unknown = options.scope.filter((scope) => !isScope(scope));
    if (unknown.length)
      throw new ConfigError(`unknown scope ${unknown.join(", ")}; known: ${SCOPES.join(", ")}`);
    const scopes = options.scope.length ? (options.scope as Scope[]) : SCOPES;
    const created = await withDatabase(loadConfig(), (database) =>
      createApiKey(database.db, { userName: options.user, name: options.name, orgIds: options.org, scopes }),
    );
    process.stdout.write(`id:  ${created.id}\nkey: ${created.key}\n(the key is shown only this once)\n`);
  });
keys
  .command("list")
  .description("list API keys (never the keys themselves)")
  .action(async () => {
    const rows = await withDatabase(loadConfig(), (database) => listApiKeys(database.db));
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
  });
keys
  .command("revoke <id>")
  .description("revoke an API key")
  .action(async (id: string) => {
    const revoked = await withDatabase(loadConfig(), (database) => revokeApiKey(database.db, id));
    process.stdout.write(revoked ? `revoked ${id}\n` : `no active key ${id}\n`);
    if (!revoked) process.exitCode = 1;
  });

program
  .command("orgs")
  .description("manage orgs")
  .command("create <name>")
  .description("create an org and print its id")
  .action(async (name: string) => {
    const id = await withDatabase(loadConfig(), (database) => createOrg(database.db, name));
    process.stdout.write(`${id}\n`);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`vigil: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
