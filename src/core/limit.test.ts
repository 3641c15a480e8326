import { expect, it } from "vitest";
import { createLimit } from "./limit.ts";

it("runs at most `limit` calls at once, shared by every caller, and starts each waiting one in turn", async () => {
  const limit = createLimit(3);
  let active = 0;
  let most = 0;
  const release: (() => void)[] = [];
  const call = (n: number) =>
    limit(async () => {
      active += 1;
      most = Math.max(most, active);
      await new Promise<void>((resolve) => release.push(resolve));
      active -= 1;
      return n;
    });
  // Two callers, as two jobs share the process's limit.
  const first = Promise.all([1, 2, 3, 4].map(call));
  const second = Promise.all([5, 6, 7, 8].map(call));
  // Lets the calls in flight end one at a time, until all 8 have run.
  for (let ended = 0; ended < 8; ) {
    await new Promise((resolve) => setImmediate(resolve));
    const next = release.shift();
    if (next) {
      next();
      ended += 1;
    }
  }
  expect(await first).toEqual([1, 2, 3, 4]);
  expect(await second).toEqual([5, 6, 7, 8]);
  expect(most).toBe(3);
});

it("passes a call's failure to its caller and frees its place", async () => {
  const limit = createLimit(1);
  await expect(limit(() => Promise.reject(new Error("model down")))).rejects.toThrow("model down");
  expect(await limit(async () => "next")).toBe("next");
});
