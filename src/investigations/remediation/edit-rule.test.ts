// The rule edit keeps every other byte of the file, so the proposed diff shows only the fix.
import { expect, it } from "vitest";
import { durationSeconds, editRule } from "./edit-rule.ts";

const FILE = `# Ledger alerts
groups:
  - name: ledger
    rules:
      - alert: LedgerAlways
        expr: ledger_queue_depth{service="ledger"} > 1
        for: 1m
        labels:
          severity: page
      - alert: "LedgerFlaps"
        expr: |
          sum by (service) (
            rate(ledger_errors_total[5m])
          ) > 0.5
        labels:
          severity: ticket
      - expr: ledger_lag_seconds < 30
        alert: LedgerLag
        for: 15m
`;

it("raises the threshold of the named rule only", () => {
  const edit = editRule(FILE, "LedgerAlways", {
    kind: "raise_threshold",
    op: ">",
    threshold: 1,
    to: 1100,
    why: "",
  });
  expect(edit).toEqual({
    text: FILE.replace('{service="ledger"} > 1\n', '{service="ledger"} > 1100\n'),
    summary: "raise the threshold of LedgerAlways from > 1 to > 1100",
  });
});

it("adds for: after a multi-line expr, and replaces a shorter one in place", () => {
  const added = editRule(FILE, "LedgerFlaps", { kind: "hold_for", duration: "10m", why: "" });
  expect(added.text).toBe(FILE.replace("          ) > 0.5\n", "          ) > 0.5\n        for: 10m\n"));
  const raised = editRule(FILE, "LedgerAlways", { kind: "hold_for", duration: "10m", why: "" });
  expect(raised.text).toBe(FILE.replace("        for: 1m\n", "        for: 10m\n"));
  expect(raised).toMatchObject({ summary: "make LedgerAlways wait for: 10m (was 1m) before firing" });
});

it("finds a rule whose alert: comes after its expr, and lowers a below-threshold comparison", () => {
  const edit = editRule(FILE, "LedgerLag", {
    kind: "raise_threshold",
    op: "<",
    threshold: 30,
    to: 27,
    why: "",
  });
  expect(edit.text).toBe(FILE.replace("ledger_lag_seconds < 30", "ledger_lag_seconds < 27"));
});

it("says why when it cannot change the rule", () => {
  expect(editRule(FILE, "Unknown", { kind: "hold_for", duration: "10m", why: "" })).toEqual({
    text: null,
    reason: "no rule named Unknown",
  });
  expect(editRule(FILE, "LedgerLag", { kind: "hold_for", duration: "10m", why: "" })).toEqual({
    text: null,
    reason: "LedgerLag already waits for: 15m; a longer wait is a judgement call",
  });
  expect(
    editRule(FILE, "LedgerAlways", { kind: "raise_threshold", op: ">", threshold: 5, to: 10, why: "" }),
  ).toEqual({ text: null, reason: "the expr of LedgerAlways has no comparison > 5" });
  // A name that only prefixes another rule's is not that rule.
  expect(editRule(FILE, "Ledger", { kind: "hold_for", duration: "10m", why: "" }).text).toBeNull();
});

it("reads Prometheus durations", () => {
  expect(durationSeconds("1h30m")).toBe(5400);
  expect(durationSeconds("90s")).toBe(90);
  expect(durationSeconds("10x")).toBeNull();
});
