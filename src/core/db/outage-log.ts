// How a background loop (the storm correlator, the job queue's workers) reports failures while the
// database is unavailable. They try again every half second or two, each worker on its own: logged as
// errors with their stacks, a database restart of a minute wrote thousands of lines and buried what
// came before it.
import type { Logger } from "pino";
import { isDatabaseUnavailable } from "./pg-errors.ts";

/** How often an outage that goes on is said again. */
const OUTAGE_REPEAT_MS = 60_000;

export interface OutageLog {
  /**
   * True when `err` is an unavailable database (isDatabaseUnavailable): said as a warning, at most
   * once per `everyMs` with the count of those not said. False for any other failure, which the
   * caller reports as it would.
   */
  unavailable(err: unknown): boolean;
  /** A round went through: once after an outage, says the loop has resumed. */
  succeeded(): void;
}

export function outageLog(log: Logger, what: string, everyMs = OUTAGE_REPEAT_MS): OutageLog {
  let since: number | null = null;
  let saidAt = Number.NEGATIVE_INFINITY;
  let unsaid = 0;
  return {
    unavailable(err) {
      if (!isDatabaseUnavailable(err)) return false;
      const now = Date.now();
      since ??= now;
      if (now - saidAt < everyMs) {
        unsaid += 1;
        return true;
      }
      log.warn(
        { err, failures_not_logged: unsaid },
        `${what}: the database is unavailable; trying again until it answers`,
      );
      saidAt = now;
      unsaid = 0;
      return true;
    },
    succeeded() {
      if (since === null) return;
      log.info({ unavailable_ms: Date.now() - since }, `${what}: the database answers again`);
      since = null;
      saidAt = Number.NEGATIVE_INFINITY;
      unsaid = 0;
    },
  };
}
