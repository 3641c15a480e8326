import { describe, expect, it } from "vitest";
import { charCount, joinDescription, normalizeDescription, normalizeTitle, truncateChars } from "./text.ts";

describe("truncateChars and charCount", () => {
  it("cut to a number of code points", () => {
    expect(truncateChars("abcdef", 3)).toBe("abc");
    expect(truncateChars("abc", 3)).toBe("abc");
    expect(truncateChars("", 3)).toBe("");
    expect(truncateChars("a\u{1F600}b", 2)).toBe("a\u{1F600}");
    expect(charCount("a\u{1F600}b")).toBe(3);
  });
});

describe("normalizeTitle", () => {
  it("trims and turns line breaks into spaces", () => {
    expect(normalizeTitle("  Disk full\r\non db-1\nnow\r!  ", "zabbix", "123")).toEqual({
      title: "Disk full on db-1 now !",
      title_is_fallback: false,
    });
  });

  it("cuts to 512 characters", () => {
    expect(normalizeTitle("x".repeat(600), "splunk", "u").title).toBe("x".repeat(512));
    expect(normalizeTitle(`${"x".repeat(511)}\u{1F600}\u{1F600}`, "splunk", "u").title).toBe(
      `${"x".repeat(511)}\u{1F600}`,
    );
  });

  it("falls back to '<source_type> alert <uid>' when there is no text", () => {
    for (const raw of [undefined, null, "", "  \n ", {}]) {
      expect(normalizeTitle(raw, "opsgenie", "70413a06")).toEqual({
        title: "opsgenie alert 70413a06",
        title_is_fallback: true,
      });
    }
  });

  it("uses a number's text", () => {
    expect(normalizeTitle(404, "sentry", "1")).toEqual({ title: "404", title_is_fallback: false });
  });
});

describe("normalizeDescription", () => {
  it("trims, may be empty, and cuts to 32,768 characters", () => {
    expect(normalizeDescription("  line 1\nline 2  ")).toBe("line 1\nline 2");
    expect(normalizeDescription(undefined)).toBe("");
    expect(normalizeDescription(null)).toBe("");
    expect(normalizeDescription("d".repeat(40_000))).toBe("d".repeat(32_768));
  });
});

describe("joinDescription", () => {
  it("joins the non-empty parts with one blank line", () => {
    expect(joinDescription("Summary.", "Details.")).toBe("Summary.\n\nDetails.");
    expect(joinDescription("", " Details. ", null, undefined)).toBe("Details.");
    expect(joinDescription("A", "B", "C")).toBe("A\n\nB\n\nC");
  });

  it("writes a part equal to the one before it once", () => {
    expect(joinDescription("Same", " Same ")).toBe("Same");
    expect(joinDescription("A", "B", "A")).toBe("A\n\nB\n\nA");
    expect(joinDescription("A", "", "A")).toBe("A");
  });

  it("gives an empty string for no parts", () => {
    expect(joinDescription()).toBe("");
    expect(joinDescription("", "  ")).toBe("");
  });

  it("cuts the joined text to 32,768 characters", () => {
    expect(joinDescription("a".repeat(32_767), "b")).toBe("a".repeat(32_767));
  });
});
