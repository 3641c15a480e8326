// What a triage workflow must answer: the output check names the bad field, and an agent's JSON
// text counts as its output.
import { describe, expect, it } from "vitest";
import { readTriageOutput } from "./triage-workflow.ts";

describe("a triage workflow's output", () => {
  it("takes attention and reason, with an optional summary and first steps", () => {
    const output = { attention: "needs_review", reason: "flapping", short_summary: null, extra: 1 };
    expect(readTriageOutput(output)).toEqual({ ok: true, value: output });
    expect(readTriageOutput({ text: JSON.stringify({ attention: "others", reason: "a test" }) })).toEqual({
      ok: true,
      value: { attention: "others", reason: "a test" },
    });
  });

  it("says why an output is not one, naming the field", () => {
    const cases: [unknown, RegExp][] = [
      [null, /^the output is not an object$/],
      [["needs_review"], /^the output is not an object$/],
      ["needs_review", /^the output is not an object$/],
      [{ text: "needs review, probably" }, /^the output's text is not JSON$/],
      [{ reason: "no attention" }, /^attention: /],
      [{ attention: "urgent", reason: "made up" }, /^attention: /],
      [{ attention: "others" }, /^reason: /],
      [{ attention: "others", reason: "" }, /^reason: /],
      [{ attention: "others", reason: "ok", short_summary: 3 }, /^short_summary: /],
      [
        { attention: "others", reason: "ok", initial_investigation: "x".repeat(20001) },
        /^initial_investigation: /,
      ],
    ];
    for (const [output, why] of cases) {
      const read = readTriageOutput(output);
      expect(read.ok, JSON.stringify(output)).toBe(false);
      if (!read.ok) expect(read.why).toMatch(why);
    }
  });
});
