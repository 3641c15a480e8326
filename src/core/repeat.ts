// A background loop: a piece of work, a pause, the work again, until stopped. Each run starts only
// after the one before it ended, so a slow run delays the next instead of overlapping it.

export interface Repeating {
  /** Stops the loop; resolves once a run under way has ended. */
  stop(): Promise<void>;
}

/**
 * Runs `work` after `firstDelayMs`, then `delayMs` after each run ends, until stopped. `work`
 * handles its own errors: one that escapes it is dropped, and the loop goes on.
 */
export function repeat(work: () => Promise<void>, delayMs: number, firstDelayMs = delayMs): Repeating {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    timer = null;
    running = work()
      .catch(() => {})
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, delayMs);
      });
  };
  timer = setTimeout(tick, firstDelayMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
