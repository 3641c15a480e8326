import { describe, expect, it } from "vitest";
import { firstText, isRecord, lookupIgnoringCase, rawText } from "./json-value.ts";

describe("isRecord", () => {
  it("accepts objects only", () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord({ a: 1 })).toBe(true);
    expect(isRecord([])).toBe(false);
    expect(isRecord(null)).toBe(false);
    expect(isRecord("x")).toBe(false);
    expect(isRecord(1)).toBe(false);
    expect(isRecord(undefined)).toBe(false);
  });
});

describe("rawText", () => {
  it("trims strings and renders numbers and booleans", () => {
    expect(rawText("  warning \n")).toBe("warning");
    expect(rawText("")).toBe("");
    expect(rawText(3)).toBe("3");
    expect(rawText(1.5)).toBe("1.5");
    expect(rawText(false)).toBe("false");
  });

  it("gives null for everything else", () => {
    expect(rawText(null)).toBeNull();
    expect(rawText(undefined)).toBeNull();
    expect(rawText({})).toBeNull();
    expect(rawText(["a"])).toBeNull();
    expect(rawText(Number.NaN)).toBeNull();
    expect(rawText(Number.POSITIVE_INFINITY)).toBeNull();
  });
});

describe("firstText", () => {
  it("returns the first non-empty text, trimmed", () => {
    expect(firstText(undefined, "", "   ", " b ", "c")).toBe("b");
    expect(firstText(null, 0)).toBe("0");
  });

  it("returns null when nothing has text", () => {
    expect(firstText()).toBeNull();
    expect(firstText(null, "", {}, [])).toBeNull();
  });
});

describe("lookupIgnoringCase", () => {
  const table = { Firing: "active", resolved: "resolved" } as const;

  it("matches case-insensitively after trimming", () => {
    expect(lookupIgnoringCase(table, "firing")).toBe("active");
    expect(lookupIgnoringCase(table, "  RESOLVED ")).toBe("resolved");
  });

  it("never finds prototype members or unknown keys", () => {
    expect(lookupIgnoringCase(table, "constructor")).toBeUndefined();
    expect(lookupIgnoringCase(table, "__proto__")).toBeUndefined();
    expect(lookupIgnoringCase(table, "toString")).toBeUndefined();
    expect(lookupIgnoringCase(table, "pending")).toBeUndefined();
  });
});
