// A fresh DATA_DIR starts as a copy of the migrated template, and only when the template fits: made
// by this PGlite, holding no migration this code does not know. PGlite only: the template is the
// embedded engine's files.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrationNames } from "../package-files.ts";
import { openDatabase } from "./database.ts";
import { migrate, pendingMigrations } from "./migrate.ts";
import { pgliteVersion, seedFromTemplate, TEMPLATE_STAMP, type TemplateStamp } from "./pglite-template.ts";

const SLOW = 300_000;

describe("the PGlite template", () => {
  const work = mkdtempSync(join(tmpdir(), "vigil-template-"));
  const template = join(work, "made", "pglite");
  const stamp = (value: TemplateStamp) =>
    writeFileSync(join(template, TEMPLATE_STAMP), JSON.stringify(value));
  const fitting = (): TemplateStamp => ({ pglite: pgliteVersion(), migrations: migrationNames() });
  let next = 0;
  /** An empty database directory, as openDatabase makes it under a fresh DATA_DIR. */
  const emptyDataPath = () => {
    const dataPath = join(work, `data-${next++}`, "pglite");
    mkdirSync(dataPath, { recursive: true });
    return dataPath;
  };

  beforeAll(async () => {
    // The template: a migrated database with one table of its own, so a copy can be told apart.
    const database = await openDatabase({ dataDir: join(work, "made") });
    await migrate(database.db);
    await database.db.execute(sql`create table made_by_this_test (id int)`);
    await database.close();
  }, SLOW);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(
    "seeds an empty directory with a migrated copy that opens",
    async () => {
      stamp(fitting());
      const dataPath = emptyDataPath();
      expect(seedFromTemplate(dataPath, template)).toEqual({ seeded: true, reason: "template" });
      const database = await openDatabase({ dataDir: join(dataPath, "..") });
      try {
        expect(await pendingMigrations(database.db)).toEqual([]);
        const copied = await database.db.execute(
          sql`select to_regclass('made_by_this_test') is not null as present`,
        );
        expect(copied.rows[0]?.present).toBe(true);
      } finally {
        await database.close();
      }
    },
    SLOW,
  );

  it("leaves a directory that holds anything alone", () => {
    stamp(fitting());
    const dataPath = emptyDataPath();
    writeFileSync(join(dataPath, "PG_VERSION"), "17\n");
    expect(seedFromTemplate(dataPath, template)).toEqual({ seeded: false, reason: "existing" });
  });

  it("is not used without its stamp, from another PGlite, or with a migration this code lacks", () => {
    rmSync(join(template, TEMPLATE_STAMP), { force: true });
    expect(seedFromTemplate(emptyDataPath(), template).reason).toContain("no template");

    stamp({ ...fitting(), pglite: "0.0.1" });
    expect(seedFromTemplate(emptyDataPath(), template)).toEqual({
      seeded: false,
      reason: "template made by PGlite 0.0.1",
    });

    stamp({ ...fitting(), migrations: [...migrationNames(), "9999_from_elsewhere.sql"] });
    expect(seedFromTemplate(emptyDataPath(), template)).toEqual({
      seeded: false,
      reason: "template holds unknown migration 9999_from_elsewhere.sql",
    });
  });
});
