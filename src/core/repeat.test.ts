// The background loop under the storm correlator and the embedded maintenance: runs never overlap,
// a failed run does not end the loop, and nothing runs once stop() has resolved. On V8's clock
// stood still (fake timers), so no assertion depends on how fast the machine is.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { repeat } from "./repeat.ts";

describe("repeat", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A piece of work whose runs end when the test says so. */
  function controlledWork() {
    const ends: (() => void)[] = [];
    let running = 0;
    let most = 0;
    const work = vi.fn(
      () =>
        new Promise<void>((resolve) => {
          running += 1;
          most = Math.max(most, running);
          ends.push(() => {
            running -= 1;
            resolve();
          });
        }),
    );
    return { work, endRun: () => ends.shift()?.(), mostAtOnce: () => most };
  }

  it("runs first after the first delay, then a delay after each run ends, never two at once", async () => {
    const { work, endRun, mostAtOnce } = controlledWork();
    const loop = repeat(work, 100, 10);
    await vi.advanceTimersByTimeAsync(9);
    expect(work).toHaveBeenCalledTimes(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(work).toHaveBeenCalledTimes(1);
    // A slow run holds the next one back, however long it takes.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(work).toHaveBeenCalledTimes(1);
    endRun();
    await vi.advanceTimersByTimeAsync(99);
    expect(work).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(work).toHaveBeenCalledTimes(2);
    expect(mostAtOnce()).toBe(1);
    endRun();
    await loop.stop();
  });

  it("goes on after a run that fails", async () => {
    const work = vi.fn().mockRejectedValueOnce(new Error("boom")).mockResolvedValue(undefined);
    const loop = repeat(work, 100);
    await vi.advanceTimersByTimeAsync(300);
    expect(work).toHaveBeenCalledTimes(3);
    await loop.stop();
  });

  it("waits for the run under way when stopped, and runs nothing after", async () => {
    const { work, endRun } = controlledWork();
    const loop = repeat(work, 100, 0);
    await vi.advanceTimersByTimeAsync(0);
    expect(work).toHaveBeenCalledTimes(1);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(50);
    expect(stopped).toBe(false);
    endRun();
    await stopping;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(work).toHaveBeenCalledTimes(1);
  });

  it("runs nothing once stopped between runs", async () => {
    const work = vi.fn().mockResolvedValue(undefined);
    const loop = repeat(work, 100);
    await vi.advanceTimersByTimeAsync(150);
    expect(work).toHaveBeenCalledTimes(1);
    await loop.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(work).toHaveBeenCalledTimes(1);
  });
});
