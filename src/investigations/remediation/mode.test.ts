// Which operator messages ask for a fix. A negated ask must never read as one: that would let an
// investigation propose a change the operator said not to make.
import { describe, expect, it } from "vitest";
import { asksForRemediation } from "./mode.ts";

describe("asksForRemediation", () => {
  it.each([
    "Please fix it",
    "fix the threshold",
    "Please open a fix PR for this threshold",
    "create a pull request",
    "remediate this",
    "Don\u2019t worry, just fix it",
    "Don't page anyone, fix the rule",
    "It isn't working, please fix it",
    "It can't keep paging us so fix the threshold",
    "The alert never clears; fix the rule",
    "No need to wait, fix it",
  ])("asks: %s", (message) => {
    expect(asksForRemediation(message)).toBe(true);
  });

  it.each([
    "Please don't fix it",
    "Please don\u2019t fix it",
    "Please don\u2018t fix it",
    "Please don\u02bct fix it",
    "Please don\uff07t fix it",
    "Please don`t fix it",
    "Please dont fix it",
    "DON'T FIX THIS",
    "do not fix anything",
    "Do not, under any circumstances, fix this",
    "Don\u2019t, whatever happens, open a PR",
    "Please do not go ahead and fix this",
    "Never fix this alert",
    "No need to fix the threshold",
    "Look into it without fixing the rule",
    "Investigate without opening a pull request",
    "You shouldn't fix this",
    "You shouldn\u2019t patch the threshold",
    "You mustn\u2019t fix it",
    "You must not fix it",
    "We won't need a fix, please explain it",
    "It doesn't need a fix",
    "Please investigate but do not open a PR or fix it",
    "Please explain it, no PR",
    "I asked you not to fix it",
  ])("does not ask: %s", (message) => {
    expect(asksForRemediation(message)).toBe(false);
  });

  it("reads no message as no ask", () => {
    expect(asksForRemediation(null)).toBe(false);
    expect(asksForRemediation("")).toBe(false);
    expect(asksForRemediation("why does it fire?")).toBe(false);
  });
});
