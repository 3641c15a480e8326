// createBatcher with a `run` the test controls: every batch it receives waits on a deferred the test
// settles, so which items went together, and when, is decided by the test and not by timing.
import { describe, expect, it } from "vitest";
import { createBatcher } from "./batcher.ts";

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => {};
  let reject: (reason: unknown) => void = () => {};
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

type Results = PromiseSettledResult<string>[];

/** A `run` that records each batch and returns a promise the test settles. */
function controlledRun() {
  const batches: { items: number[]; done: Deferred<Results> }[] = [];
  const waiters: { count: number; started: Deferred<void> }[] = [];
  return {
    batches,
    run(items: number[]): Promise<Results> {
      const done = deferred<Results>();
      batches.push({ items, done });
      for (const waiter of waiters) if (batches.length >= waiter.count) waiter.started.resolve();
      return done.promise;
    },
    /** Resolves once `run` has received `count` batches in all. */
    started(count: number): Promise<void> {
      const started = deferred<void>();
      if (batches.length >= count) started.resolve();
      else waiters.push({ count, started });
      return started.promise;
    },
    /** Completes batch `n` with one fulfilled result per item: `item:<n>`. */
    fulfil(n: number): void {
      const batch = batches[n];
      if (!batch) throw new Error(`no batch ${n}`);
      batch.done.resolve(batch.items.map((item) => ({ status: "fulfilled", value: `item:${item}` })));
    },
  };
}

describe("createBatcher", () => {
  it("holds items submitted while a batch runs and sends them together when it returns", async () => {
    const control = controlledRun();
    const batcher = createBatcher({ maxInFlight: 2, maxItems: 10, run: control.run });
    const first = batcher.submit(1);
    await control.started(1);
    // A batch runs: these wait for it, though a second batch would be allowed.
    const waiting = [2, 3, 4].map((item) => batcher.submit(item));
    expect(control.batches.map((batch) => batch.items)).toEqual([[1]]);

    control.fulfil(0);
    await control.started(2);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3, 4]]);
    await expect(first).resolves.toBe("item:1");

    control.fulfil(1);
    await expect(Promise.all(waiting)).resolves.toEqual(["item:2", "item:3", "item:4"]);
    expect(control.batches).toHaveLength(2);
  });

  it("runs an item alone when nothing runs, with only what was submitted in the same turn", async () => {
    const control = controlledRun();
    const batcher = createBatcher({ maxInFlight: 2, maxItems: 10, run: control.run });
    const first = batcher.submit(1);
    await control.started(1);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1]]);
    control.fulfil(0);
    await expect(first).resolves.toBe("item:1");

    const together = [2, 3].map((item) => batcher.submit(item));
    await control.started(2);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3]]);
    control.fulfil(1);
    await expect(Promise.all(together)).resolves.toEqual(["item:2", "item:3"]);
  });

  it("groups items submitted in one turn of the event loop even when each batch completes without yielding to it", async () => {
    // The embedded database runs a transaction to its end in one turn: requests read in separate
    // callbacks of one turn must still share a batch, not commit one by one.
    const batches: number[][] = [];
    const batcher = createBatcher<number, string>({
      maxInFlight: 1,
      maxItems: 10,
      run: async (items) => {
        batches.push(items);
        return items.map((item) => ({ status: "fulfilled" as const, value: `item:${item}` }));
      },
    });
    const submitted = await new Promise<Promise<string>[]>((resolve) => {
      const all: Promise<string>[] = [];
      for (const item of [1, 2, 3]) {
        setImmediate(() => {
          all.push(batcher.submit(item));
          if (all.length === 3) resolve(all);
        });
      }
    });
    await expect(Promise.all(submitted)).resolves.toEqual(["item:1", "item:2", "item:3"]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it("starts a full group beside a running batch, up to maxInFlight, and keeps that many running while items wait", async () => {
    const control = controlledRun();
    const batcher = createBatcher({ maxInFlight: 2, maxItems: 2, run: control.run });
    const submitted = [batcher.submit(1)];
    await control.started(1);
    submitted.push(...[2, 3].map((item) => batcher.submit(item)));
    // 2 and 3 fill a group: it does not wait for batch 0.
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3]]);
    // Two batches run: a full group waits now.
    submitted.push(...[4, 5, 6].map((item) => batcher.submit(item)));
    expect(control.batches).toHaveLength(2);

    control.fulfil(0);
    await control.started(3);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3], [4, 5]]);
    control.fulfil(1);
    await control.started(4);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
    control.fulfil(2);
    control.fulfil(3);
    await expect(Promise.all(submitted)).resolves.toEqual([1, 2, 3, 4, 5, 6].map((item) => `item:${item}`));

    // The queue ran dry: the next item runs alone again.
    const alone = batcher.submit(7);
    await control.started(5);
    expect(control.batches.at(-1)?.items).toEqual([7]);
    control.fulfil(4);
    await expect(alone).resolves.toBe("item:7");
  });

  it("puts at most maxItems items in a batch", async () => {
    const control = controlledRun();
    const batcher = createBatcher({ maxInFlight: 1, maxItems: 2, run: control.run });
    const submitted = [batcher.submit(1)];
    await control.started(1);
    submitted.push(...[2, 3, 4, 5, 6].map((item) => batcher.submit(item)));
    expect(control.batches.map((batch) => batch.items)).toEqual([[1]]);

    control.fulfil(0);
    await control.started(2);
    control.fulfil(1);
    await control.started(3);
    control.fulfil(2);
    await control.started(4);
    control.fulfil(3);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
    await expect(Promise.all(submitted)).resolves.toEqual([1, 2, 3, 4, 5, 6].map((item) => `item:${item}`));
  });

  it("closes a group at maxWeight of work as at maxItems: heavy items start beside a running batch", async () => {
    const control = controlledRun();
    // Items weigh their own value: 1 is light, 50 is heavy.
    const batcher = createBatcher({
      maxInFlight: 3,
      maxItems: 10,
      maxWeight: 100,
      weigh: (item: number) => item,
      run: control.run,
    });
    const submitted = [batcher.submit(1)];
    await control.started(1);
    submitted.push(...[2, 3].map((item) => batcher.submit(item)));
    // Light items wait for the running batch: their group is far from full.
    expect(control.batches.map((batch) => batch.items)).toEqual([[1]]);
    submitted.push(...[50, 60, 40].map((item) => batcher.submit(item)));
    // 2 + 3 + 50 + 60 passes 100: that group starts at once; 40 waits, alone under the limit.
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3, 50, 60]]);

    control.fulfil(0);
    await control.started(3);
    expect(control.batches.at(-1)?.items).toEqual([40]);
    control.fulfil(1);
    control.fulfil(2);
    await expect(Promise.all(submitted)).resolves.toEqual(
      [1, 2, 3, 50, 60, 40].map((item) => `item:${item}`),
    );
  });

  it("rejects only the item whose result is rejected", async () => {
    const control = controlledRun();
    const batcher = createBatcher({ maxInFlight: 1, maxItems: 10, run: control.run });
    const first = batcher.submit(1);
    await control.started(1);
    const [a, b, c] = [2, 3, 4].map((item) => batcher.submit(item));
    control.fulfil(0);
    await control.started(2);
    expect(control.batches[1]?.items).toEqual([2, 3, 4]);

    const failure = new Error("delivery 3 is malformed");
    control.batches[1]?.done.resolve([
      { status: "fulfilled", value: "item:2" },
      { status: "rejected", reason: failure },
      { status: "fulfilled", value: "item:4" },
    ]);
    await expect(first).resolves.toBe("item:1");
    await expect(a).resolves.toBe("item:2");
    await expect(b).rejects.toBe(failure);
    await expect(c).resolves.toBe("item:4");
  });

  it("rejects every item of a batch whose run throws, and still runs the next batches", async () => {
    const control = controlledRun();
    const batcher = createBatcher({ maxInFlight: 1, maxItems: 10, run: control.run });
    const first = batcher.submit(1);
    await control.started(1);
    const [a, b] = [2, 3].map((item) => batcher.submit(item));
    control.fulfil(0);
    await control.started(2);
    expect(control.batches[1]?.items).toEqual([2, 3]);
    // Submitted while the failing batch runs: it must not be stranded behind it.
    const later = batcher.submit(4);

    const failure = new Error("connection reset");
    control.batches[1]?.done.reject(failure);
    await expect(a).rejects.toBe(failure);
    await expect(b).rejects.toBe(failure);

    await control.started(3);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3], [4]]);
    control.fulfil(2);
    await expect(later).resolves.toBe("item:4");
    await expect(first).resolves.toBe("item:1");
    // The failed batch gave its slot back: the next item is not stranded either.
    const after = batcher.submit(5);
    await control.started(4);
    expect(control.batches.map((batch) => batch.items)).toEqual([[1], [2, 3], [4], [5]]);
    control.fulfil(3);
    await expect(after).resolves.toBe("item:5");
  });

  it("treats a run that throws before returning a promise like one that rejects", async () => {
    const failure = new Error("bad input to run");
    let calls = 0;
    const batcher = createBatcher<number, string>({
      maxInFlight: 1,
      maxItems: 10,
      run: (items) => {
        calls += 1;
        if (calls === 1) throw failure;
        return Promise.resolve(
          items.map((item) => ({ status: "fulfilled" as const, value: `item:${item}` })),
        );
      },
    });
    await expect(batcher.submit(1)).rejects.toBe(failure);
    // The slot was given back.
    await expect(batcher.submit(2)).resolves.toBe("item:2");
  });
});
