// The storm correlator: places the alerts that ingest marked storm_pending (storms.ts) into storms.
// Worker instances run it in a loop; several instances share the work through per-scope advisory
// locks. The classification job runs it first for its tenant, so triage always sees current storms.
import type { Logger } from "pino";
import type { Executor } from "../../core/db/database.ts";
import { type Repeating, repeat } from "../../core/repeat.ts";
import type { AlertScope } from "../ingest/lifecycle.ts";
import type { ImpactOptions } from "./impact.ts";
import { correlateScopes, pendingScopes, SCOPES_PER_ROUND } from "./storms.ts";

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
  /** Rounds at most (MAX_ROUNDS by default). */
  rounds?: number;
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
    for (const { tenant, scopes: tenantScopes } of byTenant.values()) {
      for (let first = 0; first < tenantScopes.length; first += SCOPES_PER_ROUND) {
        progress += await correlateScopes(db, tenant, tenantScopes.slice(first, first + SCOPES_PER_ROUND), {
          now: options.now(),
          impact: options.impact,
          wait: options.wait,
        });
      }
    }
    total += progress;
    if (progress === 0) break;
  }
  return total;
}

/**
 * Runs one round of correlatePendingStorms every CORRELATOR_INTERVAL_MS until stopped. One round per
 * tick, even under load: what arrives meanwhile is correlated together in the next one, which costs
 * far less than a round per delivery and leaves the database to ingest.
 */
export function startStormCorrelator(
  db: Executor,
  options: Omit<CorrelatePendingOptions, "tenant"> & { log: Logger; intervalMs?: number },
): Repeating {
  const round = () =>
    correlatePendingStorms(db, { ...options, rounds: 1 }).then(
      () => {},
      (err: unknown) => options.log.error({ err }, "storm correlation failed"),
    );
  return repeat(round, options.intervalMs ?? CORRELATOR_INTERVAL_MS, 0);
}
