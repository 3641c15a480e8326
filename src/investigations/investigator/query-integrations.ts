// Step 2: ask the tenant's integrations. A `prometheus` integration: the alert's series around its
// trigger time (a range query of the compared side), whether it exists at all, how often the rule's
// comparison changed state and how much of the time it held. An `alertmanager` integration: the
// silences and inhibitions that cover the alert.
import type { Config } from "../../config.ts";
import {
  type IntegrationConnection,
  integrationApiUrl,
  readIntegrationApi,
} from "../../integrations/index.ts";
import type { EvidenceDraft } from "../evidence.ts";
import type { Gathered } from "./gather.ts";

const LOOKBACK_SECONDS = 3600;
const AFTER_SECONDS = 1800;
const MAX_POINTS = 1000;

export interface PrometheusFinding {
  integration: string;
  outcome: string;
  /** null: not asked (no expression). */
  series_found: boolean | null;
  series: number;
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

type PromVector = { metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }[];

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
  const values = series.flatMap((item) =>
    (item.values ?? []).map(([at, value]) => [at, Number(value)] as const),
  );
  finding.points = values.length;
  if (values.length > 0) {
    // A series born minutes before the alert says nothing about "nearly all the time".
    const first = Math.min(...values.map(([at]) => at));
    finding.covered_seconds = Math.max(0, Math.floor(triggered - first));
    const numbers = values.map(([, value]) => value).filter(Number.isFinite);
    finding.min = numbers.length ? Math.min(...numbers) : null;
    finding.max = numbers.length ? Math.max(...numbers) : null;
    finding.last = values.at(-1)?.[1] ?? null;
  }
  const { op, threshold } = expression;
  if (op && threshold !== null && values.length > 0) {
    const crossed = values.filter(([, value]) => holds(value, op, threshold));
    finding.first_crossed_at = crossed[0] ? new Date(crossed[0][0] * 1000).toISOString() : null;
    let since: number | null = null;
    for (const [at, value] of values) since = holds(value, op, threshold) ? (since ?? at) : null;
    finding.held_since = since === null ? null : new Date(since * 1000).toISOString();
    const lastAt = values.at(-1)?.[0];
    finding.held_seconds = since === null || lastAt === undefined ? null : lastAt - since;
    // State changes and share at the server's evaluation resolution (a subquery), so short crossings
    // between two points of the range query still count.
    const bool = `(${query}) ${op} bool ${threshold}`;
    const window = `${end - start}s`;
    const changes = await readIntegrationApi(connection, config, {
      path: "api/v1/query",
      query: { query: `sum(changes((${bool})[${window}:]))`, time: String(end) },
      signal,
    });
    const share = await readIntegrationApi(connection, config, {
      path: "api/v1/query",
      query: { query: `avg(avg_over_time((${bool})[${window}:]))`, time: String(end) },
      signal,
    });
    const scalar = (result: typeof changes) => {
      const value = result.ok ? resultOf(result.json)?.[0]?.value?.[1] : undefined;
      return value === undefined ? null : Number(value);
    };
    finding.state_changes = scalar(changes);
    finding.crossed_share = scalar(share) ?? crossed.length / values.length;
  }
  const graph = integrationApiUrl(connection, "graph", {
    "g0.expr": query,
    "g0.tab": "0",
    "g0.range_input": `${Math.ceil((end - start) / 60)}m`,
    "g0.end_input": new Date(end * 1000).toISOString(),
  });
  const evidence: EvidenceDraft[] = graph
    ? [
        {
          kind: "metric",
          title: `${query} around the trigger (${connection.name})`,
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
