// Step 4: the deterministic conclusion. Each candidate explanation becomes a hypothesis with a
// confidence and a status (rejected ones kept, with why); the strongest decides the verdict:
// alert_is_misconfigured (a test or watchdog alert, an absent series, a threshold always crossed,
// flapping on its threshold), real_problem (the series crossed its threshold, or an upstream cause
// in its storm, weighed in upstream.ts),
// or not_enough_information, naming the integration that would have answered.
import { rank } from "../callbacks.ts";
import { resultSummaryOf } from "../result-summary.ts";
import type {
  InvestigationHypothesis,
  InvestigationPlainSummary,
  InvestigationPriorIncident,
  InvestigationStructuredRCA,
} from "../schemas.ts";
import type { Gathered } from "./gather.ts";
import type { IntegrationFindings, PrometheusFinding } from "./query-integrations.ts";
import { weighUpstream } from "./upstream.ts";

const WATCHDOG =
  /\b(watchdog|deadmansswitch|dead\s*man'?s\s*switch|heartbeat|test\s*alert|always\s*firing)\b/i;
const ALWAYS_CROSSED_SHARE = 0.95;
const ALWAYS_CROSSED_MIN_POINTS = 3;
/** "Nearly all the time" needs the series to cover at least half of the hour before the alert. */
const ALWAYS_CROSSED_MIN_COVERED_SECONDS = 1800;
const FLAPPING_STATE_CHANGES = 4;
/** A comparison that still holds after this long is an incident, however it flapped on its way in. */
const SUSTAINED_SECONDS = 10 * 60;

/**
 * A concrete change to the alert's rule that would stop a misconfigured alert from paging: what a
 * remediation proposes. Only the rule-level causes have one; a watchdog or an absent series does not.
 */
export type RuleFix =
  | { kind: "raise_threshold"; op: string; threshold: number; to: number; why: string }
  | { kind: "hold_for"; duration: string; why: string };

export interface Conclusion {
  hypotheses: InvestigationHypothesis[];
  rca: InvestigationStructuredRCA;
  resultSummary: string;
  /** The fix of the cause that decided an alert_is_misconfigured verdict, when there is one. */
  fix: RuleFix | null;
}

type Candidate = InvestigationHypothesis & {
  category: InvestigationStructuredRCA["category"];
  verdict: NonNullable<InvestigationPlainSummary["verdict"]>;
  todo: string;
  fix?: RuleFix;
};

/** A round number beyond every value the series took: 2 significant digits, 10% of headroom. */
export function thresholdBeyond(extreme: number, op: string): number {
  const above = op === ">" || op === ">=";
  const headroom = extreme === 0 ? 1 : Math.abs(extreme) * 0.1;
  const target = above ? extreme + headroom : extreme - headroom;
  if (target === 0) return 0;
  const step = 10 ** (Math.floor(Math.log10(Math.abs(target))) - 1);
  // The epsilon and toPrecision keep floating-point noise out of the number a person will read.
  const steps = above ? Math.ceil(target / step - 1e-9) : Math.floor(target / step + 1e-9);
  return Number((steps * step).toPrecision(12));
}

const HOLD_FOR = "10m";

/** What to add when the series behind the alert could not be read at all. */
function missingSource(
  findings: IntegrationFindings,
  expression: Gathered["expression"],
  name: string,
): string {
  const missing =
    findings.prometheus.length === 0
      ? "a prometheus integration (type prometheus, the server's base URL)"
      : !expression
        ? "an alert source that sends the rule's expression (Prometheus generatorURL)"
        : "a prometheus integration that answers (see integrations_consulted)";
  return `Add ${missing} so the series behind "${name}" can be read, then investigate again.`;
}

/** What to do when Prometheus answered but its series settled nothing: too new to judge, or plain. */
function inconclusiveSeries(
  prom: PrometheusFinding,
  name: string,
  where: string,
  expression: Gathered["expression"],
): string {
  const now =
    prom.last !== null && expression
      ? ` ${expression.lhs} is ${prom.last} against a threshold of ${expression.threshold}.`
      : "";
  if (prom.series_found && prom.alert_series === null) {
    return `Look at ${where} now: ${prom.integration} answered for "${name}", but ${prom.note}: compare them there by hand.`;
  }
  const covered = prom.covered_seconds ?? 0;
  if (prom.series_found && covered < ALWAYS_CROSSED_MIN_COVERED_SECONDS) {
    return `Look at ${where} now:${now || ` the series behind "${name}" is there.`} Its series began ${Math.round(covered / 60)} min before the alert, too little history to judge the rule by: investigate again once it has half an hour.`;
  }
  return `Look at ${where} now:${now || ` ${prom.integration} answered for "${name}".`} The series did not show why it fired: check what changed there when it did.`;
}

export function conclude(
  gathered: Gathered,
  findings: IntegrationFindings,
  prior: InvestigationPriorIncident[],
): Conclusion {
  const { alert, history, expression } = gathered;
  const name = alert.alertname ?? alert.title;
  const where = alert.scope.service ?? alert.scope.host ?? alert.scope.cluster ?? "the affected system";
  const prom = findings.prometheus.find((finding) => finding.series_found !== null) ?? null;
  const candidates: Candidate[] = [];
  const steps: string[] = [`Read the alert "${alert.title}" from ${alert.source_type} (${alert.severity}).`];

  const isWatchdog = alert.is_test || WATCHDOG.test(`${name} ${alert.title}`);
  candidates.push({
    statement: `"${name}" is a test or watchdog alert, not a problem`,
    confidence: isWatchdog ? 0.95 : 0.02,
    status: isWatchdog ? "confirmed" : "rejected",
    rationale: isWatchdog
      ? alert.is_test
        ? "the source marked it as a test"
        : "its name says it is a watchdog or test alert, meant to fire always"
      : "neither marked as a test nor named like a watchdog",
    category: "alert_rule",
    verdict: "alert_is_misconfigured",
    todo: `Route "${name}" to a heartbeat receiver instead of paging, or silence it in this receiver.`,
  });

  if (prom) {
    const own = prom.series > 1 && prom.alert_series ? `, the alert's series ${prom.alert_series}` : "";
    steps.push(
      `Queried ${prom.integration} for ${expression?.lhs ?? expression?.expr ?? "the series"}${own} around ${alert.triggered_at}${prom.note ? ` (${prom.note})` : ""}.`,
    );
    const absent = prom.series_found === false;
    candidates.push({
      statement: `The series of "${name}" is absent: the rule watches something that is not scraped`,
      confidence: absent ? 0.9 : 0.03,
      status: absent ? "confirmed" : "rejected",
      rationale: absent
        ? `${prom.integration} holds no data for ${expression?.lhs ?? expression?.expr} in the hour before the trigger`
        : prom.alert_series === null
          ? `${prom.integration} returned ${prom.series} series, but ${prom.note}`
          : `${prom.integration} returned ${prom.series} series; the alert's has ${prom.points} points`,
      category: "alert_rule",
      verdict: "alert_is_misconfigured",
      todo: `Check the metric name and labels in the rule of "${name}", and that its target is scraped.`,
    });
    if (prom.crossed_share !== null) {
      const covered = prom.covered_seconds ?? 0;
      const always =
        prom.crossed_share >= ALWAYS_CROSSED_SHARE &&
        prom.points >= ALWAYS_CROSSED_MIN_POINTS &&
        covered >= ALWAYS_CROSSED_MIN_COVERED_SECONDS;
      const span = `the ${Math.round(covered / 60)} min of data before the alert`;
      const op = expression?.op ?? "";
      const extreme = op === ">" || op === ">=" ? prom.max : op === "<" || op === "<=" ? prom.min : null;
      const threshold = expression?.threshold ?? null;
      candidates.push({
        statement: `The threshold of "${name}" (${expression?.op} ${expression?.threshold}) is crossed nearly all the time`,
        confidence: always ? 0.8 : 0.05,
        status: always ? "confirmed" : "rejected",
        rationale:
          covered < ALWAYS_CROSSED_MIN_COVERED_SECONDS
            ? `the series began ${Math.round(covered / 60)} min before the alert: too new to call its threshold crossed all the time (the comparison held ${Math.round(prom.crossed_share * 100)}% of what there is)`
            : `the comparison held ${Math.round(prom.crossed_share * 100)}% of the window (${span})`,
        category: "alert_rule",
        verdict: "alert_is_misconfigured",
        todo:
          extreme === null
            ? `Review the condition of "${name}" (${op} ${threshold}): it holds whenever there is data.`
            : `Move the threshold of "${name}" beyond its normal range (${prom.min} to ${prom.max} in the window), or fix what keeps it there.`,
        ...(extreme !== null &&
          threshold !== null && {
            fix: {
              kind: "raise_threshold" as const,
              op,
              threshold,
              to: thresholdBeyond(extreme, op),
              why: `the comparison ${op} ${threshold} held ${Math.round(prom.crossed_share * 100)}% of the window (${span}), while the series ranged from ${prom.min} to ${prom.max}: a threshold beyond that range pages only when the series leaves its normal range`,
            },
          }),
      });
    }
    const sustained = (prom.held_seconds ?? 0) >= SUSTAINED_SECONDS;
    if (prom.state_changes !== null) {
      const flapping = prom.state_changes >= FLAPPING_STATE_CHANGES && !sustained;
      candidates.push({
        statement: `"${name}" flaps on its threshold`,
        confidence: flapping ? 0.75 : 0.05,
        status: flapping ? "confirmed" : "rejected",
        rationale: `the comparison changed state ${prom.state_changes} times in the window${sustained ? `, then held from ${prom.held_since}` : ""}`,
        category: "alert_rule",
        verdict: "alert_is_misconfigured",
        todo: `Add a for: duration or hysteresis to the rule of "${name}" so it stops flapping around ${expression?.threshold}.`,
        fix: {
          kind: "hold_for",
          duration: HOLD_FOR,
          why: `the comparison changed state ${prom.state_changes} times in the hour before the alert without holding for long: waiting ${HOLD_FOR} before firing pages only for a condition that lasts`,
        },
      });
    }
    if (prom.series_found && prom.crossed_share !== null && prom.crossed_share > 0) {
      const held =
        prom.crossed_share < ALWAYS_CROSSED_SHARE &&
        ((prom.state_changes ?? 0) < FLAPPING_STATE_CHANGES || sustained);
      candidates.push({
        statement: `${where}: ${expression?.lhs} crossed ${expression?.op} ${expression?.threshold}${prom.first_crossed_at ? ` from ${prom.first_crossed_at}` : ""} and stayed there`,
        confidence: held ? 0.8 : 0.3,
        status: held ? "confirmed" : "open",
        rationale: `the series went from ${prom.min} to ${prom.max} (last ${prom.last}) while the alert fired`,
        category: "service_fault",
        verdict: "real_problem",
        todo: `Look at ${where} now: ${expression?.lhs} is ${prom.last} against a threshold of ${expression?.threshold}.`,
      });
    }
  } else if (!findings.prometheus.length) {
    steps.push("No prometheus integration is configured, so the series could not be read.");
  } else {
    steps.push(
      `Prometheus could not answer: ${findings.prometheus.map((finding) => finding.outcome).join("; ")}.`,
    );
  }

  if (history.flapping) {
    candidates.push({
      statement: `"${name}" re-fires and auto-resolves repeatedly`,
      confidence: 0.7,
      status: "confirmed",
      rationale: `${history.refires} re-fires, ${history.quick_auto_resolves} resolves within 5 minutes of firing`,
      category: "alert_rule",
      verdict: "alert_is_misconfigured",
      todo: `Add a for: duration or hysteresis to "${name}".`,
      fix: {
        kind: "hold_for",
        duration: HOLD_FOR,
        why: `it re-fired ${history.refires} times and resolved within 5 minutes ${history.quick_auto_resolves} times: waiting ${HOLD_FOR} before firing pages only for a condition that lasts`,
      },
    });
    steps.push(
      `Its history shows ${history.refires} re-fires and ${history.quick_auto_resolves} quick auto-resolves.`,
    );
  }

  const upstream = weighUpstream(gathered, prom);
  if (upstream) {
    candidates.push({
      statement: `A symptom of an upstream problem: ${upstream.title}`,
      confidence: upstream.confidence,
      status: upstream.status,
      rationale: upstream.rationale,
      category: "upstream_dependency",
      verdict: "real_problem",
      todo: `Work on the upstream cause first: ${upstream.title}.`,
    });
    steps.push(
      `It fires in a storm of ${gathered.storm?.size ?? 1} alerts whose likely upstream is "${upstream.title}" (${upstream.status}).`,
    );
  }
  if (gathered.neighbours.length > 0) {
    steps.push(
      `${gathered.neighbours.length} other alerts fired within two hours on ${gathered.neighbours[0]?.shared}.`,
    );
  }
  for (const finding of findings.alertmanager) {
    if (finding.silenced_by.length)
      steps.push(`${finding.integration} has it silenced (${finding.silenced_by.join(", ")}).`);
    if (finding.inhibited_by.length)
      steps.push(`${finding.integration} inhibits it (${finding.inhibited_by.join(", ")}).`);
  }
  if (prior.length > 0) {
    steps.push(
      `Found ${prior.length} earlier incidents like it; the closest: "${prior[0]?.title}" (${prior[0]?.resolution}).`,
    );
  }

  const ranked = rank(candidates);
  const best =
    ranked.find((candidate) => candidate.status !== "rejected" && (candidate.confidence ?? 0) >= 0.5) ?? null;
  const hypotheses: InvestigationHypothesis[] = ranked.map(
    ({ statement, confidence, status, rationale }) => ({
      statement,
      confidence,
      status,
      rationale,
    }),
  );

  let plain: InvestigationPlainSummary;
  if (best) {
    plain = {
      verdict: best.verdict,
      what_broke:
        best.verdict === "real_problem"
          ? `${where}: the alert "${alert.title}" reports a real problem: ${best.statement}.`
          : `The alert "${alert.title}" on ${where} is misconfigured: ${best.statement}.`,
      what_to_do: best.todo,
      how_we_got_here: steps,
    };
  } else {
    plain = {
      verdict: "not_enough_information",
      what_broke: `The alert "${alert.title}" on ${where} fired; Vigil could not confirm why.`,
      what_to_do: prom
        ? inconclusiveSeries(prom, name, where, expression)
        : missingSource(findings, expression, name),
      how_we_got_here: steps,
    };
  }
  const resultSummary = resultSummaryOf(
    plain.verdict,
    best ? best.statement : plain.what_broke,
    plain.what_to_do,
  );
  const rca: InvestigationStructuredRCA = {
    summary: best ? `${best.statement} (${best.rationale})` : (plain.what_broke ?? ""),
    root_cause: best?.statement ?? null,
    category: best?.category ?? "unknown",
    affected: {
      service: alert.scope.service ?? null,
      host: alert.scope.host ?? null,
      cluster: alert.scope.cluster ?? null,
    },
    trigger: expression ? expression.expr : null,
    contributing_factors: [
      ...(history.refires > 0 ? [`re-fired ${history.refires} times`] : []),
      ...(gathered.storm ? [`in a storm of ${gathered.storm.size} alerts`] : []),
      ...findings.alertmanager.flatMap((finding) => [
        ...(finding.silenced_by.length ? [`silenced in ${finding.integration}`] : []),
        ...(finding.inhibited_by.length ? [`inhibited in ${finding.integration}`] : []),
      ]),
      ...(gathered.neighbours.length
        ? [`${gathered.neighbours.length} alerts nearby on ${gathered.neighbours[0]?.shared}`]
        : []),
    ],
    remediation: [plain.what_to_do ?? ""].filter(Boolean),
    confidence: best?.confidence ?? 0.2,
    plain_summary: plain,
  };
  const fix = best?.verdict === "alert_is_misconfigured" ? (best.fix ?? null) : null;
  return { hypotheses, rca, resultSummary, fix };
}

/** The report stored as the run's session artifact. */
export function reportOf(title: string, conclusion: Conclusion, prior: InvestigationPriorIncident[]): string {
  const plain = conclusion.rca.plain_summary;
  return [
    `# Investigation: ${title}`,
    "",
    `Verdict: ${plain?.verdict ?? "none"}`,
    "",
    `## What broke`,
    "",
    plain?.what_broke ?? "",
    "",
    "## What to do",
    "",
    plain?.what_to_do ?? "",
    "",
    "## How we got here",
    "",
    ...(plain?.how_we_got_here ?? []).map((step, index) => `${index + 1}. ${step}`),
    "",
    "## Hypotheses",
    "",
    ...conclusion.hypotheses.map(
      (h) => `- [${h.status}] ${h.statement} (confidence ${h.confidence ?? "?"}): ${h.rationale ?? ""}`,
    ),
    "",
    "## Prior incidents",
    "",
    ...(prior.length
      ? prior.map((p) => `- ${p.title} (${p.match}): ${p.why_matched}; ${p.resolution}`)
      : ["none"]),
    "",
  ].join("\n");
}
