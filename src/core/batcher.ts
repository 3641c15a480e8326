// Group commit: work items that arrive while earlier ones are being written wait and go together,
// so a burst of small requests shares transactions instead of queueing for one each. Nothing waits
// on a timer: with nothing running, an item starts at once and alone.
//
// The group adapts to load. Items that arrive while a batch runs wait, and the waiting group closes
// when a running batch returns, so a group holds what arrived during one commit: more load, bigger
// groups, and the number of commits per second stays near what one connection's round trips allow.
// Only a full group (maxItems) starts before that, on another connection, up to maxInFlight: a batch
// returning then starts the next group in its place, so as many batches stay in flight as the load
// filled, and the count falls back when the queue runs dry.

export interface BatcherOptions<I, R> {
  /** Batches running at once at most. */
  maxInFlight: number;
  /** Items per batch at most. */
  maxItems: number;
  /** Runs one batch: one settled result per item, in order. */
  run(items: I[]): Promise<PromiseSettledResult<R>[]>;
}

export interface Batcher<I, R> {
  submit(item: I): Promise<R>;
}

interface Waiting<I, R> {
  item: I;
  resolve(value: R): void;
  reject(reason: unknown): void;
}

export function createBatcher<I, R>(options: BatcherOptions<I, R>): Batcher<I, R> {
  const queue: Waiting<I, R>[] = [];
  let inFlight = 0;
  const start = () => {
    const batch = queue.splice(0, options.maxItems);
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
  const startFull = () => {
    while (queue.length >= options.maxItems && inFlight < options.maxInFlight) start();
  };
  return {
    submit: (item) =>
      new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (inFlight === 0) start();
        else startFull();
      }),
  };
}
