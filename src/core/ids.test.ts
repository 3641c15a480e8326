import { describe, expect, it } from "vitest";
import { IDS_PER_RANDOM_FILL, uuidv7 } from "./ids.ts";

describe("uuidv7", () => {
  it("is a version 7, RFC 9562 variant uuid carrying the current millisecond", () => {
    const before = Date.now();
    const id = uuidv7();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const ms = Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now() + 1);
  });

  it("sorts in the order ids were made, also within one millisecond", () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("stays unique, well formed and ordered across refills of its random pool", () => {
    const ids = Array.from({ length: IDS_PER_RANDOM_FILL * 3 + 7 }, () => uuidv7());
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...ids].sort()).toEqual(ids);
    // The random tails alone differ: no byte of a fill is handed out twice.
    const tails = ids.map((id) => id.slice(20));
    expect(new Set(tails).size).toBe(ids.length);
  });
});
