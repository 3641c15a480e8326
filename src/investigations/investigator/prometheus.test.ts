// The deterministic investigator against a real Prometheus scraping an exporter the test controls:
// each scenario drives one gauge, waits until Prometheus has seen what it needs (polling Prometheus
// itself, never sleeping), then ingests an Alertmanager alert whose generatorURL names the rule's
// expression and reads the verdict.
import { afterAll, beforeAll, expect, it } from "vitest";
import { amBody, deliverIds, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, call, describeOnOneEngine, type Harness, waitFor } from "../../../test/harness.ts";
import {
  type Exporter,
  type PrometheusProcess,
  requirePrometheus,
  startExporter,
  startPrometheus,
} from "../../../test/prometheus-process.ts";

let exporter: Exporter;
let prometheus: PrometheusProcess;
let sequence = 0;

beforeAll(async () => {
  exporter = await startExporter();
  exporter.set('vigil_test_always{service="ledger"}', 1000);
  // An hour of it before the test: "always crossed" needs a series with a past.
  prometheus = await startPrometheus(requirePrometheus(), exporter.url, {
    history: [{ series: 'vigil_test_always{service="ledger"}', value: 1000, seconds: 3600 }],
  });
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.close();
});

async function investigateExpression(h: Harness, auth: Auth, expr: string, labels: Record<string, string>) {
  const integration = await call(h, auth, "POST", "/api/v1/integrations", {
    name: `prom-${++sequence}`,
    type: "prometheus",
    url: prometheus.base,
  });
  expect([201, 409]).toContain(integration.statusCode);
  const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: `am-${sequence}` });
  const [alertId] = await deliverIds(
    h,
    trigger,
    amBody(
      [
        {
          status: "firing",
          fingerprint: `fp-${process.pid}-${sequence}`,
          startsAt: new Date().toISOString(),
          labels,
        },
      ],
      { generatorURL: `${prometheus.base}/graph?g0.expr=${encodeURIComponent(expr)}&g0.tab=1` },
    ),
  );
  const ref = (await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`)).json()
    .investigation;
  return waitFor(async () => {
    const body = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${ref.id}`)).json();
    return ["completed", "failed", "cancelled"].includes(body.status) ? body : undefined;
  }, 60_000);
}

describeOnOneEngine(
  "the investigator with a real Prometheus",
  (harness) => {
    it("a threshold crossed and held: real_problem, with a verified metric link", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      // A series of this run's own: its low stretch is this test's, whichever engine ran before.
      const series = `vigil_test_queue_depth{service="checkout",run="${h.engine}"}`;
      const selector = `vigil_test_queue_depth{run="${h.engine}"}`;
      exporter.set(series, 10);
      await prometheus.waitFor(
        "15 low samples",
        `count_over_time(${selector}[5m])`,
        (value) => (value ?? 0) >= 15,
      );
      exporter.set(series, 500);
      await prometheus.waitFor("the high value held", `min_over_time(${selector}[3s])`, (v) => v === 500);
      const done = await investigateExpression(h, auth, `${selector} > 100`, {
        alertname: "QueueBacklog",
        service: "checkout",
      });
      expect(done.status).toBe("completed");
      expect(done.structured_rca.plain_summary.verdict).toBe("real_problem");
      expect(done.structured_rca.category).toBe("service_fault");
      expect(done.hypotheses[0]).toMatchObject({ status: "confirmed" });
      expect(done.hypotheses[0].statement).toContain(`${selector} crossed > 100`);
      const rejected = done.hypotheses.filter((item: { status: string }) => item.status === "rejected");
      expect(rejected.map((item: { statement: string }) => item.statement).join("\n")).toContain("absent");
      const metric = done.evidence.find((item: { kind: string }) => item.kind === "metric");
      expect(metric).toMatchObject({
        source: "tool_trace",
        tool_name: "prometheus_query_range",
        verified: true,
      });
      expect(metric.url.startsWith(`${prometheus.base}/graph?`)).toBe(true);
      // The generatorURL is on the Prometheus host too: a verified alert_rule link.
      expect(done.evidence.find((item: { kind: string }) => item.kind === "alert_rule")).toMatchObject({
        verified: true,
      });
      expect(done.triage_metadata.integrations_consulted).toEqual([
        { name: expect.stringMatching(/^prom-/), type: "prometheus", outcome: "answered" },
      ]);
    });

    it("a series that is absent: alert_is_misconfigured", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const done = await investigateExpression(h, auth, "vigil_test_missing_metric > 1", {
        alertname: "MissingSeries",
        service: "checkout",
      });
      expect(done.structured_rca.plain_summary.verdict).toBe("alert_is_misconfigured");
      expect(done.hypotheses[0].statement).toContain("absent");
      expect(done.hypotheses[0].status).toBe("confirmed");
    });

    it("a threshold always crossed: alert_is_misconfigured", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      await prometheus.waitFor("30 samples", "count_over_time(vigil_test_always[5m])", (v) => (v ?? 0) >= 30);
      const done = await investigateExpression(h, auth, "vigil_test_always > 1", {
        alertname: "LedgerAlways",
        service: "ledger",
      });
      expect(done.structured_rca.plain_summary.verdict).toBe("alert_is_misconfigured");
      expect(done.hypotheses[0].statement).toContain("crossed nearly all the time");
    });

    it("flapping on its threshold: alert_is_misconfigured", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const selector = `vigil_test_flap{run="${h.engine}"}`;
      for (let toggle = 0; toggle < 7; toggle += 1) {
        const value = toggle % 2 === 0 ? 0 : 10;
        exporter.set(`vigil_test_flap{service="search",run="${h.engine}"}`, value);
        // Two samples of the new value, so the rule's evaluation sees each state.
        await prometheus.waitFor(
          `flap value ${value}`,
          `min_over_time(${selector}[2s]) == max_over_time(${selector}[2s]) and max_over_time(${selector}[2s]) == ${value}`,
          (v) => v === value,
        );
      }
      const done = await investigateExpression(h, auth, `${selector} > 5`, {
        alertname: "SearchFlaps",
        service: "search",
      });
      expect(done.structured_rca.plain_summary.verdict).toBe("alert_is_misconfigured");
      expect(done.hypotheses[0].statement).toContain("flaps on its threshold");
    });
  },
  { integrationAllowedHosts: ["127.0.0.1"] },
);
