// Group commit: work items that arrive while earlier ones are being written wait and go together,
// so a burst of small requests shares transactions instead of queueing for one each. Nothing waits
// on a timer: with nothing running, an item starts at the end of the event loop's current turn
// (setImmediate), together with the items submitted in that same turn, and otherwise alone. That
// turn matters on the embedded database: PGlite runs a whole transaction without giving the event
// loop a turn, so an item started at once would commit before the next request was even read, and
// every delivery would pay a commit of its own.
//
// The group adapts to load. Items that arrive while a batch runs wait, and the waiting group closes
// when a running batch returns, so a group holds what arrived during one commit: more load, bigger
// groups, and the number of commits per second stays near what one connection's round trips allow.
// Only a full group (maxItems, or maxWeight of work: a few large deliveries are worth a commit of
// their own) starts before that, on another connection, up to maxInFlight: a batch returning then
// starts the next group in its place, so as many batches stay in flight as the load filled, and the
// count falls back when the queue runs dry.

export interface BatcherOptions<I, R> {
  /** Batches running at once at most. */
  maxInFlight: number;
  /** Items per batch at most. */
  maxItems: number;
  /** Work per batch at most, in the unit of `weigh` (default: no limit but maxItems). */
  maxWeight?: number;
  /** An item's share of a batch's work (default 1). */
  weigh?(item: I): number;
  /** Runs one batch: one settled result per item, in order. */
  run(items: I[]): Promise<PromiseSettledResult<R>[]>;
}

export interface Batcher<I, R> {
  submit(item: I): Promise<R>;
}

interface Waiting<I, R> {
  item: I;
  weight: number;
  resolve(value: R): void;
  reject(reason: unknown): void;
}

export function createBatcher<I, R>(options: BatcherOptions<I, R>): Batcher<I, R> {
  const queue: Waiting<I, R>[] = [];
  const maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
  let queuedWeight = 0;
  let inFlight = 0;
  /** How many waiting items make the next group: up to maxItems, and past maxWeight by one at most. */
  const nextGroupSize = () => {
    let weight = 0;
    let count = 0;
    while (count < queue.length && count < options.maxItems && weight < maxWeight) {
      weight += queue[count]?.weight ?? 0;
      count += 1;
    }
    return count;
  };
  const start = () => {
    const batch = queue.splice(0, nextGroupSize());
    for (const waiting of batch) queuedWeight -= waiting.weight;
    inFlight += 1;
    // A run that throws before returning its promise fails its batch like one that rejects.
    new Promise<PromiseSettledResult<R>[]>((resolve) =>
      resolve(options.run(batch.map((waiting) => waiting.item))),
    )
      .then(
        (results) =>
          batch.forEach((waiting, n) => {
            const result = results[n];
            if (result?.status === "fulfilled") waiting.resolve(result.value);
            else waiting.reject(result ? result.reason : new Error("batch returned no result for an item"));
          }),
        (err: unknown) => {
          for (const waiting of batch) waiting.reject(err);
        },
      )
      .finally(() => {
        inFlight -= 1;
        // The waiting group closes now, whatever its size.
        if (queue.length > 0) start();
        startFull();
      });
  };
  let startScheduled = false;
  /** With nothing running: start once this turn's items are in (see the top of the file). */
  const startAfterThisTurn = () => {
    if (startScheduled) return;
    startScheduled = true;
    setImmediate(() => {
      startScheduled = false;
      if (inFlight === 0 && queue.length > 0) start();
      startFull();
    });
  };
  const startFull = () => {
    while (inFlight < options.maxInFlight && (queue.length >= options.maxItems || queuedWeight >= maxWeight))
      start();
  };
  return {
    submit: (item) =>
      new Promise<R>((resolve, reject) => {
        const weight = options.weigh?.(item) ?? 1;
        queue.push({ item, weight, resolve, reject });
        queuedWeight += weight;
        if (inFlight === 0) startAfterThisTurn();
        startFull();
      }),
  };
}
