// abortAfter: a time limit that fires even when nothing but the request holds its signal.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it, vi } from "vitest";
import { abortAfter } from "./abort.ts";

/** Node's garbage collector, reachable without starting the process with --expose-gc. */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("abortAfter", () => {
  it("aborts with a TimeoutError once its time is up, though nothing else holds its timer", async () => {
    const gc = collector();
    // Only the combined signal is kept, as a fetch keeps it; everything it was made from may go.
    const signal = abortAfter(200, new AbortController().signal);
    await vi.waitFor(
      () => {
        gc();
        expect(signal.aborted).toBe(true);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect((signal.reason as Error).name).toBe("TimeoutError");
  });

  it("aborts with the other signal's reason as soon as it aborts", () => {
    const caller = new AbortController();
    const signal = abortAfter(60_000, caller.signal);
    expect(signal.aborted).toBe(false);
    caller.abort(new Error("operator abort"));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe("operator abort");
    const already = abortAfter(60_000, caller.signal);
    expect((already.reason as Error).message).toBe("operator abort");
  });
});
