// Automatic triage: each new or re-fired alert waits in a bucket (analysis_status `queued`) and a
// job classifies the bucket together (`running`, then `completed` or `failed`). The registration
// decides the buckets: `immediate` gives each alert its own; `batch` groups alerts of one storm scope
// or one service over the debounce window; `classify_critical_bypass` sends Critical and P1 alerts
// straight through. Test notifications are never classified.
import type { SendOptions } from "../../core/queue/catalog.ts";
import { stormScopeOf } from "../correlation/correlate.ts";
import { firstLabelOf, type LabelKind } from "../correlation/label-vocabulary.ts";
import type { AlertRow, AlertScope, IngestOutcome } from "../ingest/lifecycle.ts";

export interface TriageSettings {
  mode: "batch" | "immediate";
  windowSeconds: number;
  bucketBy: "storm_scope" | "service";
  criticalBypass: boolean;
}

/**
 * The labels (label-vocabulary.ts) a service bucket is named by, first found wins: the service, else
 * the job, the subsystem (Zabbix's component) or the Checkmk check the alert is about.
 */
const SERVICE_BUCKET_KINDS: LabelKind[] = ["service", "job", "subsystem", "check"];

function isCriticalOrP1(row: AlertRow): boolean {
  return row.severity === "Critical" || /^p1$/i.test(row.sourceSeverity.trim());
}

/** The bucket an alert is classified in; an alert alone in its bucket is classified at once. */
export function triageBucketOf(
  row: AlertRow,
  settings: TriageSettings,
): { key: string; delaySeconds: number } {
  const alone = { key: `alert:${row.id}`, delaySeconds: 0 };
  if (settings.mode === "immediate" || (settings.criticalBypass && isCriticalOrP1(row))) return alone;
  let group: string | null;
  if (settings.bucketBy === "service") {
    const found = firstLabelOf(row.labels, row.sourceType, SERVICE_BUCKET_KINDS);
    group = found ? `service:${found.value.trim().toLowerCase()}` : null;
  } else {
    group = stormScopeOf(row.labels, row.sourceType);
  }
  // Without a scope or service an alert has no one to be grouped with, so it does not wait either.
  if (!group) return alone;
  return { key: `${settings.mode}:${settings.bucketBy}:${group}`, delaySeconds: settings.windowSeconds };
}

/** Marks the delivery's new and re-fired alerts for classification; returns their buckets. */
export function queueForTriage(
  planned: { row: AlertRow; outcome: IngestOutcome }[],
  settings: TriageSettings,
): Map<string, number> {
  const buckets = new Map<string, number>();
  for (const { row, outcome } of planned) {
    if ((outcome !== "created" && outcome !== "refired") || row.isTest) continue;
    const bucket = triageBucketOf(row, settings);
    row.analysisStatus = "queued";
    row.triageBucket = bucket.key;
    buckets.set(bucket.key, bucket.delaySeconds);
  }
  return buckets;
}

export interface ClassifyJobData {
  orgId: string | null;
  ownerId: string;
  /** Each bucket is classified on its own; one job carries all buckets due at the same time. */
  buckets: string[];
}

/**
 * At most two jobs per tenant for a group of deliveries, however many buckets they fill: one for the
 * buckets due now, one for those that wait for the window. A waiting job runs when the window ends
 * and claims every queued alert of its buckets, so the singleton key may drop a later job for exactly
 * the same buckets in the same window. The key names every bucket of its job, so a job that covers
 * other buckets too (from another delivery of the group) is never dropped for it.
 */
export function triageJobs(
  queued: { scope: Pick<AlertScope, "orgId" | "ownerId">; buckets: Map<string, number> }[],
): { data: ClassifyJobData; options: SendOptions }[] {
  const byDue = new Map<
    string,
    { scope: Pick<AlertScope, "orgId" | "ownerId">; delaySeconds: number; keys: Set<string> }
  >();
  for (const { scope, buckets } of queued) {
    for (const [bucket, delaySeconds] of buckets) {
      const due = JSON.stringify([scope.orgId, scope.ownerId, delaySeconds]);
      const entry = byDue.get(due) ?? { scope, delaySeconds, keys: new Set<string>() };
      entry.keys.add(bucket);
      byDue.set(due, entry);
    }
  }
  return [...byDue.values()].map(({ scope, delaySeconds, keys }) => {
    const data = { orgId: scope.orgId, ownerId: scope.ownerId, buckets: [...keys].sort() };
    if (delaySeconds === 0) return { data, options: {} };
    return {
      data,
      options: {
        startAfterSeconds: delaySeconds,
        singletonKey: `${scope.orgId ?? scope.ownerId}|${data.buckets.join("|")}`.slice(0, 500),
        singletonSeconds: delaySeconds,
      },
    };
  });
}
