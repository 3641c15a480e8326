// The built-in classifier, the step named `sre_classify_alert_criticality`: deterministic, from the
// signals an on-call engineer reads first. Pure: the triage job gathers the inputs and stores the
// result.
//
//   1. A test notification: others.
//   2. A symptom of a storm: others ("look at <likely upstream> first").
//   3. The alert's own episodes, by the source's times: flapping (the source says so, or 3+ re-fires
//      in 24 h) -> needs_review; quick auto-resolves (2+ episodes over within 5 minutes) ->
//      false_positive when the severity is Medium or lower, else needs_review; no data -> needs_review.
//   4. Otherwise a score: severity (Critical 3, High 2, Medium 1, Low 0, info -1) + environment
//      (production +1, staging 0, development -2, unknown 0) + storm cause +1;
//      3 or more -> needs_attention, 1..2 -> needs_review, else others.
import type { EnvironmentReading } from "../correlation/impact.ts";
import type { SeverityBucket } from "../sources/types.ts";

export type Attention = "needs_attention" | "needs_review" | "false_positive" | "others";
type EnvironmentLevel = EnvironmentReading["level"];

export interface ClassifyInput {
  alert: {
    id: string;
    title: string;
    severity: SeverityBucket;
    sourceSeverity: string;
    labels: Record<string, string>;
    isTest: boolean;
    refireCount: number;
    alertRole: string;
    likelyUpstream: string | null;
    stormId: string | null;
    impactScore: number;
    impactExplanation: string | null;
  };
  environment: EnvironmentReading;
  /** The alert's episodes, oldest first, by the source's times: created or refired, then resolved. */
  history: { kind: string; at: Date }[];
  /** The other alerts classified in the same bucket (some or all of them). */
  bucket: { id: string; title: string; severity: SeverityBucket }[];
  /** How many other alerts were classified in the bucket; `bucket.length` when absent. */
  bucketSize?: number;
  now: Date;
}

export interface Classification {
  attention: Attention;
  attentionReason: string;
  shortSummary: string;
  initialInvestigation: string;
}

const SEVERITY_POINTS: Record<SeverityBucket, number> = { Critical: 3, High: 2, Medium: 1, Low: 0, info: -1 };
const ENVIRONMENT_POINTS: Record<EnvironmentLevel, number> = { high: 1, medium: 0, low: -2, unknown: 0 };
const ENVIRONMENT_NAMES: Record<EnvironmentLevel, string> = {
  high: "production",
  medium: "staging",
  low: "development",
  unknown: "an unknown environment",
};
const DAY_MS = 24 * 60 * 60_000;
const QUICK_RESOLVE_MS = 5 * 60_000;
const FLAP_REFIRES = 3;
const QUICK_RESOLVES = 2;

interface HistorySignals {
  refiresToday: number;
  quickResolves: number;
}

function readHistory(history: ClassifyInput["history"], now: Date): HistorySignals {
  let refiresToday = 0;
  let quickResolves = 0;
  let episodeStart: Date | null = null;
  for (const event of history) {
    if (event.kind === "created" || event.kind === "refired") {
      episodeStart = event.at;
      if (event.kind === "refired" && now.getTime() - event.at.getTime() <= DAY_MS) refiresToday += 1;
    } else if (event.kind === "resolved" && episodeStart) {
      if (event.at.getTime() - episodeStart.getTime() <= QUICK_RESOLVE_MS) quickResolves += 1;
      episodeStart = null;
    }
  }
  return { refiresToday, quickResolves };
}

function decide(input: ClassifyInput, signals: HistorySignals): { attention: Attention; reason: string } {
  const { alert, environment } = input;
  if (alert.isTest) return { attention: "others", reason: "test notification" };
  if (alert.alertRole === "symptom") {
    const upstream = alert.likelyUpstream ? `"${alert.likelyUpstream}"` : "the storm's cause";
    return { attention: "others", reason: `symptom of a storm: look at ${upstream} first` };
  }
  if (alert.labels.vigil_flapping === "true" || signals.refiresToday >= FLAP_REFIRES) {
    const why =
      alert.labels.vigil_flapping === "true"
        ? "the source reports it flapping"
        : `re-fired ${signals.refiresToday} times in 24 h`;
    return { attention: "needs_review", reason: `flapping: ${why}; the rule may need tuning` };
  }
  if (signals.quickResolves >= QUICK_RESOLVES) {
    const why = `${signals.quickResolves} episodes resolved on their own within 5 minutes`;
    return SEVERITY_POINTS[alert.severity] <= SEVERITY_POINTS.Medium
      ? { attention: "false_positive", reason: `likely noise: ${why}` }
      : { attention: "needs_review", reason: `${why}, but the severity is ${alert.severity}` };
  }
  if (alert.labels.vigil_no_data === "true") {
    return {
      attention: "needs_review",
      reason: "the source reports missing data: check the collector or exporter",
    };
  }
  const isCause = alert.alertRole === "cause";
  const score = SEVERITY_POINTS[alert.severity] + ENVIRONMENT_POINTS[environment.level] + (isCause ? 1 : 0);
  const parts = [`${alert.severity} severity`, `in ${ENVIRONMENT_NAMES[environment.level]}`];
  if (isCause) parts.push("likely cause of a storm");
  const attention: Attention = score >= 3 ? "needs_attention" : score >= 1 ? "needs_review" : "others";
  return { attention, reason: parts.join(", ") };
}

function hypotheses(input: ClassifyInput): string[] {
  const { alert } = input;
  const text = `${alert.title} ${Object.values(alert.labels).join(" ")}`.toLowerCase();
  const found: string[] = [];
  if (/disk|filesystem|volume|inode|space/.test(text)) found.push("storage filling up or a volume failing");
  if (/cpu|load|throttl/.test(text))
    found.push("CPU saturation from a traffic increase or a runaway process");
  if (/memory|oom|heap/.test(text)) found.push("memory pressure: a leak or an undersized limit");
  if (/latency|slow|timeout|p9\d/.test(text))
    found.push("a slow dependency (database, cache, upstream API) or saturation");
  if (/error|5\d\d|exception|fail/.test(text))
    found.push("a bad deploy or a failing dependency raising errors");
  if (/down|unreachable|not ready|crash|restart/.test(text))
    found.push("an instance crashed or lost connectivity");
  if (/cert|tls|ssl|expir/.test(text)) found.push("a certificate nearing expiry");
  if (alert.alertRole === "symptom" && alert.likelyUpstream)
    found.unshift(`a consequence of "${alert.likelyUpstream}"`);
  if (found.length === 0) found.push("the condition the rule describes is real; confirm on its dashboard");
  return found;
}

function relatedSignals(input: ClassifyInput, signals: HistorySignals): string[] {
  const { alert, environment, bucket } = input;
  const together = input.bucketSize ?? bucket.length;
  const related = [environment.reason];
  if (alert.impactExplanation) related.push(`impact ${alert.impactScore}: ${alert.impactExplanation}`);
  if (alert.stormId) {
    related.push(
      alert.alertRole === "cause"
        ? "it leads a storm of co-firing alerts"
        : `part of a storm${alert.likelyUpstream ? `; likely upstream: ${alert.likelyUpstream}` : ""}`,
    );
  }
  if (alert.refireCount > 0)
    related.push(`re-fired ${alert.refireCount} times (${signals.refiresToday} in 24 h)`);
  if (signals.quickResolves > 0)
    related.push(`${signals.quickResolves} past episodes resolved within 5 minutes`);
  if (together > 0) {
    const names = bucket.slice(0, 5).map((other) => `${other.title} (${other.severity})`);
    related.push(`classified together with ${together} alert(s): ${names.join(", ")}`);
  }
  return related;
}

function nextSteps(attention: Attention, input: ClassifyInput): string[] {
  const { alert } = input;
  if (attention === "false_positive") return ["tune or silence the rule: it resolves before anyone can act"];
  const steps: string[] = [];
  if (alert.alertRole === "symptom" && alert.likelyUpstream)
    steps.push(`check "${alert.likelyUpstream}" first`);
  steps.push("open the alert's source link or dashboard and confirm the signal");
  steps.push("check recent deploys and configuration changes in its scope");
  if (attention === "needs_attention") steps.push("page the owning team if it is not already handled");
  return steps;
}

export function classifyAlert(input: ClassifyInput): Classification {
  const signals = readHistory(input.history, input.now);
  const { attention, reason } = decide(input, signals);
  const label = {
    needs_attention: "needs attention",
    needs_review: "needs review",
    false_positive: "likely false positive",
    others: "low priority",
  }[attention];
  const shortSummary = `${input.alert.title}: ${label} (${reason})`.slice(0, 300);
  const section = (heading: string, lines: string[]) =>
    [`${heading}:`, ...lines.map((line) => `- ${line}`)].join("\n");
  const initialInvestigation = [
    section("Hypotheses", hypotheses(input)),
    section("Related signals", relatedSignals(input, signals)),
    section("Next steps", nextSteps(attention, input)),
  ].join("\n\n");
  return { attention, attentionReason: reason, shortSummary, initialInvestigation };
}
