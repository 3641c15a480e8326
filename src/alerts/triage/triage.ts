// Automatic triage: each new or re-fired alert waits in a bucket (analysis_status `queued`) and a
// job classifies the bucket together (`running`, then `completed` or `failed`). The registration
// decides the buckets: `immediate` gives each alert its own; `batch` groups alerts of one storm scope
// or one service over the debounce window; `classify_critical_bypass` sends Critical and P1 alerts
// straight through. Test notifications are never classified.
import { createHash } from "node:crypto";
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

/**
 * The bucket an alert is classified in and how long the bucket waits: an alert alone in its bucket
 * (immediate mode, a Critical or P1 alert let through) is classified at once.
 */
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
  // Batch mode debounces every alert, as the spec's classify_mode batch has it: one without a scope
  // or service shares no incident with others, so it waits the window with the other such alerts of
  // its source and integration (the `unscoped:` prefix is no dimension a scope is named by).
  group ??= `unscoped:${row.sourceType}/${row.integrationName}`;
  return { key: `${settings.mode}:${settings.bucketBy}:${group}`, delaySeconds: settings.windowSeconds };
}

/**
 * Marks the delivery's alerts that need a classification: new, re-fired, or active with another
 * severity than before (a warning escalated to critical within its episode); returns their buckets.
 */
export function queueForTriage(
  planned: { row: AlertRow; outcome: IngestOutcome; before: AlertRow | null }[],
  settings: TriageSettings,
): Map<string, number> {
  const buckets = new Map<string, number>();
  for (const { row, outcome, before } of planned) {
    if (row.isTest || !needsClassification(row, outcome, before)) continue;
    const bucket = triageBucketOf(row, settings);
    row.analysisStatus = "queued";
    row.triageBucket = bucket.key;
    buckets.set(bucket.key, bucket.delaySeconds);
  }
  return buckets;
}

function needsClassification(row: AlertRow, outcome: IngestOutcome, before: AlertRow | null): boolean {
  if (outcome === "created" || outcome === "refired") return true;
  return row.status === "active" && before !== null && before.severity !== row.severity;
}

export interface ClassifyJobData {
  orgId: string | null;
  ownerId: string;
  /** Each bucket is classified on its own; one job carries all buckets due at the same time. */
  buckets: string[];
}

/** One key per bucket: a bucket named past pg-boss's key length is named by its digest instead. */
function singletonKeyOf(tenant: string, bucket: string): string {
  const key = `${tenant}|${bucket}`;
  return key.length <= 500 ? key : `${tenant}|sha256:${createHash("sha256").update(bucket).digest("hex")}`;
}

const DUE_NOW_PRIORITY = 1;

/**
 * The jobs for a group of deliveries. Buckets due now: one job per tenant, however many deliveries
 * and buckets. Buckets that wait for the window: one job per bucket, whose singleton key drops the
 * same bucket's job from any later delivery in the same window: the waiting job runs when the window
 * ends and claims every alert queued in its bucket by then. A storm of deliveries into a few buckets
 * thus writes one job row per bucket and window, not one per delivery or per group.
 */
export function triageJobs(
  queued: { scope: Pick<AlertScope, "orgId" | "ownerId">; buckets: Map<string, number> }[],
): { data: ClassifyJobData; options: SendOptions }[] {
  const now = new Map<string, { scope: Pick<AlertScope, "orgId" | "ownerId">; buckets: Set<string> }>();
  const waiting = new Map<string, { data: ClassifyJobData; options: SendOptions }>();
  for (const { scope, buckets } of queued) {
    const tenant = scope.orgId ?? scope.ownerId;
    for (const [bucket, delaySeconds] of buckets) {
      if (delaySeconds === 0) {
        const owner = `${scope.orgId}|${scope.ownerId}`;
        const due = now.get(owner) ?? { scope, buckets: new Set<string>() };
        due.buckets.add(bucket);
        now.set(owner, due);
        continue;
      }
      const singletonKey = singletonKeyOf(tenant, bucket);
      waiting.set(`${singletonKey}|${delaySeconds}`, {
        data: { orgId: scope.orgId, ownerId: scope.ownerId, buckets: [bucket] },
        options: { startAfterSeconds: delaySeconds, singletonKey, singletonSeconds: delaySeconds },
      });
    }
  }
  return [
    ...[...now.values()].map(({ scope, buckets }) => ({
      data: { orgId: scope.orgId, ownerId: scope.ownerId, buckets: [...buckets].sort() },
      // Due now (classify_mode immediate, or a critical alert through its batch window): taken
      // before the batch windows' jobs, and before the rest of a bucket an LLM classifies in turns.
      options: { priority: DUE_NOW_PRIORITY },
    })),
    ...waiting.values(),
  ];
}
