// The built-in classifier over a stored alert, the step named `sre_classify_alert_criticality`:
// the deterministic rules (classify.ts) and, with an LLM configured, its refinement of the label.
// The classification job runs it on the alerts it claims; the SRE app's default triage workflow
// runs it as an engine step for one alert (classifyStoredAlert).
import { sql } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Ctx } from "../../core/context.ts";
import { environmentCriticality, readEnvironment } from "../correlation/impact.ts";
import { ALERT_SELECT_LIST, rowFromRecord } from "../ingest/alert-rows.ts";
import { type AlertRow, sourceEpisodesOf } from "../ingest/lifecycle.ts";
import { type Classification, classifyAlert } from "./classify.ts";
import { refineClassification } from "./refine-classification.ts";

export const CLASSIFY_STEP = "sre_classify_alert_criticality";

type BucketPeer = { id: string; title: string; severity: AlertRow["severity"] };

export interface BuiltInResult extends Classification {
  /** The LLM model that corrected the deterministic label, if one did. */
  refinedBy: string | null;
}

/**
 * Classifies one alert with the alerts of its bucket. `refine: false` skips the LLM (the
 * deterministic result a triage workflow receives and falls back to).
 */
export async function runBuiltInClassifier(
  ctx: Ctx,
  input: {
    row: AlertRow;
    /** Some or all of the other alerts classified with it; `bucketSize` counts them all. */
    bucket: BucketPeer[];
    bucketSize?: number;
    now: Date;
    refine: boolean;
  },
): Promise<BuiltInResult> {
  const { row, bucket } = input;
  const environment = readEnvironment(
    row.labels,
    row.sourceType,
    environmentCriticality(ctx.config.environmentCriticality),
  );
  const deterministic = classifyAlert({
    alert: row,
    environment,
    history: sourceEpisodesOf(row),
    bucket,
    bucketSize: input.bucketSize,
    now: input.now,
  });
  // With an LLM configured it may correct the label; any failure leaves the deterministic result.
  const refined =
    input.refine && ctx.config.llm
      ? await refineClassification(
          ctx.config.llm,
          {
            alert: {
              title: row.title,
              description: row.description.slice(0, 2000),
              severity: row.severity,
              source_type: row.sourceType,
              labels: row.labels,
              environment: environment.reason,
              alert_role: row.alertRole,
              likely_upstream: row.likelyUpstream,
              refire_count: row.refireCount,
              classified_with: bucket.map((other) => other.title),
            },
            classification: deterministic,
          },
          { log: ctx.log },
        )
      : null;
  return refined
    ? { ...deterministic, ...refined, refinedBy: refined.usage.model }
    : { ...deterministic, refinedBy: null };
}

/** The built-in classification of one stored alert of the tenant, alone in its bucket; null when not found. */
export async function classifyStoredAlert(
  ctx: Ctx,
  tenant: Tenant,
  alertId: string,
): Promise<BuiltInResult | null> {
  const { rows } = await ctx.db.execute(sql`
    select ${sql.raw(ALERT_SELECT_LIST)} from alerts
    where ${inTenant({ alias: "alerts" }, tenant)} and id::text = ${alertId}`);
  const [record] = rows;
  if (!record) return null;
  const row = rowFromRecord(record);
  return runBuiltInClassifier(ctx, {
    row,
    bucket: [],
    now: ctx.now(),
    refine: true,
  });
}
