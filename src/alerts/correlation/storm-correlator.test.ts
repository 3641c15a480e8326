// The storm correlator after the ingest commit (storms.ts, storm-correlator.ts), through real HTTP:
// ingest only queues alerts for storms; the correlator loop of a running Vigil (or an explicit
// correlatePendingStorms where no loop runs) places them. Expected storms, roles and impact scores
// are worked out by hand from README.md ("Impact", "Storms").
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import {
  type AmAlert,
  amBody,
  deliverAlerts,
  readAlert,
  registerTrigger,
  stormHistory,
} from "../../../test/alerts.ts";
import { type Auth, describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import { correlatePendingStorms, StormCorrelationError } from "./storm-correlator.ts";

const clock = new Date("2024-05-14T09:30:00.000Z");

async function deliverOne(h: Harness, path: string, alert: AmAlert): Promise<string> {
  const [delivered] = await deliverAlerts(h, path, amBody([alert]));
  if (!delivered) throw new Error("the delivery returned no alert");
  return delivered.id;
}

/** What storms decide for an alert, as a row to compare whole. */
async function stormFields(h: Harness, auth: Auth, id: string) {
  const alert = await readAlert(h, auth, id);
  return [alert.storm_id, alert.alert_role, alert.likely_upstream, alert.impact_score];
}

/** Whether the alert waits in the correlator's queue: no API field shows it. */
async function isPending(h: Harness, id: string): Promise<boolean> {
  const { rows } = await h.vigil.services.database.db.execute(
    sql`select count(*)::int as n from alert_storm_queue where alert_id = ${id}`,
  );
  return Number(rows[0]?.n) > 0;
}

async function settle(h: Harness): Promise<number> {
  return correlatePendingStorms(h.vigil.services.database.db, { now: h.vigil.services.now, wait: true });
}

function firing(fingerprint: string, startsAt: string, labels: Record<string, string>): AmAlert {
  return { status: "firing", fingerprint, startsAt: `2024-05-14T${startsAt}.000Z`, labels };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describeEachEngine(
  "the storm correlator of a running Vigil",
  (harness) => {
    it("places co-firing alerts of one cluster in a storm without being asked", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "loop" });
      const cluster = { cluster: "prod-ap-south-1", env: "production" };
      // Two deliveries two minutes apart (trigger times): a node's disk, then the API's errors.
      const disk = await deliverOne(
        h,
        path,
        firing("a000000000000001", "09:20:00", { alertname: "NodeDiskFull", ...cluster, node: "node-7" }),
      );
      const errors = await deliverOne(
        h,
        path,
        firing("a000000000000002", "09:22:00", {
          alertname: "HighErrorRate",
          ...cluster,
          service: "checkout",
        }),
      );

      // Until both share a storm and neither is left in the queue: a round may place the second
      // alert as the first one's neighbour before it reads the second's own queue entry (each of
      // its statements sees what has committed by then), and the next round removes that entry.
      const [diskAlert, errorsAlert] = await waitFor(async () => {
        const alerts = await Promise.all([readAlert(h, auth, disk), readAlert(h, auth, errors)]);
        const [first, second] = alerts;
        if (!first?.storm_id || first.storm_id !== second?.storm_id) return undefined;
        return (await isPending(h, disk)) || (await isPending(h, errors)) ? undefined : alerts;
      });
      expect(diskAlert.storm_id).toMatch(UUID);
      // NodeDiskFull is infrastructure, HighErrorRate application: the disk is the cause.
      // Impact: production 50 + scope + storm of 2 (5 x 1 other member).
      expect([
        [
          diskAlert.alert_role,
          diskAlert.likely_upstream,
          diskAlert.impact_score,
          diskAlert.impact_explanation,
        ],
        [
          errorsAlert.alert_role,
          errorsAlert.likely_upstream,
          errorsAlert.impact_score,
          errorsAlert.impact_explanation,
        ],
      ]).toEqual([
        // one host (node) 10
        [
          "cause",
          null,
          65,
          "production environment (env=production) +50; one host or resource (node=node-7) +10; storm of 2 co-firing alerts +5.",
        ],
        // service-wide 20
        [
          "symptom",
          "NodeDiskFull",
          75,
          "production environment (env=production) +50; service-wide scope (service=checkout) +20; storm of 2 co-firing alerts +5.",
        ],
      ]);
    });

    it("scores an environment ENVIRONMENT_CRITICALITY adds, at ingest and in the correlator", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "canary" });

      // Alone: canary is high here (50; the default map does not know it: unknown 20) + one
      // service 20 + not in a storm 0.
      const lone = await deliverOne(
        h,
        path,
        firing("c000000000000001", "09:20:00", {
          alertname: "HighRequestLatency",
          env: "canary",
          service: "checkout",
        }),
      );
      const loneAlert = await readAlert(h, auth, lone);
      expect([loneAlert.storm_id, loneAlert.impact_score, loneAlert.impact_explanation]).toEqual([
        null,
        70,
        "canary environment (env=canary) +50; service-wide scope (service=checkout) +20; not in a storm +0.",
      ]);
      // The default entries stay: production is still high.
      const production = await deliverOne(
        h,
        path,
        firing("c000000000000004", "09:20:00", {
          alertname: "HighRequestLatency",
          env: "production",
          service: "cart",
        }),
      );
      expect((await readAlert(h, auth, production)).impact_explanation).toBe(
        "production environment (env=production) +50; service-wide scope (service=cart) +20; not in a storm +0.",
      );

      // In a storm of two placed by the running correlator: 50 + cluster-wide 30 + fan-out 5.
      const blue = { cluster: "k8s-blue", env: "canary" };
      const first = await deliverOne(
        h,
        path,
        firing("c000000000000002", "09:21:00", { alertname: "KubeNodeNotReady", ...blue }),
      );
      const second = await deliverOne(
        h,
        path,
        firing("c000000000000003", "09:21:30", { alertname: "KubeApiErrorsHigh", ...blue }),
      );
      const members = await waitFor(async () => {
        const alerts = await Promise.all([readAlert(h, auth, first), readAlert(h, auth, second)]);
        return alerts[0]?.storm_id && alerts[0].storm_id === alerts[1]?.storm_id ? alerts : undefined;
      });
      expect(members.map((alert) => [alert.impact_score, alert.impact_explanation])).toEqual([
        [
          85,
          "canary environment (env=canary) +50; cluster- or region-wide scope (cluster=k8s-blue) +30; storm of 2 co-firing alerts +5.",
        ],
        [
          85,
          "canary environment (env=canary) +50; cluster- or region-wide scope (cluster=k8s-blue) +30; storm of 2 co-firing alerts +5.",
        ],
      ]);
    });
  },
  // ENVIRONMENT_CRITICALITY=canary=high: the entry is added to the default map.
  { environmentCriticality: { canary: "high" } },
  { now: () => new Date(clock.getTime()) },
);

describeEachEngine(
  "storms on an api-only Vigil (no correlator runs)",
  (harness) => {
    it("leaves delivered alerts pending until correlatePendingStorms places them", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "api-only" });
      const cluster = { cluster: "prod-eu-central-1", env: "production" };
      const lag = await deliverOne(
        h,
        path,
        firing("b000000000000001", "09:20:00", {
          alertname: "PostgresReplicationLag",
          ...cluster,
          instance: "pg-1:9187",
        }),
      );
      const latency = await deliverOne(
        h,
        path,
        firing("b000000000000002", "09:21:00", {
          alertname: "HighRequestLatency",
          ...cluster,
          service: "orders",
        }),
      );

      // Ingest scored them alone: production 50 + one host (instance) 10, + one service 20.
      expect([await stormFields(h, auth, lag), await stormFields(h, auth, latency)]).toEqual([
        [null, "unknown", null, 60],
        [null, "unknown", null, 70],
      ]);
      expect([await isPending(h, lag), await isPending(h, latency)]).toEqual([true, true]);

      expect(await settle(h)).toBe(2);
      const stormId = (await readAlert(h, auth, lag)).storm_id;
      expect(stormId).toMatch(UUID);
      // PostgresReplicationLag is data, HighRequestLatency application: storm of 2, fan-out 5.
      expect([await stormFields(h, auth, lag), await stormFields(h, auth, latency)]).toEqual([
        [stormId, "cause", null, 65],
        [stormId, "symptom", "PostgresReplicationLag", 75],
      ]);
      expect([await isPending(h, lag), await isPending(h, latency)]).toEqual([false, false]);
      expect(await stormHistory(h, auth, latency)).toEqual([
        ["created", "source", null, null],
        ["storm_joined", "vigil", stormId, null],
      ]);
    });

    it("correlates beside an alert stored with a trigger time at the end of year 9999", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "far" });
      const far = await deliverOne(
        h,
        path,
        firing("c000000000000001", "09:20:00", { alertname: "Far", cluster: "prod-far-1" }),
      );
      // Source times are now bounded at ingest; a row stored before keeps its time.
      await h.vigil.services.database.db.execute(
        sql`update alerts set triggered_at = '9999-12-31T23:59:59Z' where id = ${far}`,
      );
      await h.vigil.services.database.db.execute(
        sql`update alert_storm_queue set triggered_at = '9999-12-31T23:59:59Z' where alert_id = ${far}`,
      );
      const cluster = { cluster: "prod-near-1", env: "production" };
      const first = await deliverOne(
        h,
        path,
        firing("c000000000000002", "09:20:00", { alertname: "DiskFull", ...cluster, instance: "n-1" }),
      );
      const second = await deliverOne(
        h,
        path,
        firing("c000000000000003", "09:21:00", { alertname: "HighLatency", ...cluster, service: "api" }),
      );
      expect(await settle(h)).toBe(3);
      const stormId = (await readAlert(h, auth, first)).storm_id;
      expect(stormId).toMatch(UUID);
      expect((await readAlert(h, auth, second)).storm_id).toBe(stormId);
      expect([await isPending(h, far), await isPending(h, first)]).toEqual([false, false]);
    });

    it("takes a member whose cluster changes out of its storm, which dissolves", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "mover" });
      const node = firing("d000000000000001", "09:20:00", {
        alertname: "KubeNodeNotReady",
        cluster: "prod-us-west-2",
        env: "production",
        node: "node-1",
      });
      const errors = firing("d000000000000002", "09:21:00", {
        alertname: "HighErrorRate",
        cluster: "prod-us-west-2",
        env: "production",
        service: "cart",
      });
      const nodeId = await deliverOne(h, path, node);
      const errorsId = await deliverOne(h, path, errors);
      await settle(h);
      const stormId = (await readAlert(h, auth, nodeId)).storm_id;
      expect(stormId).toMatch(UUID);
      expect([await stormFields(h, auth, nodeId), await stormFields(h, auth, errorsId)]).toEqual([
        [stormId, "cause", null, 65],
        [stormId, "symptom", "KubeNodeNotReady", 75],
      ]);

      // The same alert (fingerprint) now reports another cluster.
      const moved = await deliverAlerts(
        h,
        path,
        amBody([{ ...errors, labels: { ...errors.labels, cluster: "prod-us-west-3" } }]),
      );
      expect(moved).toEqual([{ id: errorsId, outcome: "updated" }]);
      expect(await isPending(h, errorsId)).toBe(true);
      await settle(h);

      // One member left: the storm dissolves. Both alone: production 50 + host 10 / service 20.
      expect([await stormFields(h, auth, nodeId), await stormFields(h, auth, errorsId)]).toEqual([
        [null, "unknown", null, 60],
        [null, "unknown", null, 70],
      ]);
      expect(await stormHistory(h, auth, errorsId)).toEqual([
        ["created", "source", null, null],
        ["storm_joined", "vigil", stormId, null],
        ["updated", "source", null, null],
        ["storm_left", "vigil", null, stormId],
      ]);
      expect(await stormHistory(h, auth, nodeId)).toEqual([
        ["created", "source", null, null],
        ["storm_joined", "vigil", stormId, null],
        ["storm_left", "vigil", null, stormId],
      ]);
    });

    // README "Storms": "A resolved or ignored alert leaves its storm", also when an operator ignores it.
    it("takes a member an operator ignores out of its storm", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "ignored" });
      const cluster = { cluster: "prod-ca-central-1", env: "production" };
      const diskId = await deliverOne(
        h,
        path,
        firing("e000000000000001", "09:20:00", { alertname: "NodeDiskFull", ...cluster, node: "node-2" }),
      );
      const errorsId = await deliverOne(
        h,
        path,
        firing("e000000000000002", "09:21:00", { alertname: "HighErrorRate", ...cluster, service: "search" }),
      );
      const latencyId = await deliverOne(
        h,
        path,
        firing("e000000000000003", "09:22:00", {
          alertname: "HighRequestLatency",
          ...cluster,
          service: "search",
        }),
      );
      await settle(h);
      const stormId = (await readAlert(h, auth, diskId)).storm_id;
      expect(stormId).toMatch(UUID);
      // Storm of 3: fan-out 10. The disk (infrastructure) is the cause.
      expect(await Promise.all([diskId, errorsId, latencyId].map((id) => stormFields(h, auth, id)))).toEqual([
        [stormId, "cause", null, 70],
        [stormId, "symptom", "NodeDiskFull", 80],
        [stormId, "symptom", "NodeDiskFull", 80],
      ]);

      const patched = await h.vigil.app.inject({
        method: "PATCH",
        url: `/app/sre/api/v1/alerts/${latencyId}`,
        headers: auth,
        payload: { status: "ignored", ignore_reason: "known slow deploy" },
      });
      expect(patched.statusCode).toBe(200);
      expect(patched.json().status).toBe("ignored");
      await settle(h);

      // The ignored alert is alone (production 50 + service 20); the storm goes on with two (fan-out 5).
      expect(await Promise.all([diskId, errorsId, latencyId].map((id) => stormFields(h, auth, id)))).toEqual([
        [stormId, "cause", null, 65],
        [stormId, "symptom", "NodeDiskFull", 75],
        [null, "unknown", null, 70],
      ]);
      const left = (await stormHistory(h, auth, latencyId)).filter(([kind]) => kind === "storm_left");
      expect(left).toEqual([["storm_left", "vigil", null, stormId]]);
    });

    it("does not mark a duplicate delivery, and marks a label change", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "renotify" });
      const cluster = { cluster: "prod-sa-east-1", env: "production" };
      const alerts = [
        firing("f000000000000001", "09:20:00", {
          alertname: "RedisDown",
          ...cluster,
          instance: "redis-0:9121",
        }),
        firing("f000000000000002", "09:21:00", {
          alertname: "HighRequestLatency",
          ...cluster,
          service: "sessions",
          severity: "warning",
        }),
      ];
      const body = amBody(alerts);
      const [redis, latency] = (await deliverAlerts(h, path, body)).map((alert) => alert.id) as [
        string,
        string,
      ];
      expect(await settle(h)).toBe(2);
      const stormId = (await readAlert(h, auth, redis)).storm_id;
      expect(stormId).toMatch(UUID);
      expect([await isPending(h, redis), await isPending(h, latency)]).toEqual([false, false]);

      // Alertmanager re-sends the group unchanged: a duplicate, nothing written, nothing marked.
      expect(await deliverAlerts(h, path, body)).toEqual([
        { id: redis, outcome: "duplicate" },
        { id: latency, outcome: "duplicate" },
      ]);
      expect([await isPending(h, redis), await isPending(h, latency)]).toEqual([false, false]);

      const [, latencyAlert] = alerts as [AmAlert, AmAlert];
      // A label change is something storms read: marked, and settled again into the same storm.
      expect(
        await deliverAlerts(
          h,
          path,
          amBody([{ ...latencyAlert, labels: { ...latencyAlert.labels, severity: "critical" } }]),
        ),
      ).toEqual([{ id: latency, outcome: "updated" }]);
      expect(await isPending(h, latency)).toBe(true);
      expect(await settle(h)).toBe(1);
      expect(await isPending(h, latency)).toBe(false);
      // RedisDown is data, HighRequestLatency application: storm of 2 (fan-out 5), production 50,
      // one host (instance) 10 / one service 20.
      expect([await stormFields(h, auth, redis), await stormFields(h, auth, latency)]).toEqual([
        [stormId, "cause", null, 65],
        [stormId, "symptom", "RedisDown", 75],
      ]);
    });

    // Stored labels come back in jsonb key order, delivered ones in payload order: still the same labels.
    it("does not mark a re-notification that changes only the description", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "description" });
      const cluster = { cluster: "prod-me-south-1", env: "production" };
      const queue = firing("g000000000000001", "09:20:00", { alertname: "KafkaConsumerLag", ...cluster });
      const latency = firing("g000000000000002", "09:21:00", {
        alertname: "HighRequestLatency",
        ...cluster,
        service: "feeds",
      });
      const [, latencyId] = (await deliverAlerts(h, path, amBody([queue, latency]))).map((alert) => alert.id);
      expect(await settle(h)).toBe(2);
      expect(await isPending(h, latencyId as string)).toBe(false);

      // Same title, trigger time and labels; only the summary (the description) is new.
      expect(
        await deliverAlerts(h, path, amBody([{ ...latency, summary: "p99 above 2s for 5 minutes" }])),
      ).toEqual([{ id: latencyId, outcome: "updated" }]);
      expect(await isPending(h, latencyId as string)).toBe(false);
    });

    it("correlates every pending scope in one pass, whatever characters the scope holds", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "many-scopes" });
      const clusters = ['k8s-"quoted"', "back\\slash,{comma}", "plain-1"];
      const ids = await Promise.all(
        clusters.flatMap((cluster, n) =>
          ["KubeNodeNotReady", "KubeApiErrorsHigh"].map((alertname, k) =>
            deliverOne(h, path, firing(`e0000000000000${n}${k}`, `09:2${k}:00`, { alertname, cluster })),
          ),
        ),
      );
      expect(await settle(h)).toBe(6);
      const storms = await Promise.all(ids.map(async (id) => (await readAlert(h, auth, id)).storm_id));
      for (let n = 0; n < clusters.length; n++) {
        expect(storms[2 * n]).toMatch(/^[0-9a-f-]{36}$/);
        expect(storms[2 * n + 1]).toBe(storms[2 * n]);
      }
      expect(new Set(storms).size).toBe(3);
      for (const id of ids) expect(await isPending(h, id)).toBe(false);
    });

    it("correlates every other scope when one fails, and reports the one that failed", async () => {
      const h = harness();
      const { db } = h.vigil.services.database;
      const scopes = ["prod-poison", "prod-fine"];
      const delivered = new Map<string, { auth: Auth; ids: string[] }>();
      for (const tenant of ["first", "second"]) {
        const { auth } = await h.createKey();
        const path = await registerTrigger(h, auth, {
          source: "alertmanager",
          integration: `isolated-${tenant}`,
        });
        for (const [n, cluster] of scopes.entries()) {
          const ids = await Promise.all(
            ["KubeNodeNotReady", "KubeApiErrorsHigh"].map((alertname, k) =>
              deliverOne(
                h,
                path,
                firing(`f0000000000${tenant.length}${n}${k}`, `09:2${k}:00`, { alertname, cluster }),
              ),
            ),
          );
          delivered.set(`${tenant} ${cluster}`, { auth, ids });
        }
      }
      // A scope whose correlation the database refuses, whatever the reason.
      await db.execute(sql`create function refuse_poison() returns trigger language plpgsql as $$
        begin
          if old.storm_scope = 'cluster:prod-poison' then raise exception 'this scope cannot be correlated'; end if;
          return old;
        end $$`);
      await db.execute(sql`create trigger refuse_poison before delete on alert_storm_queue
        for each row execute function refuse_poison()`);
      try {
        const failure = await settle(h).then(
          () => null,
          (err: unknown) => err,
        );
        expect(failure).toBeInstanceOf(StormCorrelationError);
        expect((failure as StormCorrelationError).failures.map(({ scope }) => scope)).toEqual([
          "cluster:prod-poison",
          "cluster:prod-poison",
        ]);
        for (const [name, { auth, ids }] of delivered) {
          const storms = await Promise.all(ids.map(async (id) => (await readAlert(h, auth, id)).storm_id));
          if (name.endsWith("prod-poison")) {
            for (const id of ids) expect(await isPending(h, id), name).toBe(true);
          } else {
            expect(storms[0], name).toMatch(UUID);
            expect(storms[1], name).toBe(storms[0]);
          }
        }
      } finally {
        await db.execute(sql`drop trigger refuse_poison on alert_storm_queue`);
        await db.execute(sql`drop function refuse_poison()`);
      }
      expect(await settle(h)).toBe(4);
      for (const [name, { ids }] of delivered) {
        for (const id of ids) expect(await isPending(h, id), name).toBe(false);
      }
    });

    it("writes no alert row for a look that changes nothing, and drops an entry its alert's move outdated", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const path = await registerTrigger(h, auth, { source: "alertmanager", integration: "quiet" });
      const { db } = h.vigil.services.database;
      const version = async (id: string) =>
        (await db.execute(sql`select xmin::text as v from alerts where id = ${id}`)).rows[0]?.v;
      // Alone in its scope: the correlator finds no storm to place it in.
      const lone = firing("h000000000000001", "09:20:00", { alertname: "NodeDown", cluster: "prod-af-1" });
      const loneId = await deliverOne(h, path, lone);
      const before = await version(loneId);
      expect(await isPending(h, loneId)).toBe(true);
      expect(await settle(h)).toBe(1);
      expect(await isPending(h, loneId)).toBe(false);
      expect(await version(loneId)).toBe(before);

      // Queued under one cluster, then moved to another before any look: two entries, the first
      // outdated. One pass removes both and places the alert where it is now, beside a co-firing one.
      const first = firing("h000000000000002", "09:21:00", {
        alertname: "KubeApiDown",
        cluster: "prod-af-2",
      });
      const movedId = await deliverOne(h, path, first);
      await deliverOne(h, path, { ...first, labels: { ...first.labels, cluster: "prod-af-3" } });
      const neighbour = await deliverOne(
        h,
        path,
        firing("h000000000000003", "09:22:00", { alertname: "KubeNodeNotReady", cluster: "prod-af-3" }),
      );
      const { rows } = await db.execute(
        sql`select storm_scope from alert_storm_queue where alert_id = ${movedId} order by seq`,
      );
      expect(rows.map((row) => row.storm_scope)).toEqual(["cluster:prod-af-2", "cluster:prod-af-3"]);
      expect(await settle(h)).toBe(3);
      expect(await isPending(h, movedId)).toBe(false);
      const [moved, beside] = [await readAlert(h, auth, movedId), await readAlert(h, auth, neighbour)];
      expect(moved.storm_id).toMatch(UUID);
      expect(beside.storm_id).toBe(moved.storm_id);
    });
  },
  { role: "api" },
  { now: () => new Date(clock.getTime()) },
);
