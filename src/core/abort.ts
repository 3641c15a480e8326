// Time limits on requests. Node 20's AbortSignal.any holds the signals it combines weakly: an
// AbortSignal.timeout nothing else references is collected, and its timeout never fires (a model
// call meant to end at 60 s ran on until the run's outer limit). Here a timer holds the signal.

/** A signal that aborts after `ms` (reason: a TimeoutError) or as soon as `other` does. */
export function abortAfter(ms: number, other?: AbortSignal | null): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, "TimeoutError")),
    ms,
  );
  // The timer does not keep the process alive; while it is pending it keeps the controller alive.
  timer.unref();
  if (other?.aborted) {
    clearTimeout(timer);
    controller.abort(other.reason);
  } else {
    other?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        controller.abort(other.reason);
      },
      { once: true },
    );
  }
  return controller.signal;
}
