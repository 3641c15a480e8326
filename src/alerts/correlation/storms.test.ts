// Storms through real HTTP: a database outage replayed through the trigger from fixtures and
// hand-built bodies of two sources, read back with getAlertV1. Expected groupings, roles and impact
// scores are worked out by hand from the rules of README.md ("Impact", "Storms").
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import {
  type AmAlert,
  amBody,
  deliverIds,
  readAlert,
  registerTrigger,
  stormHistory,
} from "../../../test/alerts.ts";
import { readFixture } from "../../../test/fixtures.ts";
import { describeEachEngine, type Harness } from "../../../test/harness.ts";
import { boundArray } from "../../core/db/bound-array.ts";
import { correlatePendingStorms } from "./storm-correlator.ts";

let clock = new Date("2024-05-14T09:30:00.000Z");

/** Storms are placed after the commit (storm-correlator.ts): wait until nothing is pending. */
async function settle(h: Harness): Promise<void> {
  await correlatePendingStorms(h.vigil.services.database.db, { now: h.vigil.services.now, wait: true });
}

const PAYMENTS = { cluster: "prod-eu-west-1", env: "production", namespace: "payments" };

const database: AmAlert = {
  status: "firing",
  fingerprint: "d000000000000001",
  startsAt: "2024-05-14T09:10:00.000Z",
  labels: {
    alertname: "PostgreSQLDown",
    ...PAYMENTS,
    service: "payments-db",
    instance: "payments-db-0:9187",
    severity: "critical",
  },
};
const latency: AmAlert = {
  status: "firing",
  fingerprint: "d000000000000002",
  startsAt: "2024-05-14T09:13:00.000Z",
  labels: { alertname: "HighRequestLatency", ...PAYMENTS, service: "payments-api", severity: "warning" },
};
const errorRate: AmAlert = {
  status: "firing",
  fingerprint: "d000000000000003",
  startsAt: "2024-05-14T09:13:30.000Z",
  labels: { alertname: "HighErrorRate", ...PAYMENTS, service: "payments-api", severity: "critical" },
};

const resolved = (alert: AmAlert, at: string): AmAlert => ({ ...alert, status: "resolved", endsAt: at });

/** The fixture's KubePodCrashLooping (payments-api in prod-eu-west-1, 09:12:31.512), resolved at `at`. */
function crashLoopResolved(at: string): string {
  const body = JSON.parse(readFixture("alertmanager", "firing-single-critical.json"));
  body.status = "resolved";
  for (const alert of body.alerts) {
    alert.status = "resolved";
    alert.endsAt = at;
  }
  return JSON.stringify(body);
}

describeEachEngine(
  "storms through the trigger",
  (harness) => {
    it("groups a database outage across sources, marks the cause, scores the fan-out, and dissolves on resolve", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const prometheus = await registerTrigger(h, auth, { source: "alertmanager", integration: "prod" });
      const dynatrace = await registerTrigger(h, auth, { source: "dynatrace", integration: "prod" });

      // 09:10 the database goes down; 09:12:31 the payments API crash-loops (the fixture);
      // 09:13 latency, 09:13:30 error rate; 09:14 Dynatrace sees the failure rate rise (its body
      // has no time: the receive time counts).
      const [databaseId] = await deliverIds(h, prometheus, amBody([database]));
      const [crashLoopId] = await deliverIds(
        h,
        prometheus,
        readFixture("alertmanager", "firing-single-critical.json"),
      );
      const [latencyId, errorRateId] = await deliverIds(h, prometheus, amBody([latency, errorRate]));
      clock = new Date("2024-05-14T09:14:00.000Z");
      const [failureRateId] = await deliverIds(
        h,
        dynatrace,
        readFixture("dynatrace", "custom-payload-open-service-error.json"),
      );
      const ids = [databaseId, crashLoopId, latencyId, errorRateId, failureRateId] as string[];
      await settle(h);

      const members = await Promise.all(ids.map((id) => readAlert(h, auth, id)));
      const stormId = members[0].storm_id;
      expect(stormId).toMatch(/^[0-9a-f-]{36}$/);
      // Storm of 5: fan-out 5 x 4 = 20 for every member.
      const symptom = { storm_id: stormId, alert_role: "symptom", likely_upstream: "PostgreSQLDown" };
      expect(
        members.map((alert) => [
          alert.title,
          alert.storm_id,
          alert.alert_role,
          alert.likely_upstream,
          alert.impact_score,
        ]),
      ).toEqual([
        // production 50 + one host (instance) 10 + 20
        ["PostgreSQLDown", stormId, "cause", null, 80],
        // production 50 + one pod 5 + 20
        ["KubePodCrashLooping", ...Object.values(symptom), 75],
        // production 50 + service-wide 20 + 20
        ["HighRequestLatency", ...Object.values(symptom), 90],
        ["HighErrorRate", ...Object.values(symptom), 90],
        // PROD 50 + k8s-namespace (service-wide) 20 + 20
        ["Failure rate increase", ...Object.values(symptom), 90],
      ]);
      expect(members[0].impact_explanation).toBe(
        "production environment (env=production) +50; one host or resource (instance=payments-db-0:9187) +10; storm of 5 or more co-firing alerts +20.",
      );

      // The database recovers: it leaves the storm; among the four left (all application alerts),
      // the earliest, the crash loop, is now the likely cause.
      await deliverIds(h, prometheus, amBody([resolved(database, "2024-05-14T09:20:00.000Z")]));
      await settle(h);
      const afterDatabase = await Promise.all(ids.map((id) => readAlert(h, auth, id)));
      expect(
        afterDatabase.map((alert) => [
          alert.status,
          alert.storm_id,
          alert.alert_role,
          alert.likely_upstream,
          alert.impact_score,
        ]),
      ).toEqual([
        // Alone now: 50 + 10 + 0.
        ["resolved", null, "unknown", null, 60],
        // Storm of 4: fan-out 15.
        ["active", stormId, "cause", null, 70],
        ["active", stormId, "symptom", "KubePodCrashLooping", 85],
        ["active", stormId, "symptom", "KubePodCrashLooping", 85],
        ["active", stormId, "symptom", "KubePodCrashLooping", 85],
      ]);

      // Joining and leaving are in the alert's history, written by the correlator ("vigil").
      // The critical database alert is classified at once (critical bypass) whenever the job worker
      // polls; when that happens is not what this test is about.
      const events = (await stormHistory(h, auth, databaseId as string)).filter(
        ([kind]) => !["storm_role_changed", "classified"].includes(kind as string),
      );
      expect(events).toEqual([
        ["created", "source", null, null],
        ["storm_joined", "vigil", stormId, null],
        ["resolved", "source", null, null],
        ["storm_left", "vigil", null, stormId],
      ]);

      // The API recovers too; Dynatrace's alert is left alone: the storm dissolves.
      await deliverIds(h, prometheus, crashLoopResolved("2024-05-14T09:21:00.000Z"));
      await deliverIds(
        h,
        prometheus,
        amBody([
          resolved(latency, "2024-05-14T09:21:00.000Z"),
          resolved(errorRate, "2024-05-14T09:21:00.000Z"),
        ]),
      );
      await settle(h);
      const last = await readAlert(h, auth, failureRateId as string);
      expect([
        last.storm_id,
        last.alert_role,
        last.likely_upstream,
        last.impact_score,
        last.impact_explanation,
      ]).toEqual([
        null,
        "unknown",
        null,
        70,
        "prod environment (Environment=PROD) +50; service-wide scope (k8s-namespace=checkout) +20; not in a storm +0.",
      ]);
      for (const id of ids.slice(0, 4)) expect((await readAlert(h, auth, id)).storm_id).toBeNull();
    });

    it("queues for classification again each classified member whose role or pointed-at cause changed", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const prometheus = await registerTrigger(h, auth, { source: "alertmanager", integration: "requeue" });
      const [databaseId] = await deliverIds(h, prometheus, amBody([database]));
      const [crashLoopId] = await deliverIds(
        h,
        prometheus,
        readFixture("alertmanager", "firing-single-critical.json"),
      );
      const [latencyId, errorRateId] = await deliverIds(h, prometheus, amBody([latency, errorRate]));
      await settle(h);
      // As if classified: only a completed classification is queued again.
      const ids = [databaseId, crashLoopId, latencyId, errorRateId] as string[];
      await h.vigil.services.database.db.execute(
        sql`update alerts set analysis_status = 'completed' where id = any(${boundArray(ids, "uuid")})`,
      );
      // The database recovers: the crash loop becomes the cause, and the two others its symptoms.
      await deliverIds(h, prometheus, amBody([resolved(database, "2024-05-14T09:20:00.000Z")]));
      const requeued: string[] = [];
      await correlatePendingStorms(h.vigil.services.database.db, {
        now: h.vigil.services.now,
        wait: true,
        reclassify: async (_tx, _tenant, changed) => {
          requeued.push(...changed);
        },
      });
      expect((await readAlert(h, auth, latencyId as string)).likely_upstream).toBe("KubePodCrashLooping");
      expect(requeued.sort()).toEqual([crashLoopId, latencyId, errorRateId].sort());
    });

    it("leaves an isolated alert, and alerts without scope labels, outside any storm", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const prometheus = await registerTrigger(h, auth, { source: "alertmanager", integration: "other" });
      const lone = {
        status: "firing" as const,
        fingerprint: "e000000000000001",
        startsAt: "2024-05-14T09:12:00.000Z",
        labels: { alertname: "DiskPressure", cluster: "prod-us-east-1", env: "production", node: "node-3" },
      };
      // Two co-firing alerts of the same name, but with no cluster, namespace, service or host.
      const unscoped = ["e000000000000002", "e000000000000003"].map((fingerprint) => ({
        status: "firing" as const,
        fingerprint,
        startsAt: "2024-05-14T09:12:00.000Z",
        labels: { alertname: "BatchJobLate", env: "production", severity: "warning" },
      }));
      const ids = await deliverIds(h, prometheus, amBody([lone, ...unscoped]));
      await settle(h);
      const alerts = await Promise.all(ids.map((id) => readAlert(h, auth, id)));
      expect(
        alerts.map((alert) => [alert.title, alert.storm_id, alert.alert_role, alert.impact_score]),
      ).toEqual([
        // production 50 + one host (node) 10
        ["DiskPressure", null, "unknown", 60],
        // production 50 + scope unknown 10
        ["BatchJobLate", null, "unknown", 60],
        ["BatchJobLate", null, "unknown", 60],
      ]);
    });

    it("keeps tenants apart: the same scope in another key's namespace forms no storm", async () => {
      const h = harness();
      const first = await h.createKey();
      const second = await h.createKey();
      const one = await registerTrigger(h, first.auth, { source: "alertmanager", integration: "prod" });
      const two = await registerTrigger(h, second.auth, { source: "alertmanager", integration: "prod" });
      const [a] = await deliverIds(h, one, amBody([{ ...latency, fingerprint: "f000000000000001" }]));
      const [b] = await deliverIds(h, two, amBody([{ ...errorRate, fingerprint: "f000000000000002" }]));
      await settle(h);
      expect((await readAlert(h, first.auth, a as string)).storm_id).toBeNull();
      expect((await readAlert(h, second.auth, b as string)).storm_id).toBeNull();
    });

    it("past five members, a joiner rewrites no member whose storm fields stay the same", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      // A long batch window and no bypass: classification writes none of these rows meanwhile.
      const trigger = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "growing",
        classify_mode: "batch",
        classify_batch_window_seconds: 300,
        classify_critical_bypass: false,
      });
      const scope = { cluster: "prod-us-east-1", env: "production", namespace: "checkout" };
      const member = (n: number): AmAlert => ({
        status: "firing",
        fingerprint: `e00000000000000${n}`,
        startsAt: `2024-05-14T09:1${n}:00.000Z`,
        labels: { alertname: `CheckoutSymptom${n}`, ...scope, severity: "warning" },
      });
      const first = await deliverIds(h, trigger, amBody([1, 2, 3, 4, 5].map(member)));
      await settle(h);
      const { db } = h.vigil.services.database;
      const versions = async () =>
        (
          await db.execute(
            sql`select xmin::text as v from alerts where id = any(${boundArray(first as string[], "uuid")}) order by id`,
          )
        ).rows.map((row) => row.v);
      const before = await Promise.all(first.map((id) => readAlert(h, auth, id as string)));
      const stormId = before[0].storm_id;
      expect(stormId).toMatch(/^[0-9a-f-]{36}$/);
      const stored = await versions();

      const [joiner] = await deliverIds(h, trigger, amBody([member(6)]));
      await settle(h);
      const joined = await readAlert(h, auth, joiner as string);
      expect([joined.storm_id, joined.alert_role, joined.likely_upstream]).toEqual([
        stormId,
        "symptom",
        "CheckoutSymptom1",
      ]);
      // production 50 + namespace (service-wide) 20 + the most fan-out, 20
      expect([joined.impact_score, joined.impact_explanation]).toEqual([
        90,
        "production environment (env=production) +50; service-wide scope (namespace=checkout) +20; storm of 5 or more co-firing alerts +20.",
      ]);
      const after = await Promise.all(first.map((id) => readAlert(h, auth, id as string)));
      expect(after).toEqual(before);
      expect(await versions()).toEqual(stored);
    });
  },
  {},
  { now: () => new Date(clock.getTime()) },
);
