// A limit on how many calls run at once, shared by everything that uses one limit: waits spent on a
// remote service (a model's answer) overlap, without sending it everything at the same moment.

export type Limit = <T>(run: () => Promise<T>) => Promise<T>;

/** Runs each call as soon as fewer than `limit` calls of this limit are in flight. */
export function createLimit(limit: number): Limit {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (run) => {
    while (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await run();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}
