// The cleaning rule on its own: what PostgreSQL cannot store becomes U+FFFD, and nothing else changes.
import { describe, expect, it } from "vitest";
import { storableJson, storableText, storableValue } from "./storable.ts";

describe("storableText", () => {
  it("replaces U+0000 and unpaired surrogates with U+FFFD, keeping surrogate pairs", () => {
    expect(storableText("a\u0000b")).toBe("a\ufffdb");
    expect(storableText("\ud800x\udfff")).toBe("\ufffdx\ufffd");
    expect(storableText("\udfff\ud800")).toBe("\ufffd\ufffd");
    expect(storableText("fire \u{1F525} \ud83d\udd25")).toBe("fire \u{1F525} \ud83d\udd25");
  });
});

describe("storableValue", () => {
  it("cleans every string at any depth, keys included", () => {
    expect(
      storableValue({
        title: "a\u0000",
        labels: { "k\ud800": "v\udc00" },
        links: [{ url: "u\u0000" }],
        n: 3,
      }),
    ).toEqual({ title: "a\ufffd", labels: { "k\ufffd": "v\ufffd" }, links: [{ url: "u\ufffd" }], n: 3 });
  });

  it("returns a clean value itself, without copying", () => {
    const value = { title: "ok", labels: { a: "b" }, links: [{ url: "https://x" }] };
    expect(storableValue(value)).toBe(value);
  });

  it("keeps dates and buffers, and a `__proto__` key as a key", () => {
    const at = new Date("2024-05-14T10:00:00.000Z");
    const payload = Buffer.from([0, 1, 2]);
    const cleaned = storableValue({ at, payload, note: "\u0000" });
    expect(cleaned.at).toBe(at);
    expect(cleaned.payload).toBe(payload);
    const parsed = JSON.parse('{"__proto__": "\\u0000", "x": 1}');
    const result = storableValue(parsed);
    expect(Object.entries(result)).toEqual([
      ["__proto__", "\ufffd"],
      ["x", 1],
    ]);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });
});

describe("storableJson", () => {
  it("returns a clean value itself with its JSON, surrogate pairs and escaped-looking text included", () => {
    const value = { title: "fire \ud83d\udd25", note: "a literal \\u0000 and \\ud800", n: [1, "x"] };
    const { value: stored, json } = storableJson(value);
    expect(stored).toBe(value);
    expect(JSON.parse(json)).toEqual(value);
  });

  it("cleans what storableValue cleans, at any depth and in keys, and gives the cleaned value's JSON", () => {
    for (const value of [
      { title: "a\u0000b" },
      { labels: { "k\ud800": "v" } },
      { links: [{ url: "u\udfff" }] },
      ["\udc00\ud800"],
    ]) {
      const { value: stored, json } = storableJson(value);
      expect(stored).toEqual(storableValue(value));
      expect(stored).not.toBe(value);
      expect(JSON.parse(json)).toEqual(stored);
    }
  });
});
