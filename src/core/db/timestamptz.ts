// A `timestamp with time zone` column read by a parser of PostgreSQL's own text output. Both engines
// hand such values to Vigil as text (pglite-text-types.ts; drizzle's pg session does the same), and
// drizzle's timestamp column reads that text with `new Date(text)`: V8 reads "0049-03-04 05:06:07+00"
// as 2049, and cannot read the offsets with seconds ("+05:53:28") that a session in a zone other
// than UTC (the server's setting: Vigil sets none) prints for times before that zone's standard
// time. Sources' times run from year 1 to 9999.
import type { Column } from "drizzle-orm";
import { customType } from "drizzle-orm/pg-core";

/** 400 Gregorian years, in milliseconds: the calendar repeats after them. */
const MS_PER_400_YEARS = 146_097 * 86_400_000;

/** The number the digits text[start, end) write, or NaN if one of them is not a digit. */
function digitsAt(text: string, start: number, end: number): number {
  let value = 0;
  for (let at = start; at < end; at++) {
    const digit = text.charCodeAt(at) - 48;
    if (!(digit >= 0 && digit <= 9)) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * The milliseconds since the epoch of PostgreSQL's text for a timestamptz under DateStyle ISO (the
 * default, and the embedded database's): `YYYY-MM-DD HH:MM:SS[.ffffff]±HH[:MM[:SS]][ BC]`, the year
 * 4 digits or more. NaN for any other text.
 */
function timestamptzMs(text: string): number {
  const yearEnd = text.indexOf("-", 4);
  if (yearEnd < 4) return Number.NaN;
  let year = digitsAt(text, 0, yearEnd);
  const month = digitsAt(text, yearEnd + 1, yearEnd + 3);
  const day = digitsAt(text, yearEnd + 4, yearEnd + 6);
  const hour = digitsAt(text, yearEnd + 7, yearEnd + 9);
  const minute = digitsAt(text, yearEnd + 10, yearEnd + 12);
  const second = digitsAt(text, yearEnd + 13, yearEnd + 15);
  if (
    text.charCodeAt(yearEnd + 3) !== 45 || // -
    text.charCodeAt(yearEnd + 6) !== 32 || // space
    text.charCodeAt(yearEnd + 9) !== 58 || // :
    text.charCodeAt(yearEnd + 12) !== 58
  ) {
    return Number.NaN;
  }
  let at = yearEnd + 15;
  // Up to 6 digits of fraction; milliseconds keep the first 3, as Date does.
  let millisecond = 0;
  if (text.charCodeAt(at) === 46) {
    const start = ++at;
    while (at < text.length && text.charCodeAt(at) >= 48 && text.charCodeAt(at) <= 57) at++;
    const kept = Math.min(at - start, 3);
    if (kept === 0) return Number.NaN;
    millisecond = digitsAt(text, start, start + kept) * 10 ** (3 - kept);
  }
  const sign = text.charCodeAt(at);
  if (sign !== 43 && sign !== 45) return Number.NaN; // + or -
  let offsetSeconds = digitsAt(text, at + 1, at + 3) * 3600;
  at += 3;
  // Minutes of offset (Kolkata's +05:30), and seconds for a zone's local mean time (Kolkata's +05:53:28).
  if (text.charCodeAt(at) === 58) {
    offsetSeconds += digitsAt(text, at + 1, at + 3) * 60;
    at += 3;
    if (text.charCodeAt(at) === 58) {
      offsetSeconds += digitsAt(text, at + 1, at + 3);
      at += 3;
    }
  }
  if (at !== text.length) {
    if (text.slice(at) !== " BC") return Number.NaN;
    year = 1 - year; // 1 BC is year 0
  }
  // Date.UTC reads years 0 to 99 as 1900 to 1999: such a year is computed 400 years on, then moved back.
  const early = year >= 0 && year < 100;
  const local = Date.UTC(early ? year + 400 : year, month - 1, day, hour, minute, second, millisecond);
  return (early ? local - MS_PER_400_YEARS : local) - (sign === 43 ? offsetSeconds : -offsetSeconds) * 1000;
}

/**
 * A Date of PostgreSQL's text for a timestamptz, right for every year and offset. Text of another
 * shape (`infinity`, another DateStyle) is read by Date as drizzle did.
 */
export function parseTimestamptz(text: string): Date {
  const ms = timestamptzMs(text);
  return new Date(Number.isNaN(ms) ? text : ms);
}

/**
 * `timestamp with time zone`, as drizzle's `timestamp(name, { withTimezone: true })` declares it (the
 * schema and its migrations are the same), read by parseTimestamptz.
 */
export const timestamptz = customType<{ data: Date; driverData: string }>({
  dataType: () => "timestamp with time zone",
  toDriver: (value) => value.toISOString(),
  fromDriver: (value) => (typeof value === "string" ? parseTimestamptz(value) : value),
});

/** Whether a table's column is a timestamptz, of drizzle's timestamp type or of `timestamptz`. */
export function isTimestamptz(column: Column): boolean {
  return column.getSQLType() === "timestamp with time zone";
}
