// useGenericPlans: a named statement's plan is made once per connection and kept while its table
// grows. Made while the table was small, it read the whole table for a lookup by id, and went on
// doing so at any size; the plan must find the rows through the index whatever the table's size
// when it was made.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { rowsReadOf } from "../../../test/plans.ts";
import { executeNamed, useGenericPlans } from "./database.ts";

const SMALL = 20;
const GROWN = 20_000;
const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
const WANTED = [id(3), id(7), id(11)];

for (const engine of ENGINES) {
  describe(`plans kept by a connection [${engine}]`, () => {
    let test: TestDatabase;
    beforeAll(async () => {
      test = await createTestDatabase(engine, { empty: true });
    });
    afterAll(() => test?.drop());

    it("read by index after the table grew, though made while it was small and analyzed", async () => {
      const read = await test.database.transaction(async (tx) => {
        // Wide rows, as alerts are: a few of them fill a page, so reading them all looks cheap.
        await tx.execute(sql`create table plan_probe (id uuid primary key, body text not null)`);
        const insert = (from: number, to: number) =>
          tx.execute(sql`insert into plan_probe (id, body)
            select ('00000000-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid, repeat('x', 600)
            from generate_series(${from}::int, ${to}::int) n`);
        await insert(1, SMALL);
        // The statistics of a small table, as a first ANALYZE (or maintenance pass) leaves them.
        await tx.execute(sql`analyze plan_probe`);
        await useGenericPlans(tx);
        const byId = sql`select id from plan_probe where id = any(${`{${WANTED.join(",")}}`}::uuid[])`;
        const { rows: first } = await executeNamed(tx, "probe.by-id", byId);
        expect(first).toHaveLength(WANTED.length);
        await insert(SMALL + 1, GROWN);
        const { rows } = await tx.execute(
          sql.raw(`explain (analyze, format json) execute "probe.by-id"('{${WANTED.join(",")}}')`),
        );
        return rowsReadOf(rows, "plan_probe");
      });
      expect(read).toBe(WANTED.length);
    });
  });
}
