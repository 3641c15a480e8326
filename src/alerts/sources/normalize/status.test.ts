import { describe, expect, it } from "vitest";
import { mapStatus } from "./status.ts";

const table = {
  firing: "active",
  resolved: "resolved",
  Muted: "ignored",
  acknowledged: "unchanged",
} as const;

describe("mapStatus", () => {
  it("maps listed values and keeps the raw value as source_event", () => {
    expect(mapStatus("firing", table)).toEqual({ status: "active", source_event: "firing" });
    expect(mapStatus("resolved", table)).toEqual({ status: "resolved", source_event: "resolved" });
    expect(mapStatus("muted", table)).toEqual({ status: "ignored", source_event: "muted" });
    expect(mapStatus("acknowledged", table)).toEqual({ status: "unchanged", source_event: "acknowledged" });
  });

  it("matches case-insensitively after trimming", () => {
    expect(mapStatus("  FIRING\n", table)).toEqual({ status: "active", source_event: "FIRING" });
  });

  it("maps numbers by their decimal text", () => {
    expect(mapStatus(0, { "0": "active", "1": "resolved" })).toEqual({ status: "active", source_event: "0" });
  });

  it("never makes an unlisted value active: unchanged plus an unmapped entry", () => {
    expect(mapStatus("pending", table)).toEqual({
      status: "unchanged",
      source_event: "pending",
      unmapped: { field: "status", value: "pending" },
    });
  });

  it("records an absent value as unmapped unless the table lists the empty value", () => {
    for (const value of [undefined, null, "", " ", { status: "firing" }]) {
      expect(mapStatus(value, table)).toEqual({
        status: "unchanged",
        source_event: "",
        unmapped: { field: "status", value: "" },
      });
    }
    expect(mapStatus(undefined, { "": "unchanged" })).toEqual({ status: "unchanged", source_event: "" });
  });

  it("does not find prototype members", () => {
    expect(mapStatus("constructor", table).unmapped).toEqual({ field: "status", value: "constructor" });
  });
});
