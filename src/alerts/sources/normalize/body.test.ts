import { describe, expect, it } from "vitest";
import { decodeBody } from "./body.ts";

const form = { "content-type": "application/x-www-form-urlencoded; charset=utf-8" };

describe("decodeBody", () => {
  it("parses JSON whatever the content type says", () => {
    expect(decodeBody('{"a":1}', {})).toEqual({ ok: true, value: { a: 1 } });
    expect(decodeBody('{"a":1}', { "content-type": "text/plain; charset=UTF-8" })).toEqual({
      ok: true,
      value: { a: 1 },
    });
    expect(decodeBody("[1,2]", { "content-type": "application/json" })).toEqual({ ok: true, value: [1, 2] });
    expect(decodeBody('{"a":1}', form)).toEqual({ ok: true, value: { a: 1 } });
  });

  it("tolerates surrounding whitespace and a byte order mark", () => {
    expect(decodeBody('\uFEFF  {"a":1}\n', {})).toEqual({ ok: true, value: { a: 1 } });
  });

  it("returns an error for empty bodies", () => {
    expect(decodeBody("", {})).toEqual({ ok: false, error: "body is empty" });
    expect(decodeBody(" \n ", {})).toEqual({ ok: false, error: "body is empty" });
  });

  it("returns an error, never throws, for text that is not JSON", () => {
    for (const body of ["not json", '{"alerts": [', "{'a': 1}", "a=1&b=2"]) {
      const result = decodeBody(body, {});
      expect(result.ok).toBe(false);
      expect(!result.ok && result.error).toMatch(/^body is not JSON: /);
    }
  });

  it("decodes a form-encoded body into its fields", () => {
    expect(decodeBody("title=%5BP1%5D+CPU+high&alert_priority=P1&empty=", form)).toEqual({
      ok: true,
      value: { title: "[P1] CPU high", alert_priority: "P1", empty: "" },
    });
  });

  it("parses form fields holding JSON object or array text", () => {
    const body = new URLSearchParams({
      org: JSON.stringify({ id: 11287, name: "vng" }),
      tags: '["env:prod","team:a"]',
      broken: "{not json",
      id: "0123",
      flag: "true",
      nothing: "null",
    }).toString();
    expect(decodeBody(body, form)).toEqual({
      ok: true,
      value: {
        org: { id: 11287, name: "vng" },
        tags: ["env:prod", "team:a"],
        broken: "{not json",
        id: "0123",
        flag: "true",
        nothing: "null",
      },
    });
  });

  it("turns a repeated form field into an array", () => {
    expect(decodeBody("tag=a&tag=b&x=1", form)).toEqual({ ok: true, value: { tag: ["a", "b"], x: "1" } });
  });

  it("keeps a form field named __proto__ as a field", () => {
    const result = decodeBody("__proto__=x", form);
    expect(result.ok && Object.keys(result.value as object)).toEqual(["__proto__"]);
  });

  it("matches the form content type case-insensitively", () => {
    expect(decodeBody("a=1", { "content-type": "Application/X-WWW-Form-Urlencoded" })).toEqual({
      ok: true,
      value: { a: "1" },
    });
  });
});
