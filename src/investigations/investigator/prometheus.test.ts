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

/** The exporter's three targets of one rule, payments down after five samples of all three up. */
let targetsDown:
  | Promise<{ selector: string; labels: (service: string) => Record<string, string> }>
  | undefined;
function oneTargetDown(engine: string) {
  targetsDown ??= (async () => {
    const selector = `vigil_test_target_up{run="${engine}"}`;
    const series = (service: string) =>
      `vigil_test_target_up{service="${service}",team="core",run="${engine}"}`;
    for (const service of ["ledger", "payments", "search"]) exporter.set(series(service), 1);
    await prometheus.waitFor(
      "5 samples of each target",
      `min(count_over_time(${selector}[5m]))`,
      (v) => (v ?? 0) >= 5,
    );
    exporter.set(series("payments"), 0);
    await prometheus.waitFor("payments down", `max_over_time(${series("payments")}[3s])`, (v) => v === 0);
    // As Alertmanager sends it: the series' labels (scrape labels too), the rule's and alertname.
    const labels = (service: string) => ({
      alertname: "TargetDown",
      severity: "page",
      instance: exporter.url,
      job: "exporter",
      run: engine,
      service,
      team: "core",
    });
    return { selector, labels };
  })();
  return targetsDown;
}

const whatToDo = (done: { structured_rca: { plain_summary: { what_to_do: string } } }) =>
  done.structured_rca.plain_summary.what_to_do;
const metricOf = (done: { evidence: { kind: string; title: string; url: string }[] }) => {
  const metric = done.evidence.find((item) => item.kind === "metric");
  return metric && { title: metric.title, expr: new URL(metric.url).searchParams.get("g0.expr") };
};

describeOnOneEngine(
  "the investigator with a real Prometheus",
  (harness) => {
    it("several targets, one down: the facts are those of the alert's own target", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const { selector, labels } = await oneTargetDown(h.engine);
      const done = await investigateExpression(h, auth, `${selector} == 0`, labels("payments"));
      expect(done.status).toBe("completed");
      expect(done.structured_rca.plain_summary.verdict).toBe("real_problem");
      expect(whatToDo(done)).toBe(`Look at payments now: ${selector} is 0 against a threshold of 0.`);
      const rationales = done.hypotheses.map((item: { rationale: string }) => item.rationale).join("\n");
      expect(rationales).toContain("returned 3 series; the alert's has");
      expect(rationales).toContain("the series went from 0 to 1 (last 0)");
      const own = `{instance="${exporter.url}",job="exporter",run="${h.engine}",service="payments",team="core"}`;
      expect(done.structured_rca.plain_summary.how_we_got_here.join("\n")).toContain(
        `for ${selector}, the alert's series ${own} around`,
      );
      // The link shows the alert's series alone.
      const narrowed = `vigil_test_target_up{run="${h.engine}",instance="${exporter.url}",job="exporter",service="payments",team="core"}`;
      expect(metricOf(done)).toEqual({
        title: expect.stringMatching(/^vigil_test_target_up\{/),
        expr: narrowed,
      });
      expect(metricOf(done)?.title).toContain(narrowed);
      // A target that is up: its own facts, not payments'.
      const up = await investigateExpression(h, auth, `${selector} == 0`, labels("ledger"));
      expect(up.structured_rca.plain_summary.verdict).toBe("not_enough_information");
      expect(whatToDo(up)).toContain(`${selector} is 1 against a threshold of 0`);
      expect(up.hypotheses.map((item: { statement: string }) => item.statement).join("\n")).not.toContain(
        "stayed there",
      );
    });

    it("the alert's series is told apart by its labels, or said not to be", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const { selector, labels } = await oneTargetDown(h.engine);
      // A rule label overriding a series label (team): compared without it, payments alone matches.
      const overridden = await investigateExpression(h, auth, `${selector} == 0`, {
        ...labels("payments"),
        team: "sre",
      });
      expect(overridden.structured_rca.plain_summary.verdict).toBe("real_problem");
      expect(whatToDo(overridden)).toBe(`Look at payments now: ${selector} is 0 against a threshold of 0.`);
      expect(overridden.structured_rca.plain_summary.how_we_got_here.join("\n")).toContain(
        "compared without team: no series carries the alert's value",
      );
      // Labels all three targets share (an aggregation's): they disagree, so no facts are given.
      const { service: _service, ...shared } = labels("payments");
      const ambiguous = await investigateExpression(h, auth, `${selector} == 0`, shared);
      expect(ambiguous.structured_rca.plain_summary.verdict).toBe("not_enough_information");
      expect(whatToDo(ambiguous)).toContain(
        `3 series of ${selector} carry the alert's labels {instance="${exporter.url}",job="exporter",run="${h.engine}",team="core"} and disagree (latest values 1, 0, 1), so its own series could not be singled out`,
      );
      expect(metricOf(ambiguous)).toEqual({
        title: expect.stringContaining("every series, the alert's could not be singled out"),
        expr: selector,
      });
      // No series carries the alert's service.
      const none = await investigateExpression(h, auth, `${selector} == 0`, labels("billing"));
      expect(none.structured_rca.plain_summary.verdict).toBe("not_enough_information");
      expect(whatToDo(none)).toContain(
        `none of the 3 series of ${selector} carries the alert's labels, so its own series could not be singled out`,
      );
      expect(none.hypotheses.map((item: { statement: string }) => item.statement).join("\n")).not.toContain(
        "stayed there",
      );
    });

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
