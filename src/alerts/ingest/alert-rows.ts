// The ingest hot path reads and writes alerts with fixed SQL text and one JSON parameter, instead of
// building a statement per request: at 50 alerts a body, building the SQL cost more than running it.
// These helpers translate between the table's TypeScript rows and its database records.
import { getTableColumns } from "drizzle-orm";
import { isTimestamptz, parseTimestamptz } from "../../core/db/timestamptz.ts";
import { alerts } from "../tables.ts";

type AlertRow = typeof alerts.$inferSelect;

const COLUMNS = Object.entries(getTableColumns(alerts)).map(([key, column]) => ({
  key: key as keyof AlertRow,
  name: column.name,
  isTime: isTimestamptz(column),
}));

/** Every column, as a select list. */
export const ALERT_SELECT_LIST = COLUMNS.map((column) => `"${column.name}"`).join(", ");

/** `update alerts set ... from <records> r` list: every column but the key takes the record's value. */
export const ALERT_UPDATE_LIST = COLUMNS.filter((column) => column.key !== "id")
  .map((column) => `"${column.name}" = r."${column.name}"`)
  .join(", ");

// Both translations are compiled from the column list into one object literal: a record built by
// assigning its 50 properties one at a time is left in V8's dictionary mode, and JSON.stringify took
// twice as long on it (18 against 9 µs an alert), as did every later read and copy of a row.
const key = (name: string) => JSON.stringify(name);

/**
 * A record as the driver returns it (snake_case names) -> a typed row. Its times are PostgreSQL's
 * text, read as the table's columns read them (Date's own parser read year 49 as 2049, and the
 * alert's next change wrote that back).
 */
export const rowFromRecord = new Function(
  "time",
  `return (record) => ({${COLUMNS.map(({ key: field, name, isTime }) =>
    isTime ? `${key(field)}: time(record[${key(name)}])` : `${key(field)}: record[${key(name)}]`,
  ).join(", ")}});`,
)((value: unknown) => (typeof value === "string" ? parseTimestamptz(value) : value)) as (
  record: Record<string, unknown>,
) => AlertRow;

/** A typed row -> a JSON record for json_populate_recordset(null::alerts, ...), its times as text. */
export const recordFromRow = new Function(
  "time",
  `return (row) => ({${COLUMNS.map(({ key: field, name, isTime }) =>
    isTime ? `${key(name)}: time(row[${key(field)}])` : `${key(name)}: row[${key(field)}]`,
  ).join(", ")}});`,
)(timeText) as (row: AlertRow) => Record<string, unknown>;

// The alerts of a delivery share their received time (created, updated) and mostly their source's
// times: the text of the last time written is kept. Date's own toJSON, run for each time of each
// row, took half of JSON.stringify's time on an alert (3.3 of 6.7 µs).
let lastTime = Number.NaN;
let lastText = "";

/** A time as JSON.stringify writes it (null for no time or an invalid one). */
function timeText(value: Date | null): string | null {
  if (value === null) return null;
  const time = value.getTime();
  if (time === lastTime) return lastText;
  if (Number.isNaN(time)) return null;
  lastTime = time;
  lastText = value.toISOString();
  return lastText;
}
