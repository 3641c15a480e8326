// Step 2: ask the tenant's integrations. A `prometheus` integration: the alert's own series around its
// trigger time (a range query of the compared side, narrowed to the series whose labels the alert
// carries), whether it exists at all, how often the rule's comparison changed state and how much of
// the time it held. An `alertmanager` integration: the silences and inhibitions that cover the alert.
import type { Config } from "../../config.ts";
import {
  type IntegrationConnection,
  integrationApiUrl,
  readIntegrationApi,
} from "../../integrations/index.ts";
import type { EvidenceDraft } from "../evidence.ts";
import type { AlertExpression, Gathered } from "./gather.ts";

const LOOKBACK_SECONDS = 3600;
const AFTER_SECONDS = 1800;
const MAX_POINTS = 1000;

export interface PrometheusFinding {
  integration: string;
  outcome: string;
  /** null: not asked (no expression). */
  series_found: boolean | null;
  /** How many series the rule's expression returned (every target of the rule, not only the alert's). */
  series: number;
  /**
   * The label matchers that single out the alert's own series among them (`{instance="db-1:9100"}`);
   * null when no series, or several that disagree, carry the alert's labels: the facts below are
   * then null, rather than another target's.
   */
  alert_series: string | null;
  /** How the alert's series was found, when not plainly as the one series with its labels. */
  note: string | null;
  points: number;
  min: number | null;
  max: number | null;
  last: number | null;
  /** Share of the window the comparison held (0..1); null without a threshold. */
  crossed_share: number | null;
  /** How many times the comparison changed state in the window. */
  state_changes: number | null;
  first_crossed_at: string | null;
  /** When the comparison last started to hold, if it still holds at the window's last point. */
  held_since: string | null;
  /** How long it has held then, up to the window's last point (seconds). */
  held_seconds: number | null;
  /** How much of the time before the trigger the series covers (its first point to the trigger, seconds). */
  covered_seconds: number | null;
}

export interface AlertmanagerFinding {
  integration: string;
  outcome: string;
  silenced_by: string[];
  inhibited_by: string[];
}

export interface IntegrationFindings {
  prometheus: PrometheusFinding[];
  alertmanager: AlertmanagerFinding[];
  consulted: { name: string; type: string; outcome: string }[];
}

type Labels = Record<string, string>;
type PromVector = { metric: Labels; value?: [number, string]; values?: [number, string][] }[];
type SeriesFacts = Omit<
  PrometheusFinding,
  "integration" | "outcome" | "series_found" | "series" | "alert_series" | "note"
>;

const NO_FACTS: SeriesFacts = {
  points: 0,
  min: null,
  max: null,
  last: null,
  crossed_share: null,
  state_changes: null,
  first_crossed_at: null,
  held_since: null,
  held_seconds: null,
  covered_seconds: null,
};

function resultOf(json: unknown): PromVector | null {
  const data = (json as { status?: string; data?: { result?: unknown } })?.data;
  return Array.isArray(data?.result) ? (data.result as PromVector) : null;
}

function holds(value: number, op: string, threshold: number): boolean {
  switch (op) {
    case ">":
      return value > threshold;
    case ">=":
      return value >= threshold;
    case "<":
      return value < threshold;
    case "<=":
      return value <= threshold;
    case "==":
      return value === threshold;
    default:
      return value !== threshold;
  }
}

/** Whether a series' labels agree with the alert's on every label both carry, the metric name and `skip` aside. */
function agrees(series: Labels, alert: Labels, skip: string[] = []): boolean {
  return Object.entries(series).every(
    ([name, value]) =>
      name === "__name__" || skip.includes(name) || !Object.hasOwn(alert, name) || alert[name] === value,
  );
}

/**
 * The alert's own series among those the expression returned. An Alertmanager alert carries its
 * series' labels plus the rule's (and alertname), so its series is the one whose labels all agree
 * with the alert's. A rule label may override a series label of the same name: a label whose alert
 * value no series carries is then set aside, and only a single series matching without it counts.
 */
function alertSeriesOf(series: PromVector, alert: Labels): { matched: PromVector; setAside: string[] } {
  const matched = series.filter((item) => agrees(item.metric, alert));
  if (matched.length > 0) return { matched, setAside: [] };
  const setAside = Object.keys(alert).filter((name) => {
    const carriers = series.filter((item) => name !== "__name__" && Object.hasOwn(item.metric, name));
    return carriers.length > 0 && carriers.every((item) => item.metric[name] !== alert[name]);
  });
  const again = setAside.length ? series.filter((item) => agrees(item.metric, alert, setAside)) : [];
  return { matched: again.length === 1 ? again : [], setAside };
}

/** The labels every matched series carries with the alert's value, as PromQL matchers. */
function matchersOf(matched: PromVector, alert: Labels): string[] {
  const first = matched[0]?.metric ?? {};
  return Object.keys(first)
    .filter(
      (name) =>
        name !== "__name__" &&
        Object.hasOwn(alert, name) &&
        alert[name] === first[name] &&
        matched.every((item) => item.metric[name] === first[name]),
    )
    .sort()
    .map((name) => `${name}=${JSON.stringify(first[name])}`);
}

const VECTOR_SELECTOR = /^([a-zA-Z_:][\w:]*)?\s*(?:\{([\s\S]*)\})?$/;

/** A plain vector selector with `matchers` added (`up{job="node",instance="db-1"}`); null for any other expression. */
function narrowedSelector(query: string, matchers: string[]): string | null {
  const match = VECTOR_SELECTOR.exec(query.trim());
  if (!match || (!match[1] && match[2] === undefined) || matchers.length === 0) return null;
  const inner = (match[2] ?? "").trim().replace(/,$/, "");
  const added = matchers.filter((matcher) => !inner.includes(matcher));
  return `${match[1] ?? ""}{${[inner, ...added].filter(Boolean).join(",")}}`;
}

/** Two label sets are one series when they agree on everything but the metric name. */
function sameSeries(a: Labels, b: Labels): boolean {
  const names = (labels: Labels) => Object.keys(labels).filter((name) => name !== "__name__");
  return names(a).length === names(b).length && names(a).every((name) => a[name] === b[name]);
}

/** One series' facts: its range, its last value, and when and how long the comparison held. */
function factsOf(
  item: PromVector[number],
  expression: AlertExpression,
  triggered: number,
  perSeries: { changes: PromVector | null; share: PromVector | null },
): SeriesFacts {
  const values = (item.values ?? []).map(([at, value]) => [at, Number(value)] as const);
  if (values.length === 0) return NO_FACTS;
  const numbers = values.map(([, value]) => value).filter(Number.isFinite);
  const facts: SeriesFacts = {
    ...NO_FACTS,
    points: values.length,
    // A series born minutes before the alert says nothing about "nearly all the time".
    covered_seconds: Math.max(0, Math.floor(triggered - (values[0]?.[0] ?? triggered))),
    min: numbers.length ? Math.min(...numbers) : null,
    max: numbers.length ? Math.max(...numbers) : null,
    last: values.at(-1)?.[1] ?? null,
  };
  const { op, threshold } = expression;
  if (!op || threshold === null) return facts;
  const crossed = values.filter(([, value]) => holds(value, op, threshold));
  let since: number | null = null;
  for (const [at, value] of values) since = holds(value, op, threshold) ? (since ?? at) : null;
  const lastAt = values.at(-1)?.[0];
  const of = (result: PromVector | null) => {
    const value = result?.find((other) => sameSeries(other.metric, item.metric))?.value?.[1];
    return value === undefined ? null : Number(value);
  };
  return {
    ...facts,
    first_crossed_at: crossed[0] ? new Date(crossed[0][0] * 1000).toISOString() : null,
    held_since: since === null ? null : new Date(since * 1000).toISOString(),
    held_seconds: since === null || lastAt === undefined ? null : lastAt - since,
    state_changes: of(perSeries.changes),
    crossed_share: of(perSeries.share) ?? crossed.length / values.length,
  };
}

async function askPrometheus(
  connection: IntegrationConnection,
  config: Config,
  gathered: Gathered,
  now: Date,
  signal?: AbortSignal,
): Promise<{ finding: PrometheusFinding; evidence: EvidenceDraft[] }> {
  const finding: PrometheusFinding = {
    integration: connection.name,
    outcome: "answered",
    series_found: null,
    series: 0,
    alert_series: null,
    note: null,
    ...NO_FACTS,
  };
  const expression = gathered.expression;
  if (!expression)
    return { finding: { ...finding, outcome: "not asked: the alert names no expression" }, evidence: [] };
  const query = expression.lhs ?? expression.expr;
  const triggered = new Date(gathered.alert.triggered_at).getTime() / 1000;
  const start = Math.floor(triggered - LOOKBACK_SECONDS);
  const end = Math.max(start + 1, Math.floor(Math.min(now.getTime() / 1000, triggered + AFTER_SECONDS)));
  const step = Math.max(1, Math.ceil((end - start) / MAX_POINTS));
  const range = await readIntegrationApi(connection, config, {
    path: "api/v1/query_range",
    query: { query, start: String(start), end: String(end), step: String(step) },
    signal,
  });
  if (!range.ok) return { finding: { ...finding, outcome: range.error }, evidence: [] };
  const series = resultOf(range.json);
  if (!series) return { finding: { ...finding, outcome: "the answer held no result" }, evidence: [] };
  finding.series_found = series.length > 0;
  finding.series = series.length;
  const labels = gathered.alert.labels;
  const { matched, setAside } = alertSeriesOf(series, labels);
  const matchers = matchersOf(matched, labels);
  const { op, threshold } = expression;
  // State changes and share at the server's evaluation resolution (a subquery), so short crossings
  // between two points of the range query still count; one value per series, the alert's picked out.
  const perSeries: { changes: PromVector | null; share: PromVector | null } = { changes: null, share: null };
  if (op && threshold !== null && matched.length > 0) {
    const bool = `(${query}) ${op} bool ${threshold}`;
    const window = `${end - start}s`;
    for (const [key, fn] of [
      ["changes", "changes"],
      ["share", "avg_over_time"],
    ] as const) {
      const answer = await readIntegrationApi(connection, config, {
        path: "api/v1/query",
        query: { query: `${fn}((${bool})[${window}:])`, time: String(end) },
        signal,
      });
      perSeries[key] = answer.ok ? resultOf(answer.json) : null;
    }
  }
  const facts = matched.map((item) => factsOf(item, expression, triggered, perSeries));
  const agree = facts.every((item) => item.last === facts[0]?.last);
  // Several series with the alert's labels that agree now (one stream seen twice: scraped by two
  // jobs, relabelled, backfilled): the one reaching furthest back tells the most about the rule.
  const longest = facts.reduce<SeriesFacts | undefined>(
    (best, item) => (best && (best.covered_seconds ?? 0) >= (item.covered_seconds ?? 0) ? best : item),
    undefined,
  );
  const selector = `{${matchers.join(",")}}`;
  if (series.length === 0) {
    // Absent: nothing to single out.
  } else if (!longest) {
    finding.note = `none of the ${series.length} series of ${query} carries the alert's labels, so its own series could not be singled out`;
  } else if (!agree) {
    finding.note = `${matched.length} series of ${query} carry the alert's labels ${selector} and disagree (latest values ${facts.map((item) => item.last).join(", ")}), so its own series could not be singled out`;
  } else {
    Object.assign(finding, longest, { alert_series: selector });
    if (matched.length > 1)
      finding.note = `${matched.length} series of ${query} carry the alert's labels ${selector} and agree (latest value ${longest.last}); the facts are those of the one reaching furthest back`;
    else if (setAside.length)
      finding.note = `compared without ${setAside.join(", ")}: no series carries the alert's value (a rule label overriding the series')`;
  }
  // The link shows the alert's series alone where the expression is a plain selector; otherwise
  // its title says which series is the alert's (or that none could be told apart).
  const narrowed = finding.alert_series === null ? null : narrowedSelector(query, matchers);
  const shown = narrowed ?? query;
  let which = "";
  if (series.length > 1 && finding.alert_series === null)
    which = ": every series, the alert's could not be singled out";
  else if (series.length > 1 && !narrowed) which = `, the alert's series ${finding.alert_series}`;
  const graph = integrationApiUrl(connection, "graph", {
    "g0.expr": shown,
    "g0.tab": "0",
    "g0.range_input": `${Math.ceil((end - start) / 60)}m`,
    "g0.end_input": new Date(end * 1000).toISOString(),
  });
  const evidence: EvidenceDraft[] = graph
    ? [
        {
          kind: "metric",
          title: `${shown} around the trigger (${connection.name})${which}`,
          url: graph.href,
          source: "tool_trace",
          tool_name: "prometheus_query_range",
        },
      ]
    : [];
  return { finding, evidence };
}

type Matcher = { name: string; value: string; isRegex?: boolean; isEqual?: boolean };

function matches(matcher: Matcher, labels: Record<string, string>): boolean {
  const value = labels[matcher.name] ?? "";
  let hit: boolean;
  if (matcher.isRegex) {
    try {
      hit = new RegExp(`^(?:${matcher.value})$`).test(value);
    } catch {
      hit = false;
    }
  } else hit = value === matcher.value;
  return matcher.isEqual === false ? !hit : hit;
}

async function askAlertmanager(
  connection: IntegrationConnection,
  config: Config,
  gathered: Gathered,
  signal?: AbortSignal,
): Promise<AlertmanagerFinding> {
  const finding: AlertmanagerFinding = {
    integration: connection.name,
    outcome: "answered",
    silenced_by: [],
    inhibited_by: [],
  };
  const labels = gathered.alert.labels;
  const silences = await readIntegrationApi(connection, config, { path: "api/v2/silences", signal });
  if (!silences.ok) return { ...finding, outcome: silences.error };
  for (const silence of Array.isArray(silences.json) ? silences.json : []) {
    const item = silence as {
      id?: string;
      status?: { state?: string };
      matchers?: Matcher[];
      comment?: string;
    };
    if (item.status?.state !== "active" || !Array.isArray(item.matchers)) continue;
    if (item.matchers.every((matcher) => matches(matcher, labels))) {
      finding.silenced_by.push(`${item.id ?? "?"}${item.comment ? ` (${item.comment})` : ""}`);
    }
  }
  const alerts = await readIntegrationApi(connection, config, {
    path: "api/v2/alerts",
    query: { active: "true", silenced: "true", inhibited: "true" },
    signal,
  });
  if (alerts.ok && Array.isArray(alerts.json)) {
    for (const alert of alerts.json as {
      labels?: Record<string, string>;
      status?: { inhibitedBy?: string[] };
    }[]) {
      const same = Object.entries(labels).every(([key, value]) => alert.labels?.[key] === value);
      if (same) finding.inhibited_by.push(...(alert.status?.inhibitedBy ?? []));
    }
  }
  return finding;
}

export async function queryIntegrations(
  connections: IntegrationConnection[],
  config: Config,
  gathered: Gathered,
  now: Date,
  signal?: AbortSignal,
): Promise<{ findings: IntegrationFindings; evidence: EvidenceDraft[] }> {
  const findings: IntegrationFindings = { prometheus: [], alertmanager: [], consulted: [] };
  const evidence: EvidenceDraft[] = [];
  for (const connection of connections) {
    if (connection.type === "prometheus") {
      const asked = await askPrometheus(connection, config, gathered, now, signal);
      findings.prometheus.push(asked.finding);
      evidence.push(...asked.evidence);
      findings.consulted.push({
        name: connection.name,
        type: connection.type,
        outcome: asked.finding.outcome,
      });
    } else if (connection.type === "alertmanager") {
      const finding = await askAlertmanager(connection, config, gathered, signal);
      findings.alertmanager.push(finding);
      findings.consulted.push({ name: connection.name, type: connection.type, outcome: finding.outcome });
    }
  }
  return { findings, evidence };
}
