import { describe, expect, it } from "vitest";
import { hashUid, isPathSafeUid, safeUid } from "./uid.ts";

// Expected hashes were computed independently with Python's hashlib (sha256, U+001F join).
describe("hashUid", () => {
  it("matches the spec example", () => {
    expect(hashUid("352347", "High tracking", "")).toBe("4836aed9c3d6d24f072b852736e4e4c2");
  });

  it("treats null and absent parts as empty strings", () => {
    expect(hashUid("352347", "High tracking", null)).toBe("4836aed9c3d6d24f072b852736e4e4c2");
    expect(hashUid("352347", "High tracking", undefined)).toBe("4836aed9c3d6d24f072b852736e4e4c2");
  });

  it("uses a number's decimal JSON text", () => {
    expect(hashUid(352347, "High tracking", "")).toBe("4836aed9c3d6d24f072b852736e4e4c2");
    expect(hashUid(1, null, 2)).toBe("45302af42fce1e64bf677648e4c6007d");
  });

  it("keeps the separator between empty parts, so part boundaries matter", () => {
    expect(hashUid("1", "", "2")).toBe("45302af42fce1e64bf677648e4c6007d");
    expect(hashUid("1", "2")).not.toBe(hashUid("1", "", "2"));
    expect(hashUid("12")).not.toBe(hashUid("1", "2"));
  });

  it("encodes text as UTF-8", () => {
    expect(hashUid("5", "héllo")).toBe("f50fec5800140fd11461e04440ad4f5e");
  });

  it("hashes no parts as the empty string", () => {
    expect(hashUid()).toBe("e3b0c44298fc1c149afbf4c8996fb924");
    expect(hashUid("")).toBe("e3b0c44298fc1c149afbf4c8996fb924");
  });

  it("treats non-finite numbers as absent", () => {
    expect(hashUid(Number.NaN)).toBe(hashUid(""));
  });
});

describe("isPathSafeUid", () => {
  it("accepts the allowed alphabet up to 128 characters", () => {
    expect(isPathSafeUid("PABC123")).toBe(true);
    expect(isPathSafeUid("a.b_c~d-e")).toBe(true);
    expect(isPathSafeUid("x".repeat(128))).toBe(true);
  });

  it("rejects empty, too long, dot names and other characters", () => {
    expect(isPathSafeUid("")).toBe(false);
    expect(isPathSafeUid("x".repeat(129))).toBe(false);
    expect(isPathSafeUid(".")).toBe(false);
    expect(isPathSafeUid("..")).toBe(false);
    expect(isPathSafeUid("...")).toBe(true);
    expect(isPathSafeUid("a/b")).toBe(false);
    expect(isPathSafeUid("a b")).toBe(false);
    expect(isPathSafeUid("é")).toBe(false);
    expect(isPathSafeUid("a\n")).toBe(false);
  });
});

describe("safeUid", () => {
  it("keeps a path-safe native id", () => {
    expect(safeUid("a1bc48475b20e73d")).toBe("a1bc48475b20e73d");
    expect(safeUid("Q1ZIPX~2.3_a-b")).toBe("Q1ZIPX~2.3_a-b");
  });

  it("uses a number's decimal text", () => {
    expect(safeUid(42)).toBe("42");
  });

  it("hashes an id that is not path-safe", () => {
    expect(safeUid("a/b")).toBe("c14cddc033f64b9dea80ea675cf280a0");
    expect(safeUid(".")).toBe("cdb4ee2aea69cc6a83331bbe96dc2caa");
    expect(safeUid("..")).toBe("5ec1f7e700f37c3d0b2981d04855fc34");
    expect(safeUid("x".repeat(129))).toBe("0ec9eb33e74510bcdd1f2ea55206e82f");
    expect(safeUid("alert one")).toBe("872b96e3dbc625946b1fa169923b2789");
    expect(safeUid("")).toBe("e3b0c44298fc1c149afbf4c8996fb924");
  });
});
