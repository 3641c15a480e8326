// The idle collection: when it collects (a quiet process whose heap grew), and that V8's full
// collection it uses is real and gives the garbage back.
import { describe, expect, it } from "vitest";
import { createIdleCollector, fullCollection } from "./idle-collection.ts";

const MB = 1024 * 1024;

describe("the idle collector", () => {
  const heap = (start: number) => {
    let used = start;
    let collections = 0;
    return {
      set: (bytes: number) => {
        used = bytes;
      },
      read: () => used,
      collect: () => {
        collections += 1;
        used = start;
      },
      collections: () => collections,
    };
  };

  /** A collector past its first quiet look, which collects what starting up left. */
  const started = (state: ReturnType<typeof heap>) => {
    const collector = createIdleCollector(state.read, state.collect);
    expect(collector.check(0)).toBe(true);
    expect(state.collections()).toBe(1);
    return collector;
  };

  it("collects once a quiet process's heap has grown, and not again until it grows again", () => {
    const state = heap(60 * MB);
    const collector = started(state);
    state.set(200 * MB);
    expect(collector.check(0.01)).toBe(true);
    expect(state.collections()).toBe(2);
    expect(collector.check(0.01)).toBe(false);
    state.set(100 * MB);
    expect(collector.check(0)).toBe(true);
    expect(state.collections()).toBe(3);
  });

  it("leaves a busy process to V8, however much its heap grew, from start-up on", () => {
    const state = heap(60 * MB);
    const collector = createIdleCollector(state.read, state.collect);
    expect(collector.check(0.9)).toBe(false);
    state.set(400 * MB);
    expect(collector.check(0.5)).toBe(false);
    expect(collector.check(0.2)).toBe(false);
    expect(state.collections()).toBe(0);
  });

  it("leaves a quiet heap alone when it grew less than a collection is worth", () => {
    const state = heap(60 * MB);
    const collector = started(state);
    state.set(80 * MB);
    expect(collector.check(0)).toBe(false);
    // A heap V8 shrank by itself counts from its new size.
    state.set(40 * MB);
    expect(collector.check(0)).toBe(false);
    state.set(60 * MB);
    expect(collector.check(0)).toBe(false);
    state.set(80 * MB);
    expect(collector.check(0)).toBe(true);
  });

  it("collects for real: garbage a process no longer holds leaves the heap", () => {
    const collect = fullCollection();
    collect();
    const start = process.memoryUsage().heapUsed;
    let garbage: { n: number; text: string }[] | null = [];
    for (let n = 0; n < 500_000; n++) garbage.push({ n, text: `entry ${n}` });
    const grown = process.memoryUsage().heapUsed;
    expect(grown - start).toBeGreaterThan(20 * MB);
    garbage = null;
    collect();
    expect(process.memoryUsage().heapUsed - start).toBeLessThan((grown - start) / 4);
    expect(garbage).toBeNull();
  });

  it("gives back the heap's pages where a few live objects were left among the garbage", () => {
    const collect = fullCollection();
    collect();
    const start = process.memoryUsage().heapTotal;
    let all: { n: number; text: string }[] | null = [];
    for (let n = 0; n < 600_000; n++) all.push({ n, text: `entry ${n}` });
    // One in 16 stays alive, spread over every page the others filled.
    const survivors = all.filter((_, n) => n % 16 === 0);
    const grown = process.memoryUsage().heapTotal;
    all = null;
    collect();
    // One collection alone kept about four fifths of the growth committed.
    expect(process.memoryUsage().heapTotal - start).toBeLessThan((grown - start) * 0.6);
    expect(survivors).toHaveLength(37_500);
  });
});
