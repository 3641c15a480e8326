// parseTimestamptz on the text each engine writes for a timestamptz, in sessions of several time
// zones: a session's zone is the server's setting (Vigil sets none; the embedded database's is UTC),
// and before a zone's standard time PostgreSQL writes its local mean time, an offset with seconds.
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, ENGINES, type TestDatabase } from "../../../test/harness.ts";
import { parseTimestamptz } from "./timestamptz.ts";

/** Times as toISOString writes them: years 1 to 9999, the ones before 100 that Date.UTC misreads. */
const TIMES = [
  "0001-01-02T00:00:00.000Z",
  "0001-03-04T05:06:07.089Z",
  "0049-03-04T05:06:07.089Z",
  "0050-03-04T05:06:07.089Z",
  "0099-12-31T23:59:59.999Z",
  "0100-01-01T00:00:00.000Z",
  "0999-06-07T08:09:10.100Z",
  "1000-01-01T00:00:00.000Z",
  "1850-06-01T12:00:00.000Z",
  "1969-12-31T23:59:59.999Z",
  "1999-03-04T05:06:07.089Z",
  "2026-07-01T00:00:00.500Z",
  "9999-12-30T23:59:59.999Z",
];

// UTC, whole hours both ways, half hours (St John's, Kolkata), summer time, and before each zone's
// standard time its local mean time, with seconds (Kolkata +05:53:28, Kiritimati -10:29:20).
const ZONES = [
  "UTC",
  "Europe/Amsterdam",
  "America/St_Johns",
  "Asia/Kolkata",
  "Pacific/Kiritimati",
  "Pacific/Pago_Pago",
  "America/Los_Angeles",
];

/** A Date in any year, as Date.UTC would build it without its years-0-to-99 rule. */
function utc(year: number, month: number, day: number, hour: number, minute: number, second: number, ms = 0) {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date;
}

for (const engine of ENGINES) {
  describe(`parseTimestamptz [${engine}]`, () => {
    let testDatabase: TestDatabase;

    beforeAll(async () => {
      testDatabase = await createTestDatabase(engine);
    });
    afterAll(async () => {
      await testDatabase.drop();
    });

    /** The text the database writes for each of `inputs` (timestamptz literals) in a session of `zone`. */
    async function textsOf(zone: string, inputs: string[]): Promise<string[]> {
      return testDatabase.database.transaction(async (tx) => {
        await tx.execute(sql`select set_config('TimeZone', ${zone}, true)`);
        const texts = [];
        for (const input of inputs) {
          const { rows } = await tx.execute(sql`select ${input}::timestamptz::text as text`);
          texts.push(String(rows[0]?.text));
        }
        return texts;
      });
    }

    it("reads every year and offset back to the time written", async () => {
      for (const zone of ZONES) {
        const texts = await textsOf(zone, TIMES);
        expect(
          texts.map((text) => parseTimestamptz(text).toISOString()),
          `${zone}: ${texts.join(", ")}`,
        ).toEqual(TIMES);
      }
    });

    it("reads years past 9999 and BC, drops microseconds, and leaves infinity no time", async () => {
      const inputs = [
        "12345-06-07 08:09:10.5+00",
        "0044-03-15 12:00:00+00 BC",
        "0001-12-31 23:59:59.999+00 BC",
        "2026-03-04 05:06:07.089999+00",
        "0049-03-04 05:06:07.000001+00",
        "infinity",
        "-infinity",
      ];
      for (const zone of ["UTC", "Asia/Kolkata"]) {
        const texts = await textsOf(zone, inputs);
        expect(
          texts.map((text) => parseTimestamptz(text).getTime()),
          `${zone}: ${texts.join(", ")}`,
        ).toEqual([
          utc(12345, 6, 7, 8, 9, 10, 500).getTime(),
          utc(-43, 3, 15, 12, 0, 0).getTime(),
          utc(0, 12, 31, 23, 59, 59, 999).getTime(),
          utc(2026, 3, 4, 5, 6, 7, 89).getTime(),
          utc(49, 3, 4, 5, 6, 7).getTime(),
          Number.NaN,
          Number.NaN,
        ]);
      }
    });
  });
}
