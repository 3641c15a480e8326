import { describe, expect, it } from "vitest";
import { labelFingerprint } from "./fingerprint.ts";

describe("labelFingerprint", () => {
  it("gives the FNV-1a offset basis for an empty label set", () => {
    expect(labelFingerprint({})).toBe("cbf29ce484222325");
  });

  it("matches the prometheus/common test vector", () => {
    expect(labelFingerprint({ fear: "love is not enough", name: "garland, briggs" })).toBe(
      "507a62d79ee76c9a",
    );
  });

  it("matches the fingerprint Alertmanager sent in the Zulip fixture", () => {
    expect(
      labelFingerprint({ alertname: "High CPU Temperature", host: "andromeda", severity: "critical" }),
    ).toBe("a1bc48475b20e73d");
  });

  it("does not depend on the order of the keys in the payload", () => {
    expect(labelFingerprint({ b: "2", a: "1" })).toBe("1cc37fac8a64ae01");
    expect(labelFingerprint({ a: "1", b: "2" })).toBe("1cc37fac8a64ae01");
  });

  it("sorts names by UTF-8 byte order, not UTF-16 code units", () => {
    // U+FF5E is EF BD 9E in UTF-8 and sorts before U+1F600 (F0 ...), while in UTF-16 the surrogate
    // D83D of U+1F600 sorts first. Expected values from an independent Python implementation.
    expect(labelFingerprint({ "\u{1F600}": "a", "\uFF5E": "b" })).toBe("5fe8956d9674e0c5");
    expect(labelFingerprint({ "\u00e9": "x", z: "y" })).toBe("04a1501db4a9c436");
  });

  it("hashes every label, including the ones later stripped", () => {
    expect(
      labelFingerprint({
        alertname: "DiskFull",
        __name__: "node_filesystem_avail_bytes",
        instance: "db-1:9100",
        severity: "high",
      }),
    ).toBe("0f8c084bb463129d");
  });

  it("hashes null as an empty value (as Go decodes it) and other non-strings as JSON text", () => {
    expect(labelFingerprint({ a: null })).toBe("e57e2e1903df23e2");
    expect(labelFingerprint({ a: "" })).toBe("e57e2e1903df23e2");
    expect(labelFingerprint({ count: 5 })).toBe("a90b6f44436f8aa9");
  });

  it("always renders 16 hex digits", () => {
    for (let index = 0; index < 200; index += 1) {
      expect(labelFingerprint({ n: String(index) })).toMatch(/^[0-9a-f]{16}$/);
    }
  });
});
