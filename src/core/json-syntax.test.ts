import { describe, expect, it } from "vitest";
import { jsonSyntaxReason } from "./json-syntax.ts";

function reasonFor(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return jsonSyntaxReason(err);
  }
  throw new Error(`${text} parsed`);
}

describe("jsonSyntaxReason", () => {
  it("drops the excerpt of the text that JSON.parse quotes", () => {
    const secret = "whk_0123456789abcdef";
    const reason = reasonFor(`token=${secret}`);
    expect(reason).not.toContain("whk_");
    expect(reason).not.toContain("token=");
    expect(reason).toMatch(/not valid JSON/);
  });

  it("keeps a reason that quotes nothing, with its position", () => {
    expect(reasonFor('{"a": 1')).toMatch(/JSON/);
    expect(reasonFor('{"a": 1} x')).toMatch(/position \d+/);
    expect(reasonFor("")).toMatch(/end of JSON input/);
  });

  it("drops an excerpt that spans lines", () => {
    expect(reasonFor("secret-line-one\nsecret-line-two")).not.toContain("secret");
  });
});
