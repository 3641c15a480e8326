// The conclusion from a Prometheus finding: a comparison that flapped and then held for a sustained
// stretch up to now is a real problem, while one that flaps and is not holding is a flapping rule.
import { expect, it } from "vitest";
import { conclude } from "./conclude.ts";
import type { Gathered } from "./gather.ts";
import type { IntegrationFindings, PrometheusFinding } from "./query-integrations.ts";

const gathered: Gathered = {
  alert: {
    id: "a",
    title: "ConnectionPoolSaturated",
    description: "",
    source_type: "alertmanager",
    severity: "critical",
    status: "firing",
    is_test: false,
    alertname: "ConnectionPoolSaturated",
    triggered_at: "2026-01-01T12:00:00.000Z",
    labels: { alertname: "ConnectionPoolSaturated", service: "inventory" },
    scope: { service: "inventory" },
    role: "standalone",
    likely_upstream: null,
    storm_id: null,
    impact_score: 0,
  },
  history: { refires: 0, resolves: 0, quick_auto_resolves: 0, flapping: false },
  storm: null,
  neighbours: [],
  expression: { expr: "pool_in_use > 0.9", lhs: "pool_in_use", op: ">", threshold: 0.9 },
  links: [],
};

const findings = (held: Partial<PrometheusFinding>): IntegrationFindings => ({
  prometheus: [
    {
      integration: "prometheus",
      outcome: "answered",
      series_found: true,
      series: 1,
      alert_series: "{}",
      note: null,
      points: 900,
      min: 0.6,
      max: 0.97,
      last: 0.97,
      crossed_share: 0.25,
      state_changes: 5,
      first_crossed_at: "2026-01-01T11:35:00.000Z",
      held_since: null,
      held_seconds: null,
      covered_seconds: 3600,
      ...held,
    },
  ],
  alertmanager: [],
  consulted: [],
});

it("flapped on the way in, then held 12 minutes: real_problem", () => {
  const held = conclude(
    gathered,
    findings({ held_since: "2026-01-01T11:48:00.000Z", held_seconds: 720 }),
    [],
  );
  expect(held.rca.plain_summary?.verdict).toBe("real_problem");
  expect(held.hypotheses[0]?.statement).toContain("and stayed there");
  expect(held.hypotheses.find((h) => h.statement.includes("flaps"))?.status).toBe("rejected");
});

it("flapping and holding only 2 minutes: alert_is_misconfigured", () => {
  const brief = conclude(
    gathered,
    findings({ held_since: "2026-01-01T11:58:00.000Z", held_seconds: 120 }),
    [],
  );
  expect(brief.rca.plain_summary?.verdict).toBe("alert_is_misconfigured");
  expect(brief.hypotheses[0]?.statement).toContain("flaps on its threshold");
});

it("a threshold crossed all the time needs a series with a past: one born a minute before the alert is no misconfiguration", () => {
  const always = { crossed_share: 1, state_changes: 0, min: 0.92, max: 0.92, last: 0.92 };
  const young = conclude(gathered, findings({ ...always, points: 14, covered_seconds: 60 }), []);
  expect(young.rca.plain_summary?.verdict).not.toBe("alert_is_misconfigured");
  const crossed = young.hypotheses.find((h) => h.statement.includes("crossed nearly all the time"));
  expect(crossed).toMatchObject({ status: "rejected" });
  expect(crossed?.rationale).toContain("began 1 min before the alert");
  expect(young.fix).toBeNull();
  const old = conclude(gathered, findings({ ...always, points: 900, covered_seconds: 3600 }), []);
  expect(old.rca.plain_summary?.verdict).toBe("alert_is_misconfigured");
  expect(old.hypotheses[0]?.statement).toContain("crossed nearly all the time");
});

it("a series Prometheus answered with, too new to judge: says to look now and investigate later, not to add Prometheus", () => {
  const always = { crossed_share: 1, state_changes: 0, min: 0.92, max: 0.92, last: 0.92 };
  const young = conclude(gathered, findings({ ...always, points: 14, covered_seconds: 60 }), []);
  expect(young.rca.plain_summary?.verdict).toBe("not_enough_information");
  expect(young.rca.plain_summary?.what_to_do).toBe(
    "Look at inventory now: pool_in_use is 0.92 against a threshold of 0.9. Its series began 1 min before the alert, too little history to judge the rule by: investigate again once it has half an hour.",
  );
  const unread = conclude(gathered, { prometheus: [], alertmanager: [], consulted: [] }, []);
  expect(unread.rca.plain_summary?.what_to_do).toBe(
    'Add a prometheus integration (type prometheus, the server\'s base URL) so the series behind "ConnectionPoolSaturated" can be read, then investigate again.',
  );
});

const symptom = (
  upstream: { triggered_at: string; labels: Record<string, string>; scope: Gathered["alert"]["scope"] },
  alert: Partial<Gathered["alert"]>,
): Gathered => ({
  ...gathered,
  alert: {
    ...gathered.alert,
    role: "symptom",
    likely_upstream: "PostgresDown: orders-db is unreachable",
    storm_id: "s",
    ...alert,
  },
  storm: {
    size: 3,
    causes: [{ id: "u", title: "PostgresDown: orders-db is unreachable" }],
    symptoms: 2,
    upstream: {
      id: "u",
      title: "PostgresDown: orders-db is unreachable",
      alertname: "PostgresDown",
      role: "cause",
      status: "firing",
      ...upstream,
    },
  },
});

const ordersDb = {
  labels: { alertname: "PostgresDown", namespace: "shop", service: "orders-db" },
  scope: { namespace: "shop", service: "orders-db" },
};
const api = {
  labels: { alertname: "ConnectionPoolSaturated", namespace: "shop", service: "orders-api" },
  scope: { namespace: "shop", service: "orders-api" },
};
const crossedAfter = findings({
  state_changes: 1,
  crossed_share: 0.1,
  first_crossed_at: "2026-01-01T11:57:00.000Z",
  held_since: "2026-01-01T11:57:00.000Z",
  held_seconds: 600,
});

it("an upstream that fired earlier in the same namespace, before the series crossed: the top hypothesis", () => {
  const result = conclude(
    symptom({ triggered_at: "2026-01-01T11:56:00.000Z", ...ordersDb }, api),
    crossedAfter,
    [],
  );
  expect(result.hypotheses[0]).toMatchObject({
    statement: "A symptom of an upstream problem: PostgresDown: orders-db is unreachable",
    confidence: 0.85,
    status: "confirmed",
  });
  expect(result.hypotheses[0]?.rationale).toContain("both are in namespace shop");
  expect(result.hypotheses[1]?.statement).toContain("and stayed there");
  expect(result.rca.category).toBe("upstream_dependency");
  expect(result.rca.plain_summary?.verdict).toBe("real_problem");
});

it("an upstream that fired after this alert is rejected, with why", () => {
  const result = conclude(
    symptom({ triggered_at: "2026-01-01T12:03:00.000Z", ...ordersDb }, api),
    crossedAfter,
    [],
  );
  const upstream = result.hypotheses.find((h) => h.statement.startsWith("A symptom of an upstream problem"));
  expect(upstream).toMatchObject({ status: "rejected", confidence: 0.05 });
  expect(upstream?.rationale).toContain("fired 3 min after this alert");
  expect(result.hypotheses[0]?.statement).toContain("and stayed there");
});

it("an upstream that fired long after the series began to cross is rejected", () => {
  const early = findings({
    state_changes: 1,
    crossed_share: 0.3,
    first_crossed_at: "2026-01-01T11:40:00.000Z",
    held_since: "2026-01-01T11:40:00.000Z",
    held_seconds: 1800,
  });
  const result = conclude(symptom({ triggered_at: "2026-01-01T11:56:00.000Z", ...ordersDb }, api), early, []);
  const upstream = result.hypotheses.find((h) => h.statement.startsWith("A symptom of an upstream problem"));
  expect(upstream?.status).toBe("rejected");
  expect(upstream?.rationale).toContain("16 min before it fired");
});

it("an upstream that shares only the cluster stays open and low: a coincidence is not blamed", () => {
  const result = conclude(
    symptom(
      {
        triggered_at: "2026-01-01T11:56:00.000Z",
        labels: { alertname: "NodeDiskPressure", cluster: "prod", node: "worker-12" },
        scope: { cluster: "prod", host: "worker-12" },
      },
      {
        labels: { alertname: "ConnectionPoolSaturated", cluster: "prod", node: "worker-3" },
        scope: { cluster: "prod", host: "worker-3" },
      },
    ),
    crossedAfter,
    [],
  );
  const upstream = result.hypotheses.find((h) => h.statement.startsWith("A symptom of an upstream problem"));
  expect(upstream).toMatchObject({ status: "open", confidence: 0.3 });
  expect(upstream?.rationale).toContain("shares nothing narrower than the cluster prod");
  expect(result.hypotheses[0]?.statement).toContain("and stayed there");
});

it("a node upstream on the same host without any series: real_problem from the storm alone", () => {
  const result = conclude(
    symptom(
      {
        triggered_at: "2026-01-01T11:57:00.000Z",
        labels: { alertname: "KubeNodeNotReady", cluster: "prod", node: "worker-7" },
        scope: { cluster: "prod", host: "worker-7" },
      },
      {
        likely_upstream: "PostgresDown: orders-db is unreachable",
        labels: { alertname: "KubePodNotReady", cluster: "prod", node: "worker-7" },
        scope: { cluster: "prod", host: "worker-7" },
      },
    ),
    { prometheus: [], alertmanager: [], consulted: [] },
    [],
  );
  expect(result.hypotheses[0]).toMatchObject({ confidence: 0.8, status: "confirmed" });
  expect(result.hypotheses[0]?.rationale).toContain("both run on host worker-7");
  expect(result.rca.plain_summary?.verdict).toBe("real_problem");
});
