// Group commit: work items that arrive while earlier ones are being written wait and go together,
// so a burst of small requests shares transactions instead of queueing for one each. Nothing waits
// on a timer: with fewer than `maxInFlight` batches running, an item starts at once.

export interface BatcherOptions<I, R> {
  /** Batches running at once. */
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
  const pump = () => {
    while (inFlight < options.maxInFlight && queue.length > 0) {
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
          pump();
        });
    }
  };
  return {
    submit: (item) =>
      new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        pump();
      }),
  };
}
