// Start-up checks that need a database: a SECRET_KEY that cannot open the stored secrets is refused;
// migrations of a newer version are named; a DATABASE_URL that cannot be connected to is named.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { rmSync } from "node:fs";
import { createServer } from "node:net";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { registerAlerts } from "../test/alerts.ts";
import { describeEachEngine, testConfig } from "../test/harness.ts";
import { unknownMigrations } from "./core/db/migrate.ts";
import { createSecrets } from "./core/secrets.ts";
import { checkSecretKey, openConfiguredDatabase } from "./start.ts";

describeEachEngine("start-up", (harness) => {
  it("refuses a SECRET_KEY that cannot open the database's sealed secrets, and takes the right one", async () => {
    const h = harness();
    const { database } = h.vigil.services;
    // Nothing sealed yet: any key will do.
    await checkSecretKey(database, createSecrets("another-key-0123456789"));
    const { auth } = await h.createKey();
    await registerAlerts(h, auth, { source: "alertmanager", integration: "sealed" });
    await expect(checkSecretKey(database, createSecrets("another-key-0123456789"))).rejects.toThrow(
      /^SECRET_KEY does not open the secrets this database holds/,
    );
    await expect(checkSecretKey(database, h.vigil.services.secrets)).resolves.toBeUndefined();
  });

  it("names the migrations a newer version applied, and none on a current database", async () => {
    const { db } = harness().vigil.services.database;
    expect(await unknownMigrations(db)).toEqual([]);
    await db.execute(sql`insert into vigil_migrations (name) values ('9999_from_a_newer_vigil.sql')`);
    try {
      expect(await unknownMigrations(db)).toEqual(["9999_from_a_newer_vigil.sql"]);
    } finally {
      await db.execute(sql`delete from vigil_migrations where name = '9999_from_a_newer_vigil.sql'`);
    }
  });
});

describe("a DATABASE_URL that cannot be connected to", () => {
  /** What opening the database of `databaseUrl` fails with. */
  async function failureOf(databaseUrl: string): Promise<string> {
    const config = testConfig({ databaseUrl });
    try {
      const database = await openConfiguredDatabase(config);
      await database.close();
      return "opened";
    } catch (err) {
      return (err as Error).message;
    } finally {
      rmSync(config.dataDir, { recursive: true, force: true });
    }
  }

  it("names DATABASE_URL and its host, port and database, never its password", async () => {
    // A port nobody listens on: taken, then freed.
    const server = createServer().listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as { port: number };
    server.close();
    await once(server, "close");
    expect(await failureOf(`postgres://vigil:hunter2@127.0.0.1:${port}/vigil`)).toBe(
      `cannot connect to the database of DATABASE_URL (postgres://127.0.0.1:${port}/vigil): connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(await failureOf("postgresql://vigil:hunter2@no-such-host.invalid/vigil")).toMatch(
      /^cannot connect to the database of DATABASE_URL \(postgresql:\/\/no-such-host\.invalid:5432\/vigil\): getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
    );
  });

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))(
    "names it when the server refuses the role [postgres]",
    async () => {
      const url = new URL(process.env.TEST_DATABASE_URL ?? "");
      const role = `vigil_nobody_${randomBytes(4).toString("hex")}`;
      url.username = role;
      url.password = "hunter2";
      url.pathname = "/vigil_no_such_database";
      const shown = `postgres://${url.hostname}:${url.port || "5432"}/vigil_no_such_database`;
      expect(await failureOf(url.toString())).toBe(
        `cannot connect to the database of DATABASE_URL (${shown}): role "${role}" does not exist`,
      );
    },
  );
});
