import { describe, expect, it } from "vitest";
import { parseSourceTime } from "./time.ts";

describe("parseSourceTime: RFC 3339", () => {
  it("reads Z times and adds milliseconds", () => {
    expect(parseSourceTime("2024-05-14T10:12:31Z")).toBe("2024-05-14T10:12:31.000Z");
    expect(parseSourceTime("2024-05-14t10:12:31z")).toBe("2024-05-14T10:12:31.000Z");
  });

  it("truncates any number of fractional digits to milliseconds", () => {
    expect(parseSourceTime("2024-05-14T10:12:31.5Z")).toBe("2024-05-14T10:12:31.500Z");
    expect(parseSourceTime("2024-05-14T10:12:31.512Z")).toBe("2024-05-14T10:12:31.512Z");
    expect(parseSourceTime("2020-02-06T00:17:58.432911368Z")).toBe("2020-02-06T00:17:58.432Z");
    expect(parseSourceTime("2024-05-14T10:12:31.9999Z")).toBe("2024-05-14T10:12:31.999Z");
  });

  it("applies +hh:mm and CloudWatch's +hhmm offsets", () => {
    expect(parseSourceTime("2024-05-14T12:12:31+02:00")).toBe("2024-05-14T10:12:31.000Z");
    expect(parseSourceTime("2024-05-14T10:12:31.512+0000")).toBe("2024-05-14T10:12:31.512Z");
    expect(parseSourceTime("2024-05-14T05:42:31-0430")).toBe("2024-05-14T10:12:31.000Z");
    expect(parseSourceTime("2024-05-14T00:30:00.250+01:00")).toBe("2024-05-13T23:30:00.250Z");
    expect(parseSourceTime("2024-12-31T23:30:00-01:00")).toBe("2025-01-01T00:30:00.000Z");
  });

  it("reads nanoseconds with an offset", () => {
    expect(parseSourceTime("2024-05-14T12:12:31.123456789+02:00")).toBe("2024-05-14T10:12:31.123Z");
  });

  it("trims surrounding spaces", () => {
    expect(parseSourceTime("  2024-05-14T10:12:31Z\n")).toBe("2024-05-14T10:12:31.000Z");
  });
});

describe("parseSourceTime: naive forms are UTC", () => {
  it("reads YYYY-MM-DD hh:mm:ss[.fff]", () => {
    expect(parseSourceTime("2024-05-14 10:12:31")).toBe("2024-05-14T10:12:31.000Z");
    expect(parseSourceTime("2024-05-14 10:12:31.75")).toBe("2024-05-14T10:12:31.750Z");
  });

  it("reads YYYY-MM-DDThh:mm:ss", () => {
    expect(parseSourceTime("2024-05-14T10:12:31")).toBe("2024-05-14T10:12:31.000Z");
  });

  it("reads Zabbix YYYY.MM.DD hh:mm:ss", () => {
    expect(parseSourceTime("2024.05.14 10:12:31")).toBe("2024-05-14T10:12:31.000Z");
  });

  it("does not read two-digit years as 19xx", () => {
    expect(parseSourceTime("0099-06-01T00:00:00Z")).toBe("0099-06-01T00:00:00.000Z");
  });
});

describe("parseSourceTime: epoch values by magnitude", () => {
  it("reads seconds, with fractions", () => {
    expect(parseSourceTime(1715681551)).toBe("2024-05-14T10:12:31.000Z");
    expect(parseSourceTime("1715681551")).toBe("2024-05-14T10:12:31.000Z");
    expect(parseSourceTime(1715681551.512)).toBe("2024-05-14T10:12:31.512Z");
    expect(parseSourceTime("1715681551.5129")).toBe("2024-05-14T10:12:31.512Z");
  });

  it("reads milliseconds, microseconds and nanoseconds", () => {
    expect(parseSourceTime(1715681551512)).toBe("2024-05-14T10:12:31.512Z");
    expect(parseSourceTime("1715681551512")).toBe("2024-05-14T10:12:31.512Z");
    expect(parseSourceTime(1715681551512345)).toBe("2024-05-14T10:12:31.512Z");
    expect(parseSourceTime("1715681551512345678")).toBe("2024-05-14T10:12:31.512Z");
    // Opsgenie's updatedAt 1715681551512345678 as a JavaScript number is 1715681551512345600: it loses
    // the last digits, not the milliseconds.
    expect(parseSourceTime(1715681551512345600)).toBe("2024-05-14T10:12:31.512Z");
  });

  it("switches unit at 1e11, 1e14 and 1e17", () => {
    expect(parseSourceTime(99_999_999_999)).toBe("5138-11-16T09:46:39.000Z");
    expect(parseSourceTime(100_000_000_000)).toBe("1973-03-03T09:46:40.000Z");
    expect(parseSourceTime(99_999_999_999_999)).toBe("5138-11-16T09:46:39.999Z");
    expect(parseSourceTime(100_000_000_000_000)).toBe("1973-03-03T09:46:40.000Z");
    expect(parseSourceTime("99999999999999999")).toBe("5138-11-16T09:46:39.999Z");
    expect(parseSourceTime("100000000000000000")).toBe("1973-03-03T09:46:40.000Z");
  });

  it("reads small values as seconds after the epoch", () => {
    expect(parseSourceTime(1)).toBe("1970-01-01T00:00:01.000Z");
    expect(parseSourceTime(0.5)).toBe("1970-01-01T00:00:00.500Z");
  });
});

describe("parseSourceTime: absent and bad values give null", () => {
  it.each([
    ["Go zero time", "0001-01-01T00:00:00Z"],
    ["Go zero time with fraction", "0001-01-01T00:00:00.000000000Z"],
    ["zero", 0],
    ["zero text", "0"],
    ["zero with fraction", "0.0"],
    ["null", null],
    ["undefined", undefined],
    ["empty", ""],
    ["blank", "   "],
  ])("%s", (_name, value) => {
    expect(parseSourceTime(value)).toBeNull();
  });

  it.each([
    ["text", "yesterday"],
    ["date only", "2024-05-14"],
    ["30 February", "2024-02-30T00:00:00Z"],
    ["29 February of a common year", "2023-02-29T00:00:00Z"],
    ["month 13", "2024-13-01T00:00:00Z"],
    ["hour 24", "2024-05-14T24:00:00Z"],
    ["minute 60", "2024-05-14T10:60:00Z"],
    ["offset hour 24", "2024-05-14T10:00:00+24:00"],
    ["zone name", "2024-05-14T10:12:31 UTC"],
    ["negative number", -5],
    ["negative text", "-1715681551"],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["exponent", "1.7e9"],
    ["nanoseconds beyond year 9999", "300000000000000000000"],
    ["huge nanoseconds", "999999999999999999999999999"],
    // Outside the years 1 to 9999, or too near their ends for a window around the time.
    ["year 0", "0000-03-01T00:00:00Z"],
    ["an offset into year 0", "0001-01-01T00:00:00+01:00"],
    ["the last day of year 9999", "9999-12-31T23:59:59Z"],
    ["an offset past year 9999", "9999-12-30T23:00:00-02:00"],
    ["object", { time: 1 }],
    ["array", [1715681551]],
    ["boolean", true],
  ])("%s", (_name, value) => {
    expect(parseSourceTime(value)).toBeNull();
  });

  it("keeps times a day inside the years 1 to 9999", () => {
    expect(parseSourceTime("0001-01-02T00:00:00Z")).toBe("0001-01-02T00:00:00.000Z");
    expect(parseSourceTime("9999-12-30T23:59:59.999Z")).toBe("9999-12-30T23:59:59.999Z");
  });

  it("accepts 29 February of a leap year", () => {
    expect(parseSourceTime("2024-02-29T00:00:00Z")).toBe("2024-02-29T00:00:00.000Z");
    expect(parseSourceTime("2000-02-29T00:00:00Z")).toBe("2000-02-29T00:00:00.000Z");
    expect(parseSourceTime("1900-02-29T00:00:00Z")).toBeNull();
  });
});
