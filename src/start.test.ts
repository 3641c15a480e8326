// Start-up checks that need a database: a SECRET_KEY that cannot open the stored secrets is refused;
// migrations of a newer version are named.
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { registerAlerts } from "../test/alerts.ts";
import { describeEachEngine } from "../test/harness.ts";
import { unknownMigrations } from "./core/db/migrate.ts";
import { createSecrets } from "./core/secrets.ts";
import { checkSecretKey } from "./start.ts";

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
