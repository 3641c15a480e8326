// The start-up warning about a PostgreSQL server without autovacuum: given exactly when the server
// has it off (read here from the server itself); never on the embedded database, which runs its own.
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { sql } from "./database.ts";
import { checkServerSettings } from "./server-settings.ts";

for (const engine of ENGINES) {
  describe(`server settings at start [${engine}]`, () => {
    let database: TestDatabase;
    beforeAll(async () => {
      database = await createTestDatabase(engine);
    });
    afterAll(async () => {
      await database.drop();
    });

    it("warns that autovacuum is off when, and only when, the PostgreSQL server has it off", async () => {
      const logged: { level: number; msg: string; autovacuum?: string }[] = [];
      const log = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
      await checkServerSettings(database.database, log);
      const off =
        engine === "postgres" &&
        (await database.database.db.execute(sql`show autovacuum`)).rows[0]?.autovacuum === "off";
      expect(logged.map((line) => [line.level, line.autovacuum])).toEqual(off ? [[40, "off"]] : []);
      if (off) expect(logged[0]?.msg).toContain("VACUUM ANALYZE");
    });
  });
}
