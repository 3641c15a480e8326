// The storm correlator: places the alerts that ingest marked storm_pending (storms.ts) into storms.
// Worker instances run it in a loop; several instances share the work through per-scope advisory
// locks. The classification job runs it first for its tenant, so triage always sees current storms.
import type { Logger } from "pino";
import type { Executor } from "../../core/db/database.ts";
import { outageLog } from "../../core/db/outage-log.ts";
import { type Repeating, repeat } from "../../core/repeat.ts";
import type { AlertScope } from "../ingest/lifecycle.ts";
import type { ImpactOptions } from "./impact.ts";
import {
  type CorrelateOptions,
  correlateScopes,
  PENDING_BATCH,
  pendingScopes,
  SCOPES_PER_ROUND,
} from "./storms.ts";

/** How often an idle correlator looks for pending alerts. */
export const CORRELATOR_INTERVAL_MS = 500;
/** Rounds per call: a scope that keeps receiving alerts does not hold the correlator forever. */
const MAX_ROUNDS = 20;
/** Scopes looked up per round. */
const PENDING_SCOPES_PER_ROUND = 500;

export interface CorrelatePendingOptions {
  now: () => Date;
  impact?: ImpactOptions;
  /** Only this tenant's scopes; every tenant's when absent. */
  tenant?: Pick<AlertScope, "orgId" | "ownerId">;
  /** Wait for scopes another instance is correlating, so that none is left pending on return. */
  wait?: boolean;
  /** Queues the classification of alerts whose storm role changed (CorrelateOptions.reclassify). */
  reclassify?: CorrelateOptions["reclassify"];
  /** Rounds at most (MAX_ROUNDS by default). */
  rounds?: number;
  /**
   * Another round only while the last one left a backlog (a full batch of some scopes' queued
   * alerts, or a full list of scopes), not whenever it found anything.
   */
  whileBehind?: boolean;
}

/**
 * Correlates every scope with pending alerts until none is left (without `wait`, scopes another
 * instance holds right now are left to it). Returns the number of pending alerts looked at.
 */
export async function correlatePendingStorms(
  db: Executor,
  options: CorrelatePendingOptions,
): Promise<number> {
  let total = 0;
  for (let round = 0; round < (options.rounds ?? MAX_ROUNDS); round++) {
    const scopes = await pendingScopes(db, options.tenant ?? null, PENDING_SCOPES_PER_ROUND);
    const byTenant = new Map<
      string,
      { tenant: Pick<AlertScope, "orgId" | "ownerId">; scopes: (string | null)[] }
    >();
    for (const { orgId, ownerId, scope } of scopes) {
      const id = `${orgId ?? ""}|${ownerId}`;
      const entry = byTenant.get(id) ?? { tenant: { orgId, ownerId }, scopes: [] };
      entry.scopes.push(scope);
      byTenant.set(id, entry);
    }
    let progress = 0;
    let behind = scopes.length >= PENDING_SCOPES_PER_ROUND;
    const failed: ScopeFailure[] = [];
    for (const { tenant, scopes: tenantScopes } of byTenant.values()) {
      for (let first = 0; first < tenantScopes.length; first += SCOPES_PER_ROUND) {
        const batch = tenantScopes.slice(first, first + SCOPES_PER_ROUND);
        const looked = await correlateIsolated(db, tenant, batch, options, failed);
        progress += looked;
        if (looked >= PENDING_BATCH) behind = true;
      }
    }
    total += progress;
    if (failed.length > 0) throw new StormCorrelationError(failed);
    if (progress === 0 || (options.whileBehind && !behind)) break;
  }
  return total;
}

interface ScopeFailure {
  tenant: Pick<AlertScope, "orgId" | "ownerId">;
  scope: string | null;
  error: unknown;
}

/** Scopes that failed in a round; the others were correlated. */
export class StormCorrelationError extends Error {
  constructor(readonly failures: ScopeFailure[]) {
    super(`storm correlation failed for ${failures.length} scope(s); the others were correlated`, {
      cause: failures[0]?.error,
    });
    this.name = "StormCorrelationError";
  }
}

/**
 * A batch of one tenant's scopes, and when it fails each scope on its own: one scope that cannot be
 * correlated (whatever its data holds) fails alone, instead of holding back every scope of every
 * tenant behind it in the round, tick after tick.
 */
async function correlateIsolated(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  scopes: (string | null)[],
  options: CorrelatePendingOptions,
  failed: ScopeFailure[],
): Promise<number> {
  const correlate = (some: (string | null)[]) =>
    correlateScopes(db, tenant, some, {
      now: options.now(),
      impact: options.impact,
      wait: options.wait,
      reclassify: options.reclassify,
    });
  try {
    return await correlate(scopes);
  } catch (error) {
    if (scopes.length === 1) {
      failed.push({ tenant, scope: scopes[0] ?? null, error });
      return 0;
    }
  }
  let looked = 0;
  for (const scope of scopes) looked += await correlateIsolated(db, tenant, [scope], options, failed);
  return looked;
}

/**
 * Runs a round of correlatePendingStorms every CORRELATOR_INTERVAL_MS until stopped. One round per
 * tick under steady load: what arrives meanwhile is correlated together in the next one, which
 * costs far less than a round per delivery and leaves the database to ingest. A round that leaves
 * a backlog is followed by another at once (up to MAX_ROUNDS a tick): a round places at most
 * PENDING_BATCH alerts per call, so a flood of 50-alert deliveries outran one round per tick (13,051
 * alerts still queued at the end of a 10 s bench turn) and its storms showed late.
 */
export function startStormCorrelator(
  db: Executor,
  options: Omit<CorrelatePendingOptions, "tenant"> & { log: Logger; intervalMs?: number },
): Repeating {
  const outage = outageLog(options.log, "storm correlation");
  const round = () =>
    correlatePendingStorms(db, { ...options, whileBehind: true }).then(
      () => outage.succeeded(),
      (err: unknown) => {
        if (!(err instanceof StormCorrelationError)) {
          if (!outage.unavailable(err)) options.log.error({ err }, "storm correlation failed");
          return;
        }
        for (const { tenant, scope, error } of err.failures) {
          if (outage.unavailable(error)) continue;
          options.log.error({ err: error, tenant, scope }, "storm correlation failed for a scope");
        }
      },
    );
  return repeat(round, options.intervalMs ?? CORRELATOR_INTERVAL_MS, 0);
}
