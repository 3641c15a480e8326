// The translation of alert rows to the JSON records ingest writes: every column under its name, and
// times as JSON.stringify writes them, whichever times the rows before had.
import { getTableColumns } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alerts } from "../tables.ts";
import { recordFromRow } from "./alert-rows.ts";

type AlertRow = typeof alerts.$inferSelect;

/** A row with every column set: text to its own name, times to those given. */
function rowWith(
  times: Partial<Record<"createdAt" | "updatedAt" | "triggeredAt" | "resolvedAt", Date | null>>,
): AlertRow {
  const row: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(getTableColumns(alerts))) {
    row[field] = column.columnType === "PgTimestamp" ? null : `${field} value`;
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
