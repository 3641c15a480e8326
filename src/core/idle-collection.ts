// Garbage left by a burst, collected once the process goes quiet. V8 collects its old generation when
// that grows past a limit, never because allocation stopped: after a flood of deliveries an idle
// embedded Vigil held 100 to 150 MB of garbage for as long as it stayed idle (20,000 alerts left a
// 140 MB heap, 30 MB of it live). The collection pauses the process once per burst, for about 80 ms
// at 200 MB of heap, at a moment when its event loop has been mostly idle for two seconds.
import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import vm from "node:vm";
import { type Repeating, repeat } from "./repeat.ts";

/** How often the process looks at its heap. */
const CHECK_MS = 2_000;
/** Quiet: the event loop busy less than this share of the last check's period. */
const QUIET_UTILIZATION = 0.2;
/** Growth of the heap since the last collection worth one. */
const GROWTH_BYTES = 32 * 1024 * 1024;

export interface IdleCollector {
  /**
   * One look: collects when the process was quiet (`utilization`, the event loop's busy share since
   * the last look) and the heap has grown by GROWTH_BYTES since the last collection. True if it did.
   */
  check(utilization: number): boolean;
}

/** The decision, over a way to read the heap and to collect (both V8's, in `collectWhenIdle`). */
export function createIdleCollector(heapUsed: () => number, collect: () => void): IdleCollector {
  // Nothing collected yet: the first quiet look collects what starting up left behind.
  let baseline = 0;
  return {
    check(utilization) {
      const used = heapUsed();
      // A heap that shrank by itself (V8 collected under load) is the new baseline.
      if (used < baseline) baseline = used;
      if (utilization >= QUIET_UTILIZATION || used - baseline < GROWTH_BYTES) return false;
      collect();
      baseline = heapUsed();
      return true;
    },
  };
}

/**
 * V8's full collection, twice. Node offers it only under --expose-gc; the flag set now gives it to
 * a new context. The first frees the garbage but leaves its pages committed wherever a live object
 * remains (after a flood: 92 MB of old space held 29 MB live); the second moves those objects
 * together and gives the emptied pages back (34 MB).
 */
export function fullCollection(): () => void {
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc") as () => void;
  return () => {
    gc();
    gc();
  };
}

/** Looks every CHECK_MS, for `vigil serve`; stopped with the server. */
export function collectWhenIdle(): Repeating {
  const collector = createIdleCollector(() => process.memoryUsage().heapUsed, fullCollection());
  let since = performance.eventLoopUtilization();
  return repeat(async () => {
    const now = performance.eventLoopUtilization();
    collector.check(performance.eventLoopUtilization(now, since).utilization);
    since = now;
  }, CHECK_MS);
}
