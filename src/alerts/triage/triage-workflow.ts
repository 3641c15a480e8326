// Triage by an assigned workflow. The SRE app may assign an approved workflow to the purpose
// `alert_triage`; it plugs in a port (setTriageWorkflowPort) that names the tenant's workflow and
// starts it on the automation engine, one run per claimed alert. The alert stays `running` until
// the run ends; the app then hands the run's end back (applyTriageRun): a valid output classifies
// the alert, and an invalid one or a failed run falls back to the built-in classifier's result,
// computed when the alert was claimed, with the reason in the alert's history. Without a port, or
// when the tenant's triage is the app's default workflow, the job classifies directly.
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { sql } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Ctx } from "../../core/context.ts";
import type { Executor } from "../../core/db/database.ts";
import { Nullable } from "../../core/http/schemas.ts";
import { ATTENTIONS } from "../schemas.ts";
import { CLASSIFY_STEP } from "./builtin-classifier.ts";
import { type Classified, storeClassifications } from "./store-classifications.ts";

export const TRIAGE_PURPOSE = "alert_triage";

/** What a triage workflow's last stage outputs (an agent may answer it as JSON text). */
export const TriageOutput = Type.Object({
  attention: Type.Union(ATTENTIONS.map((value) => Type.Literal(value))),
  reason: Type.String({ minLength: 1, maxLength: 5000 }),
  short_summary: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  initial_investigation: Type.Optional(Nullable(Type.String({ maxLength: 20000 }))),
});
export type TriageOutput = Static<typeof TriageOutput>;

/** The input of a triage run. */
export interface TriageRunInput {
  alert_id: string;
  alert: {
    id: string;
    title: string;
    description: string;
    source_type: string;
    source_severity: string;
    signal_severity: string;
    labels: Record<string, string>;
    alert_role: string;
    likely_upstream: string | null;
    storm_id: string | null;
    refire_count: number;
    impact_score: number;
  };
  /** The other alerts classified with it: the first 20 of them (by id). */
  bucket: { id: string; title: string; severity: string }[];
  /** How many other alerts were classified with it. */
  bucket_size: number;
  /** The built-in classifier's result (without LLM refinement): the workflow may keep or override it. */
  classification: TriageOutput;
}

export interface TriageWorkflowPort {
  /** The workflow the tenant's triage runs; null for the built-in classifier (the app's default). */
  choose(db: Executor, tenant: Tenant): Promise<string | null>;
  /** Starts a run of `workflow` for one alert claimed in `bucket`; answers its trace id. */
  start(
    ctx: Ctx,
    tenant: Tenant,
    run: { workflow: string; bucket: string; input: TriageRunInput },
  ): Promise<string>;
}

let port: TriageWorkflowPort | null = null;

/** The port for the apps domain; the returned function removes it again. */
export function setTriageWorkflowPort(next: TriageWorkflowPort): () => void {
  port = next;
  return () => {
    if (port === next) port = null;
  };
}

export function triageWorkflowPort(): TriageWorkflowPort | null {
  return port;
}

type Read = { ok: true; value: TriageOutput } | { ok: false; why: string };

/** Checks an output against TriageOutput; answers it, or why it is not one (naming the field). */
export function readTriageOutput(output: unknown): Read {
  let value = output;
  // An agent's answer is text: JSON in it counts.
  const text = (output as { text?: unknown } | null)?.text;
  if (typeof text === "string") {
    try {
      value = JSON.parse(text);
    } catch {
      return { ok: false, why: "the output's text is not JSON" };
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, why: "the output is not an object" };
  }
  const error = Value.Errors(TriageOutput, value).First();
  if (!error) return { ok: true, value: value as TriageOutput };
  const field = error.path.replace(/^\//, "").replaceAll("/", ".") || "(output)";
  return { ok: false, why: `${field}: ${error.message}` };
}

export const classifiedOf = (
  id: string,
  bucket: string,
  output: TriageOutput,
  detail: Record<string, unknown>,
): Classified => ({
  id,
  bucket,
  attention: output.attention,
  reason: output.reason,
  summary: output.short_summary ?? null,
  investigation: output.initial_investigation ?? null,
  detail: { ...detail, attention: output.attention, reason: output.reason },
});

/** The built-in result stored in place of the workflow's, with the reason. */
export const fallbackOf = (
  run: { alertId: string; bucket: string; workflow: string; traceId: string | null },
  builtIn: TriageOutput,
  why: string,
): Classified =>
  classifiedOf(run.alertId, run.bucket, builtIn, {
    step: CLASSIFY_STEP,
    workflow: run.workflow,
    trace_id: run.traceId,
    fallback: why,
  });

export interface TriageRunEnd {
  tenant: Tenant;
  alertId: string;
  bucket: string;
  workflow: string;
  traceId: string;
  /** The run's input (its `classification` is the fallback). */
  input: unknown;
  /** The last stage's output; null when the run failed. */
  output: unknown;
  /** Why the run failed or was cancelled; null when it completed. */
  error: string | null;
  now: Date;
}

/** Classifies the run's alert from its output, or falls back; in the transaction that ends the run. */
export async function applyTriageRun(db: Executor, end: TriageRunEnd): Promise<void> {
  const { rows } = await db.execute(sql`
    select 1 from alerts where ${inTenant({ alias: "alerts" }, end.tenant)} and id::text = ${end.alertId}`);
  if (rows.length === 0) return;
  const run = { alertId: end.alertId, bucket: end.bucket, workflow: end.workflow, traceId: end.traceId };
  const read: Read = end.error === null ? readTriageOutput(end.output) : { ok: false, why: "" };
  let classified: Classified;
  if (read.ok) {
    classified = classifiedOf(end.alertId, end.bucket, read.value, {
      step: "workflow",
      workflow: end.workflow,
      trace_id: end.traceId,
    });
  } else {
    const builtIn = readTriageOutput((end.input as { classification?: unknown } | null)?.classification);
    // Only a run started by hand with a made-up input lacks it: nothing to store.
    if (!builtIn.ok) return;
    const why = end.error === null ? `invalid output: ${read.why}` : `the run failed: ${end.error}`;
    classified = fallbackOf(run, builtIn.value, why);
  }
  await storeClassifications(db, [classified], end.now);
}
