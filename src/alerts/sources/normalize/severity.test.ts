import { describe, expect, it } from "vitest";
import type { SeverityBucket } from "../types.ts";
import { GENERIC_SEVERITY_TABLE, mapSeverity, PRIORITY_DIGITS_TABLE } from "./severity.ts";

function mapped(source: string, severity: SeverityBucket, priority: number) {
  return { source_severity: source, severity, display_priority: priority, severity_mapping: "mapped" };
}

describe("mapSeverity with the generic table", () => {
  it.each([
    ["critical", "Critical", 1],
    ["crit", "Critical", 1],
    ["fatal", "Critical", 1],
    ["emergency", "Critical", 1],
    ["emerg", "Critical", 1],
    ["alert", "Critical", 1],
    ["disaster", "Critical", 1],
    ["p1", "Critical", 1],
    ["high", "High", 2],
    ["error", "High", 2],
    ["err", "High", 2],
    ["major", "High", 2],
    ["p2", "High", 2],
    ["medium", "Medium", 3],
    ["warning", "Medium", 3],
    ["warn", "Medium", 3],
    ["average", "Medium", 3],
    ["minor", "Medium", 3],
    ["moderate", "Medium", 3],
    ["p3", "Medium", 3],
    ["low", "Low", 4],
    ["p4", "Low", 4],
    ["info", "info", 5],
    ["informational", "info", 5],
    ["information", "info", 5],
    ["notice", "info", 5],
    ["debug", "info", 5],
    ["ok", "info", 5],
    ["none", "info", 5],
    ["p5", "info", 5],
  ] as const)("%s -> %s", (word, bucket, priority) => {
    expect(mapSeverity(word)).toEqual(mapped(word, bucket, priority));
  });

  it("has exactly the 30 words of section 1.4", () => {
    expect(Object.keys(GENERIC_SEVERITY_TABLE)).toHaveLength(30);
  });

  it("matches case-insensitively and keeps the raw value trimmed", () => {
    expect(mapSeverity("  CRITICAL ")).toEqual(mapped("CRITICAL", "Critical", 1));
    expect(mapSeverity("P2")).toEqual(mapped("P2", "High", 2));
  });

  it("marks a value no table lists as unmapped, Medium", () => {
    expect(mapSeverity("SEV-1")).toEqual({
      source_severity: "SEV-1",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "unmapped",
      unmapped: { field: "severity", value: "SEV-1" },
    });
  });

  it("does not map digits without the priority digits table", () => {
    expect(mapSeverity(1).severity_mapping).toBe("unmapped");
    expect(mapSeverity(1).source_severity).toBe("1");
  });

  it("does not find prototype members", () => {
    expect(mapSeverity("constructor").severity_mapping).toBe("unmapped");
  });

  it.each([
    ["undefined", undefined],
    ["null", null],
    ["empty", ""],
    ["blank", "  "],
    ["object", { level: "high" }],
  ])("marks %s as missing, Medium, without an unmapped entry", (_name, value) => {
    expect(mapSeverity(value)).toEqual({
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
    });
  });
});

describe("mapSeverity with a source table", () => {
  it("maps the priority digits, as text or numbers", () => {
    expect(mapSeverity(1, { table: PRIORITY_DIGITS_TABLE })).toEqual(mapped("1", "Critical", 1));
    expect(mapSeverity("2", { table: PRIORITY_DIGITS_TABLE })).toEqual(mapped("2", "High", 2));
    expect(mapSeverity(3, { table: PRIORITY_DIGITS_TABLE })).toEqual(mapped("3", "Medium", 3));
    expect(mapSeverity(4, { table: PRIORITY_DIGITS_TABLE })).toEqual(mapped("4", "Low", 4));
    expect(mapSeverity(5, { table: PRIORITY_DIGITS_TABLE })).toEqual(mapped("5", "info", 5));
    expect(mapSeverity(6, { table: PRIORITY_DIGITS_TABLE }).severity_mapping).toBe("unmapped");
  });

  it("still consults the generic table after the source table", () => {
    expect(mapSeverity("P1", { table: PRIORITY_DIGITS_TABLE })).toEqual(mapped("P1", "Critical", 1));
  });

  it("wins over the generic table on a clash", () => {
    const zabbix = { Warning: "Low", Disaster: "Critical" } as const;
    expect(mapSeverity("warning", { table: zabbix })).toEqual(mapped("warning", "Low", 4));
  });

  it("replaces the generic table when generic is false", () => {
    const zabbix = { Warning: "Low" } as const;
    expect(mapSeverity("critical", { table: zabbix, generic: false })).toEqual({
      source_severity: "critical",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "unmapped",
      unmapped: { field: "severity", value: "critical" },
    });
  });
});

describe("mapSeverity with per-registration overrides", () => {
  it("win over the source and generic tables, case-insensitively", () => {
    const overrides = { WARNING: "High", "sev-1": "Critical" } as const;
    expect(mapSeverity("warning", { overrides })).toEqual(mapped("warning", "High", 2));
    expect(mapSeverity("SEV-1", { overrides })).toEqual(mapped("SEV-1", "Critical", 1));
    expect(mapSeverity("1", { table: PRIORITY_DIGITS_TABLE, overrides: { "1": "Low" } })).toEqual(
      mapped("1", "Low", 4),
    );
  });

  it("leave other values to the tables", () => {
    expect(mapSeverity("error", { overrides: { warning: "High" } })).toEqual(mapped("error", "High", 2));
  });

  it("never turn a missing value into a mapped one", () => {
    expect(mapSeverity("", { overrides: { "": "Critical" } }).severity_mapping).toBe("missing");
  });
});
