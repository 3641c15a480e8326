// Runs one fast-check property against the server: seeded, bounded by runs and by time, with
// shrinking capped. A run that finds something records it; the last failing run is the smallest
// fast-check reached, and that is the one kept.
import { createHash } from "node:crypto";
import fc from "fast-check";
import type { Finding, FuzzClient } from "./client.ts";

/** Runs allowed after the first failure, for shrinking; then every run passes and the search ends. */
const SHRINK_RUNS = 40;

export interface Budget {
  seed: number;
  numRuns: number;
  /** Wall-clock bound of this property, shrinking included. */
  timeMs: number;
}

/** A seed per property, from the run's seed and the property's name: adding one moves no other. */
export function seedFor(seed: number, name: string): number {
  return createHash("sha256").update(`${seed}:${name}`).digest().readInt32LE(0);
}

/**
 * Runs the property until its runs or its time are spent. A failure ends a fast-check run; it is
 * kept, shrunk, and the search goes on with a new seed, the same failure now passing (counted, not
 * kept again), so one bug neither hides the next nor ends the target's coverage.
 */
export async function fuzz<T>(
  client: FuzzClient,
  name: string,
  arbitrary: fc.Arbitrary<T>,
  check: (value: T) => Promise<Finding | null>,
  budget: Budget,
  examples: T[] = [],
): Promise<{ runs: number; found: number }> {
  const deadline = Date.now() + budget.timeMs;
  const known = new Set<string>();
  let runs = 0;
  let found = 0;
  let left = budget.numRuns + examples.length;
  for (let round = 0; left > 0 && Date.now() < deadline; round++) {
    let last: Finding | null = null;
    let afterFailure = 0;
    let roundRuns = 0;
    const property = fc.asyncProperty(arbitrary, async (value) => {
      if (last && ++afterFailure > SHRINK_RUNS) return true;
      roundRuns += 1;
      const finding = await check(value);
      if (!finding || known.has(finding.signature)) return true;
      last = finding;
      return false;
    });
    const seed = seedFor(budget.seed, round === 0 ? name : `${name}#${round}`);
    const details = await fc.check(property, {
      seed,
      numRuns: left,
      // Examples count as runs; they run once, before the first random run.
      examples: round === 0 ? examples.map((example) => [example] as [T]) : [],
      plugins: [fc.interruptAfterTimeLimit(Math.max(deadline - Date.now(), 1))],
    });
    runs += roundRuns;
    left -= Math.max(details.numRuns, 1);
    const failure = last as Finding | null;
    if (!failure) break;
    found += 1;
    known.add(failure.signature);
    const replay = details.counterexamplePath
      ? ` (replay: seed ${seed}, path ${details.counterexamplePath})`
      : "";
    client.keep({ ...failure, detail: `${failure.detail}${replay}` });
  }
  return { runs, found };
}

/** An exception thrown while fuzzing (the client failed, not the server), as a finding. */
export function thrown(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
