// The ingest hot path reads and writes alerts with fixed SQL text and one JSON parameter, instead of
// building a statement per request: at 50 alerts a body, building the SQL cost more than running it.
// These helpers translate between the table's TypeScript rows and its database records.
import { getTableColumns } from "drizzle-orm";
import { alerts } from "../tables.ts";

type AlertRow = typeof alerts.$inferSelect;

const COLUMNS = Object.entries(getTableColumns(alerts)).map(([key, column]) => ({
  key: key as keyof AlertRow,
  name: column.name,
  isTime: column.columnType === "PgTimestamp",
}));

/** Every column, as a select list. */
export const ALERT_SELECT_LIST = COLUMNS.map((column) => `"${column.name}"`).join(", ");

/** `on conflict (id) do update set` list: every column but the key takes the new value. */
export const ALERT_UPDATE_LIST = COLUMNS.filter((column) => column.key !== "id")
  .map((column) => `"${column.name}" = excluded."${column.name}"`)
  .join(", ");

/** A record as the driver returns it (snake_case names) -> a typed row. */
export function rowFromRecord(record: Record<string, unknown>): AlertRow {
  const row: Record<string, unknown> = {};
  for (const column of COLUMNS) {
    const value = record[column.name];
    row[column.key] =
      column.isTime && value !== null && !(value instanceof Date) ? new Date(String(value)) : value;
  }
  return row as AlertRow;
}

/** A typed row -> a JSON record for json_populate_recordset(null::alerts, ...). */
export function recordFromRow(row: AlertRow): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const column of COLUMNS) record[column.name] = row[column.key];
  return record;
}
