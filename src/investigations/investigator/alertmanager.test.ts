// The investigator reads a real Alertmanager (Debian's prometheus-alertmanager) for the silences and
// inhibitions that cover the alert.
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type AlertmanagerProcess,
  requireAlertmanager,
  startAlertmanager,
} from "../../../test/alertmanager-process.ts";
import { amBody, deliverIds, registerTrigger } from "../../../test/alerts.ts";
import { call, describeEachEngine, waitFor } from "../../../test/harness.ts";

let alertmanager: AlertmanagerProcess;

beforeAll(async () => {
  alertmanager = await startAlertmanager(requireAlertmanager());
}, 90_000);

afterAll(async () => {
  await alertmanager?.stop();
});

describeEachEngine(
  "the investigator with a real Alertmanager",
  (harness) => {
    it("names the silence and the inhibiting alert that cover the alert", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const service = `orders-${h.engine}`;
      const warning = { alertname: "OrdersSlow", service, severity: "warning" };
      // The critical alert of the same service inhibits the warning (startAlertmanager's inhibit rule).
      await alertmanager.postAlerts([
        { labels: { alertname: "OrdersDown", service, severity: "critical" } },
        { labels: warning },
      ]);
      await alertmanager.waitForAlerts("the warning inhibited", (alerts) =>
        alerts.some((alert) => alert.labels.service === service && alert.status.inhibitedBy.length > 0),
      );
      const silence = await alertmanager.silence({ alertname: "OrdersSlow", service });
      const integration = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "am-main",
        type: "alertmanager",
        url: alertmanager.base,
      });
      expect(integration.statusCode, integration.body).toBe(201);
      const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "pushed" });
      const [alertId] = await deliverIds(
        h,
        trigger,
        amBody([
          {
            status: "firing",
            fingerprint: `slow-${h.engine}`,
            startsAt: new Date().toISOString(),
            labels: warning,
          },
        ]),
      );
      const ref = (await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`)).json()
        .investigation;
      const done = await waitFor(async () => {
        const body = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${ref.id}`)).json();
        return body.status === "completed" ? body : undefined;
      }, 60_000);
      expect(done.triage_metadata.integrations_consulted).toEqual([
        { name: "am-main", type: "alertmanager", outcome: "answered" },
      ]);
      const steps = done.structured_rca.plain_summary.how_we_got_here.join("\n");
      expect(steps).toContain(`am-main has it silenced (${silence}`);
      expect(steps).toContain("am-main inhibits it");
      expect(done.structured_rca.contributing_factors.join("\n")).toContain("silenced");
    });

    it("auto_investigate covers alerts a pull sync creates, once each", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const service = `pulled-${h.engine}`;
      await alertmanager.postAlerts([{ labels: { alertname: "PulledOne", service } }]);
      await alertmanager.waitForAlerts("the pulled alert", (alerts) =>
        alerts.some((alert) => alert.labels.service === service),
      );
      // The registration first: the scheduled sync may pull the integration as soon as it exists.
      await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "am-pull",
        auto_investigate: true,
      });
      expect(
        (
          await call(h, auth, "POST", "/api/v1/integrations", {
            name: "am-pull",
            type: "alertmanager",
            url: alertmanager.base,
          })
        ).statusCode,
      ).toBe(201);
      for (let sync = 0; sync < 2; sync += 1) {
        const synced = await call(h, auth, "POST", "/app/sre/api/v1/integrations/am-pull/sync");
        expect(synced.statusCode, synced.body).toBeLessThan(300);
      }
      const pulled = await waitFor(async () => {
        const list = (await call(h, auth, "GET", "/app/sre/api/v1/alerts?page_size=500")).json();
        const alert = list.alerts.find(
          (item: { labels: Record<string, string> }) => item.labels.service === service,
        );
        return alert?.investigation ? alert : undefined;
      }, 60_000);
      const investigations = await call(
        h,
        auth,
        "GET",
        `/app/sre/api/v1/investigations?alert_id=${pulled.id}`,
      );
      expect(investigations.json().total).toBe(1);
      expect(investigations.json().investigations[0].triage_metadata.trigger).toBe("auto_investigate");
    });
  },
  { integrationAllowedHosts: ["127.0.0.1"] },
);
