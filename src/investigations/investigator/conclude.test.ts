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
      points: 900,
      min: 0.6,
      max: 0.97,
      last: 0.97,
      crossed_share: 0.25,
      state_changes: 5,
      first_crossed_at: "2026-01-01T11:35:00.000Z",
      held_since: null,
      held_seconds: null,
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
