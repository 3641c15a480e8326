// The console's version diff (web/src/diff.ts): every line of both texts, in order, removals first.
import { expect, it } from "vitest";
import { diffLines } from "../../web/src/diff.ts";

const rebuild = (lines: ReturnType<typeof diffLines>, drop: "added" | "removed") =>
  lines
    .filter((line) => line.kind !== drop)
    .map((line) => line.text)
    .join("\n");

it("diffs two texts line by line: both can be rebuilt from it, and a change reads removal then addition", () => {
  const before = "a\nb\nc\nd";
  const after = "a\nB\nc\nd\ne";
  const lines = diffLines(before, after);
  expect(lines).toEqual([
    { kind: "same", text: "a" },
    { kind: "removed", text: "b" },
    { kind: "added", text: "B" },
    { kind: "same", text: "c" },
    { kind: "same", text: "d" },
    { kind: "added", text: "e" },
  ]);
  expect(rebuild(lines, "added")).toBe(before);
  expect(rebuild(lines, "removed")).toBe(after);
  expect(diffLines("x", "x")).toEqual([{ kind: "same", text: "x" }]);
  expect(rebuild(diffLines("", "p\nq"), "removed")).toBe("p\nq");
});
