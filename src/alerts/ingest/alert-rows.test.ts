// The translation of alert rows to the JSON records ingest writes: every column under its name, and
// times as JSON.stringify writes them, whichever times the rows before had.
import { getTableColumns } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { isTimestamptz } from "../../core/db/timestamptz.ts";
import { alerts } from "../tables.ts";
import { recordFromRow, rowFromRecord } from "./alert-rows.ts";

type AlertRow = typeof alerts.$inferSelect;

/** A row with every column set: text to its own name, times to those given. */
function rowWith(
  times: Partial<Record<"createdAt" | "updatedAt" | "triggeredAt" | "resolvedAt", Date | null>>,
): AlertRow {
  const row: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(getTableColumns(alerts))) {
    row[field] = isTimestamptz(column) ? null : `${field} value`;
  }
  return { ...row, ...times } as unknown as AlertRow;
}

describe("recordFromRow", () => {
  it("names each column as the table does, and writes times as JSON writes a Date", () => {
    const first = new Date("2026-03-04T05:06:07.089Z");
    const second = new Date("2026-03-04T05:06:07.090Z");
    // The same time twice, then another, then the first again: no row takes a text left by another.
    const rows = [
      rowWith({ createdAt: first, updatedAt: first, triggeredAt: second, resolvedAt: null }),
      rowWith({ createdAt: second, updatedAt: first, triggeredAt: second, resolvedAt: first }),
      rowWith({ createdAt: new Date(Number.NaN), updatedAt: second, triggeredAt: first, resolvedAt: null }),
    ];
    for (const row of rows) {
      const expected: Record<string, unknown> = {};
      for (const [field, column] of Object.entries(getTableColumns(alerts))) {
        expected[column.name] = row[field as keyof AlertRow];
      }
      expect(JSON.parse(JSON.stringify(recordFromRow(row)))).toEqual(JSON.parse(JSON.stringify(expected)));
    }
  });
});

describe("rowFromRecord", () => {
  it("reads every time column as PostgreSQL writes it, in any year and offset", () => {
    // The text of 0049-03-04T05:06:07.089Z in a session in UTC, and in one in Kolkata (whose local
    // mean time PostgreSQL writes to the second). Date's own parser reads both as 2049 or not at all.
    const texts = ["0049-03-04 05:06:07.089+00", "0049-03-04 10:59:35.089+05:53:28"];
    for (const text of texts) {
      const record: Record<string, unknown> = {};
      const expected: Record<string, unknown> = {};
      for (const [field, column] of Object.entries(getTableColumns(alerts))) {
        record[column.name] = isTimestamptz(column) ? text : `${field} value`;
        expected[field] = isTimestamptz(column) ? "0049-03-04T05:06:07.089Z" : `${field} value`;
      }
      const row = rowFromRecord(record) as unknown as Record<string, unknown>;
      const read = Object.fromEntries(
        Object.entries(row).map(([field, value]) => [
          field,
          value instanceof Date ? value.toISOString() : value,
        ]),
      );
      expect(read, text).toEqual(expected);
    }
  });

  it("keeps a missing time missing, and a Date as it is", () => {
    const date = new Date("2026-03-04T05:06:07.089Z");
    const row = rowFromRecord({ triggered_at: date, resolved_at: null });
    expect([row.triggeredAt, row.resolvedAt]).toEqual([date, null]);
  });
});
