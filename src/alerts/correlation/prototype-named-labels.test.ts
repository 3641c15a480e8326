// Label keys and values are data: alerts whose labels or tags are named like Object.prototype
// members (`constructor`, `__proto__`, `toString`, `hasOwnProperty`), as keys or as values, are
// ingested through the trigger, scored, placed in storms and classified like any other, and read
// back with those labels. No correlator loop runs (role api): the test runs the correlator and the
// classification job itself. Expected scores are worked out from README.md ("Impact", "Storms").
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { deliverIds, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { readFixture } from "../../../test/fixtures.ts";
import { type Auth, describeEachEngine, type Harness } from "../../../test/harness.ts";
import { PARSERS, type SourceType } from "../sources/index.ts";
import { classifyAlertsJob } from "../triage/classify-job.ts";
import { correlatePendingStorms } from "./storm-correlator.ts";

/** Own keys only: JSON.parse keeps `__proto__` as an ordinary key, as a delivery's body does. */
const NAMED = JSON.parse(
  '{"constructor":"constructor","__proto__":"__proto__","toString":"toString","hasOwnProperty":"hasOwnProperty"}',
) as Record<string, string>;

/** A registration of the source that classifies at once; answers its trigger path. */
const register = (h: Harness, auth: Auth, source: SourceType) =>
  registerTrigger(h, auth, { source, integration: "prototype-named", classify_mode: "immediate" });

/** The labels the source's parser reads from the body: what the alert must read back with. */
function parsedLabels(source: SourceType, body: string): Record<string, string>[] {
  const parsed = PARSERS[source]({ body, headers: { "content-type": "application/json" }, options: {} });
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.events.map((event) => event.labels);
}

/** Entries sorted: compares label sets key by key, `__proto__` included. */
const entriesOf = (labels: Record<string, string>) =>
  Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1));

describeEachEngine(
  "labels named like Object.prototype members",
  (harness) => {
    it("Alertmanager: ingested, read back, scored, placed in a storm and classified", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await register(h, auth, "alertmanager");
      const fixture = JSON.parse(readFixture("alertmanager", "firing-single-critical.json"));
      const [crashLoop] = fixture.alerts;
      // The crash-looping pod names its upstream by a node called `constructor`.
      crashLoop.labels = { ...crashLoop.labels, ...NAMED, depends_on: "constructor" };
      const node = {
        ...crashLoop,
        labels: JSON.parse(
          '{"alertname":"KubeNodeNotReady","cluster":"prod-eu-west-1","node":"constructor","env":"__proto__","severity":"warning","toString":"","hasOwnProperty":"__proto__"}',
        ),
        startsAt: "2024-05-14T09:13:31.512Z",
        fingerprint: "5f3c1a2b9d8e7f61",
      };
      fixture.alerts = [crashLoop, node];
      const body = JSON.stringify(fixture);
      const ids = await deliverIds(h, path, body);
      const [podId, nodeId] = ids as [string, string];

      // Alertmanager drops `__` keys (Prometheus' internal labels); every other label is kept as sent.
      const expected = parsedLabels("alertmanager", body);
      expect(Object.keys(expected[0] ?? {})).toEqual(
        expect.arrayContaining(["constructor", "toString", "hasOwnProperty"]),
      );
      expect(expected[1]).toMatchObject({
        env: "__proto__",
        node: "constructor",
        hasOwnProperty: "__proto__",
      });
      const [pod, nodeAlert] = [await readAlert(h, auth, podId), await readAlert(h, auth, nodeId)];
      expect(entriesOf(pod.labels)).toEqual(entriesOf(expected[0] ?? {}));
      expect(entriesOf(nodeAlert.labels)).toEqual(entriesOf(expected[1] ?? {}));
      // Scored at ingest, outside a storm: production 50 + one pod 5; an environment named
      // `__proto__` is not in the map (20) + one host 10.
      expect([pod.impact_explanation, nodeAlert.impact_explanation]).toEqual([
        "production environment (env=production) +50; one pod, container or disk (pod=payments-api-7d9f8b6c5d-x2k4p) +5; not in a storm +0.",
        'environment "__proto__" is not in the criticality map (env=__proto__) +20; one host or resource (node=constructor) +10; not in a storm +0.',
      ]);

      // One cluster, a minute apart: a storm. The node is the cause (infrastructure, and named by
      // the pod's depends_on); each gets 5 for the other member.
      const { services } = h.vigil;
      await correlatePendingStorms(services.database.db, {
        now: services.now,
        wait: true,
        impact: { environmentCriticality: services.config.environmentCriticality },
      });
      const stormed = [await readAlert(h, auth, podId), await readAlert(h, auth, nodeId)];
      expect(stormed[0].storm_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(
        stormed.map((alert) => [alert.storm_id, alert.alert_role, alert.likely_upstream, alert.impact_score]),
      ).toEqual([
        [stormed[0].storm_id, "symptom", "KubeNodeNotReady", 60],
        [stormed[0].storm_id, "cause", null, 35],
      ]);

      const ctx = {
        ...services,
        db: services.database.db,
        log: h.vigil.log,
        enqueue: services.queue.enqueue,
        enqueueMany: services.queue.enqueueMany,
      };
      const { rows } = await services.database.db.execute(
        sql`select owner_id from alerts where id = ${podId}`,
      );
      const ownerId = String(rows[0]?.owner_id);
      await classifyAlertsJob.handler({
        ctx,
        data: { orgId: null, ownerId, buckets: [`alert:${podId}`, `alert:${nodeId}`] },
        attempt: 1,
      });
      const classified = [await readAlert(h, auth, podId), await readAlert(h, auth, nodeId)];
      // The symptom waits for its cause; the cause: Medium 1 + unknown environment 0 + cause 1 = 2.
      expect(
        classified.map((alert) => [alert.analysis_status, alert.attention, alert.attention_reason]),
      ).toEqual([
        ["completed", "others", 'symptom of a storm: look at "KubeNodeNotReady" first'],
        ["completed", "needs_review", "Medium severity, in an unknown environment, likely cause of a storm"],
      ]);
    });

    it("Grafana labels and Opsgenie tags: ingested, read back and scored", async () => {
      const h = harness();
      const { auth } = await h.createKey();

      const grafana = JSON.parse(readFixture("grafana", "docs-firing-2-alerts.json"));
      grafana.alerts[0].labels = { ...grafana.alerts[0].labels, ...NAMED, hasOwnProperty: "" };
      const grafanaBody = JSON.stringify(grafana);
      const [grafanaId] = await deliverIds(h, await register(h, auth, "grafana"), grafanaBody);
      const grafanaAlert = await readAlert(h, auth, grafanaId as string);
      const [grafanaLabels] = parsedLabels("grafana", grafanaBody);
      expect(grafanaLabels).toMatchObject({
        constructor: "constructor",
        toString: "toString",
        hasOwnProperty: "",
      });
      expect(entriesOf(grafanaAlert.labels)).toEqual(entriesOf(grafanaLabels ?? {}));
      // No environment (a bare `hasOwnProperty` tag names none); zone us-1 is region-wide.
      expect(grafanaAlert.impact_explanation).toBe(
        "environment unknown (no environment label) +20; cluster- or region-wide scope (zone=us-1) +30; not in a storm +0.",
      );

      // Opsgenie tags become labels as they are: `__proto__` and `constructor` as bare tags.
      const opsgenie = JSON.parse(readFixture("opsgenie", "create-with-priority.json"));
      opsgenie.alert.tags = [
        "constructor",
        "__proto__",
        "toString:prod",
        "hasOwnProperty:constructor",
        "env:constructor",
      ];
      const opsgenieBody = JSON.stringify(opsgenie);
      const [opsgenieId] = await deliverIds(h, await register(h, auth, "opsgenie"), opsgenieBody);
      const opsgenieAlert = await readAlert(h, auth, opsgenieId as string);
      const [opsgenieLabels] = parsedLabels("opsgenie", opsgenieBody);
      expect(entriesOf(opsgenieLabels ?? {})).toEqual(
        entriesOf(
          JSON.parse(
            '{"constructor":"","__proto__":"","toString":"prod","hasOwnProperty":"constructor","env":"constructor","entity":"Server"}',
          ),
        ),
      );
      expect(entriesOf(opsgenieAlert.labels)).toEqual(entriesOf(opsgenieLabels ?? {}));
      expect(opsgenieAlert.impact_explanation).toBe(
        'environment "constructor" is not in the criticality map (env=constructor) +20; one host or resource (entity=Server) +10; not in a storm +0.',
      );
    });
  },
  { role: "api" },
);
