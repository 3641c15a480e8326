// Source times (alert-sources.md 1.5). Naive strings are never handed to `Date`, which would read
// them in the server's local zone: the parts are parsed here and assembled in UTC.

// RFC 3339 and the naive ISO forms: date, `T` or space, time, optional fraction, optional zone.
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;
// Zabbix `{DATE} {TIME}`: `YYYY.MM.DD hh:mm:ss`, always naive.
const ZABBIX_DATE_TIME = /^(\d{4})\.(\d{2})\.(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const EPOCH_NUMBER = /^(\d+)(?:\.(\d+))?$/;

// 9999-12-31T23:59:59.999Z: later epoch values are garbage, and ISO 8601 needs a 4-digit year.
const MAX_EPOCH_MS = 253_402_300_799_999n;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

interface DateTimeParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeapYear(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

// Milliseconds since the epoch of a UTC wall time, or null when a field is out of range (Date would
// silently roll 2024-02-30 over to March).
function utcMilliseconds(parts: DateTimeParts): number | null {
  const { year, month, day, hour, minute, second, millisecond } = parts;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  // setUTCFullYear, because Date.UTC maps years 0..99 to 1900..1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime();
}

// The source times kept: a day inside the years 1 to 9999.
const EARLIEST_MS = Date.parse("0001-01-02T00:00:00.000Z");
const LATEST_MS = Date.parse("9999-12-30T23:59:59.999Z");

// Go's zero time.Time, which Alertmanager writes as `endsAt` of a firing alert: it means "no time".
const GO_ZERO_TIME_MS = utcMilliseconds({
  year: 1,
  month: 1,
  day: 1,
  hour: 0,
  minute: 0,
  second: 0,
  millisecond: 0,
});

// Fractional digits truncated (not rounded) to milliseconds.
function fractionMilliseconds(fraction: string | undefined): number {
  return Number(`${fraction ?? ""}000`.slice(0, 3));
}

function parseIsoDateTime(match: RegExpMatchArray): number | null {
  const [, year, month, day, hour, minute, second, fraction, , sign, offsetHours, offsetMinutes] = match;
  const wallTime = utcMilliseconds({
    year: Number(year),
    month: Number(month),
    day: Number(day),
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
    millisecond: fractionMilliseconds(fraction),
  });
  if (wallTime === null) return null;
  // No offset (a `Z` or a naive time): the wall time is UTC.
  if (sign === undefined) return wallTime;
  const hours = Number(offsetHours);
  const minutes = Number(offsetMinutes);
  if (hours > 23 || minutes > 59) return null;
  const offsetMs = (hours * 60 + minutes) * 60_000;
  return sign === "+" ? wallTime - offsetMs : wallTime + offsetMs;
}

// Epoch value by magnitude: below 1e11 seconds, below 1e14 milliseconds, below 1e17 microseconds,
// else nanoseconds. BigInt keeps nanosecond values exact; only whole milliseconds are kept.
function parseEpoch(whole: string, fraction: string | undefined): number | null {
  const value = BigInt(whole);
  let milliseconds: bigint;
  if (value < 100_000_000_000n) {
    milliseconds = value * 1000n + BigInt(fractionMilliseconds(fraction));
  } else if (value < 100_000_000_000_000n) {
    milliseconds = value;
  } else if (value < 100_000_000_000_000_000n) {
    milliseconds = value / 1000n;
  } else {
    milliseconds = value / 1_000_000n;
  }
  // 0 means absent (1.5); a fraction of a millisecond rounds down to 0 as well.
  if (milliseconds === 0n || milliseconds > MAX_EPOCH_MS) return null;
  return Number(milliseconds);
}

function parseTimeText(text: string): number | null {
  const epoch = EPOCH_NUMBER.exec(text);
  if (epoch) return parseEpoch(epoch[1] ?? "0", epoch[2]);
  const iso = ISO_DATE_TIME.exec(text);
  if (iso) return parseIsoDateTime(iso);
  const zabbix = ZABBIX_DATE_TIME.exec(text);
  if (zabbix) {
    const [, year, month, day, hour, minute, second] = zabbix;
    return utcMilliseconds({
      year: Number(year),
      month: Number(month),
      day: Number(day),
      hour: Number(hour),
      minute: Number(minute),
      second: Number(second),
      millisecond: 0,
    });
  }
  return null;
}

/**
 * A source time as UTC ISO 8601 with milliseconds (`2024-05-14T10:12:31.000Z`), or null when the value
 * is absent or unreadable. Accepts RFC 3339 (`Z`, `+hh:mm` or `+hhmm`; fraction truncated to ms),
 * naive `YYYY-MM-DD hh:mm:ss[.fff]`, `YYYY-MM-DDThh:mm:ss` and Zabbix `YYYY.MM.DD hh:mm:ss` (as UTC),
 * and epoch numbers or numeric strings (seconds, ms, µs or ns by magnitude). Go's zero time, `0`,
 * `null`, `""`, negative numbers and times outside 0001-01-02 to 9999-12-30 give null.
 */
export function parseSourceTime(value: unknown): string | null {
  let text: string;
  if (typeof value === "string") {
    text = value.trim();
  } else if (typeof value === "number" && Number.isFinite(value) && value >= 0) {
    // String(n) is the shortest exact decimal of the double, so 1715681551.512 keeps its .512.
    text = String(value);
  } else {
    return null;
  }
  const milliseconds = parseTimeText(text);
  if (milliseconds === null || milliseconds === GO_ZERO_TIME_MS) return null;
  // An offset can move a time out of the years 1 to 9999 (0000-06-15, 0001-01-01T00:00+01:00),
  // which neither ISO 8601's four digits nor PostgreSQL take; and the windows Vigil reads around
  // a time (storms: 10 minutes either side) need room inside them.
  if (milliseconds < EARLIEST_MS || milliseconds > LATEST_MS) return null;
  return new Date(milliseconds).toISOString();
}
