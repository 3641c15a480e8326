// Runs `run` over items with at most `limit` of them in flight at once: waits that are spent on a
// remote service (a model's answer) overlap, without sending it everything at the same moment.

/** Resolves when every item ran; rejects with the first failure, once the runs in flight ended. */
export async function eachAtMost<T>(items: readonly T[], limit: number, run: (item: T) => Promise<void>) {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const lane = async () => {
    while (next < items.length && !failure) {
      const item = items[next++] as T;
      try {
        await run(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failure) throw (failure as { error: unknown }).error;
}
