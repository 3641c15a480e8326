// Automatic triage end to end: alerts arrive through the trigger, wait in their bucket, and the
// classification job (real workers) stores attention, reasons, summary and first investigation.
import { sql } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";
import {
  amBody,
  deliver,
  deliverIds,
  readAlert,
  readHistory,
  registerAlerts,
  registerTrigger,
} from "../../../test/alerts.ts";
import { parseSharedFixture, readFixture } from "../../../test/fixtures.ts";
import { type Auth, describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import { concurrencyGate, startOpenAiStub } from "../../../test/openai-stub.ts";
import { boundArray } from "../../core/db/bound-array.ts";
import type { Db, Tx } from "../../core/db/database.ts";
import { applyAlertBatches, HISTORY_LIMIT } from "../ingest/ingest.ts";
import { type AlertRow, planAlertChange } from "../ingest/lifecycle.ts";
import { PARSERS } from "../sources/index.ts";
import type { AlertEvent, ParseResult } from "../sources/types.ts";
import { ALERTS_PER_ROUND, classifyAlertsJob, LLM_ALERTS_PER_ROUND, PEERS_LISTED } from "./classify-job.ts";
import { type TriageSettings, triageBucketOf } from "./triage.ts";
import { setTriageWorkflowPort, type TriageRunInput, triageWorkflowPort } from "./triage-workflow.ts";

/** Firing Alertmanager alerts, starting now, each summarised "<name> is firing". */
function firingBody(alerts: { name: string; severity: string; labels?: Record<string, string> }[]) {
  return amBody(
    alerts.map((alert) => ({
      status: "firing",
      fingerprint: `fp-${alert.name.toLowerCase()}`,
      startsAt: new Date().toISOString(),
      labels: { alertname: alert.name, severity: alert.severity, ...alert.labels },
      summary: `${alert.name} is firing`,
    })),
  );
}

/** The job context a worker hands the classification job, on the given database handle. */
/**
 * The batch window passes without waiting it out: the classification jobs waiting for the tenant
 * of `integration` become due now, once checked to be due `seconds` after the delivery made
 * between `sentAt` and `answeredAt`.
 */
async function windowPasses(
  h: Harness,
  integration: string,
  { seconds, sentAt, answeredAt }: { seconds: number; sentAt: number; answeredAt: number },
) {
  const { rows } = await h.vigil.services.database.db.execute(sql`
    with waiting as (
      select id, start_after from pgboss.job
      where name = ${classifyAlertsJob.name} and state = 'created' and start_after > now()
        and data->>'ownerId' in (select owner_id::text from alert_webhooks where integration = ${integration})
      for update)
    update pgboss.job as job set start_after = now() from waiting where job.id = waiting.id
    returning waiting.start_after`);
  expect(rows.length).toBeGreaterThan(0);
  for (const row of rows) {
    const due = new Date(row.start_after as string).getTime();
    // A second either way: the database's clock is read in milliseconds, Node's too.
    expect(due).toBeGreaterThanOrEqual(sentAt + seconds * 1000 - 1000);
    expect(due).toBeLessThanOrEqual(answeredAt + seconds * 1000 + 1000);
  }
}

function jobContext(h: Harness, db: Db) {
  const { services } = h.vigil;
  return {
    ...services,
    db,
    log: h.vigil.log,
    enqueue: services.queue.enqueue,
    enqueueMany: services.queue.enqueueMany,
  };
}

// ---- buckets, as pure units: rows built from parsed events as ingest builds them ----

function rowsOf(sourceType: string, parsed: ParseResult): AlertRow[] {
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.events.map((event: AlertEvent, n: number) => {
    const { next } = planAlertChange(null, event, {
      scope: { orgId: null, ownerId: "owner", sourceType, integrationName: "", webhookId: null },
      receivedAt: new Date("2024-05-14T10:00:00.000Z"),
      via: "push",
      rawPayloadId: null,
      eventHash: `event-${n}`,
    });
    if (!next) throw new Error("a new alert has a row");
    return next;
  });
}

function amRows(labels: Record<string, string>[]): AlertRow[] {
  const body = firingBody(labels.map((set, n) => ({ name: `Alert${n}`, severity: "warning", labels: set })));
  return rowsOf("alertmanager", PARSERS.alertmanager({ body, headers: {}, options: {} }));
}

const byService: TriageSettings = {
  mode: "batch",
  windowSeconds: 60,
  bucketBy: "service",
  criticalBypass: false,
};

describe("triage buckets", () => {
  it("names a service bucket from the label vocabulary: service in any spelling, else job, component, check", () => {
    const rows = [
      ...amRows([
        { Service: "Checkout" },
        { service_name: "cart" },
        { app: "web", job: "node" },
        { job: "node-exporter" },
        { instance: "10.0.0.1:9100" },
      ]),
      ...rowsOf("zabbix", parseSharedFixture("zabbix", "keep-script-problem-high.json")),
      ...rowsOf("checkmk", parseSharedFixture("checkmk", "keep-script-service-problem-critical.json")),
    ];
    expect(rows.map((row) => triageBucketOf(row, byService).key)).toEqual([
      "batch:service:service:checkout",
      "batch:service:service:cart",
      "batch:service:service:web",
      "batch:service:service:node-exporter",
      // No service: it waits the window with its source's other such alerts.
      "batch:service:unscoped:alertmanager/",
      // Zabbix's component tag: cpu.
      "batch:service:service:cpu",
      // Checkmk's service is a check of a host, the last resort.
      "batch:service:service:filesystem /var/lib/postgresql",
    ]);
  });

  it("reads labels named like Object.prototype members as ordinary labels", () => {
    const named = JSON.parse('{"constructor":"a","__proto__":"b","toString":"c","hasOwnProperty":"d"}');
    const rows = amRows([named, { ...named, service: "constructor" }, { ...named, cluster: "__proto__" }]);
    // Alertmanager drops `__` keys (Prometheus' internal labels); the others are labels.
    expect(Object.keys(rows[0]?.labels ?? {}).sort()).toEqual([
      "alertname",
      "constructor",
      "hasOwnProperty",
      "severity",
      "toString",
    ]);
    expect(rows.map((row) => triageBucketOf(row, byService).key)).toEqual([
      "batch:service:unscoped:alertmanager/",
      "batch:service:service:constructor",
      "batch:service:unscoped:alertmanager/",
    ]);
    const byScope: TriageSettings = { ...byService, bucketBy: "storm_scope" };
    expect(rows.map((row) => triageBucketOf(row, byScope).key)).toEqual([
      "batch:storm_scope:unscoped:alertmanager/",
      "batch:storm_scope:service:constructor",
      "batch:storm_scope:cluster:__proto__",
    ]);
  });
});

describeEachEngine("automatic triage", (harness) => {
  const settled = (h: Harness, auth: Auth, id: string) =>
    waitFor(async () => {
      const alert = await readAlert(h, auth, id);
      return ["completed", "failed"].includes(alert.analysis_status) ? alert : undefined;
    }, 30_000);

  it("classifies a symptom again when its storm's cause resolves: its attention no longer points at the cause", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "role-change",
      classify_mode: "immediate",
    });
    const labels = { env: "production", cluster: "eu-7" };
    const fired = await deliver(
      h,
      url,
      firingBody([
        { name: "PostgresDown", severity: "critical", labels },
        { name: "HighRequestLatency", severity: "warning", labels },
      ]),
    );
    const [, latencyId] = fired.json().alerts.map((alert: { id: string }) => alert.id);
    const symptom = await waitFor(async () => {
      const alert = await readAlert(h, auth, latencyId);
      return alert.analysis_status === "completed" && alert.alert_role === "symptom" ? alert : undefined;
    }, 60_000);
    expect(symptom.attention_reason).toBe('symptom of a storm: look at "PostgresDown" first');
    const resolved = amBody([
      {
        status: "resolved",
        fingerprint: "fp-postgresdown",
        startsAt: new Date(Date.now() - 60_000).toISOString(),
        endsAt: new Date().toISOString(),
        labels: { alertname: "PostgresDown", severity: "critical", ...labels },
      },
    ]);
    expect((await deliver(h, url, resolved)).statusCode).toBe(202);
    const alone = await waitFor(async () => {
      const alert = await readAlert(h, auth, latencyId);
      return alert.analysis_status === "completed" && alert.alert_role !== "symptom" ? alert : undefined;
    }, 60_000);
    const reclassified = await waitFor(async () => {
      const alert = await readAlert(h, auth, latencyId);
      return alert.analysis_status === "completed" && !alert.attention_reason?.startsWith("symptom")
        ? alert
        : undefined;
    }, 60_000);
    expect(alone.storm_id).toBeNull();
    expect(reclassified).toMatchObject({
      attention: "needs_review",
      attention_reason: "Medium severity, in production",
    });
    const { events } = await readHistory(h, auth, latencyId);
    const kinds = events.map((event) => event.kind);
    expect(kinds.filter((kind) => kind === "classified")).toHaveLength(2);
    expect(kinds.indexOf("storm_left")).toBeLessThan(kinds.lastIndexOf("classified"));
  });

  it("reads episode lengths from the source's times, not from when the deliveries arrived", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "episodes",
      classify_mode: "immediate",
    });
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    /** Two past episodes of `minutes` each, then firing again: five deliveries in a row. */
    const flap = async (name: string, minutes: number) => {
      const labels = { alertname: name, severity: "warning", service: name.toLowerCase() };
      const fingerprint = `fp-${name.toLowerCase()}`;
      for (const start of [120, 60]) {
        const startsAt = minutesAgo(start);
        await deliverIds(h, url, amBody([{ status: "firing", fingerprint, startsAt, labels }]));
        const endsAt = minutesAgo(start - minutes);
        await deliverIds(h, url, amBody([{ status: "resolved", fingerprint, startsAt, endsAt, labels }]));
      }
      const [id] = await deliverIds(
        h,
        url,
        amBody([{ status: "firing", fingerprint, startsAt: minutesAgo(5), labels }]),
      );
      return waitFor(async () => {
        const { events } = await readHistory(h, auth, id as string);
        const seqOf = (kind: string) =>
          Math.max(...events.filter((event) => event.kind === kind).map((event) => Number(event.seq)));
        if (!(seqOf("classified") > seqOf("refired"))) return undefined;
        const alert = await readAlert(h, auth, id as string);
        return alert.analysis_status === "completed" ? alert : undefined;
      }, 60_000);
    };
    // Ten-minute episodes are not noise, however fast their notifications came.
    const slow = await flap("QueueBacklog", 10);
    expect(slow.attention).not.toBe("false_positive");
    expect(slow.attention_reason).not.toMatch(/resolved on their own/);
    // One-minute episodes are.
    const quick = await flap("DiskLatency", 1);
    expect(quick).toMatchObject({
      attention: "false_positive",
      attention_reason: "likely noise: 2 episodes resolved on their own within 5 minutes",
    });
  });

  it("classifies an alert at once in immediate mode, with its history", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "immediate",
      classify_mode: "immediate",
    });
    const body = firingBody([
      { name: "PostgresDown", severity: "critical", labels: { env: "production", cluster: "eu-1" } },
    ]);
    const delivered = await deliver(h, url, body);
    const id = delivered.json().alerts[0].id;
    const alert = await settled(h, auth, id);
    expect(alert).toMatchObject({
      analysis_status: "completed",
      attention: "needs_attention",
      attention_reason: "Critical severity, in production",
      short_summary: "PostgresDown: needs attention (Critical severity, in production)",
    });
    expect(alert.initial_investigation).toMatch(/^Hypotheses:\n- an instance crashed or lost connectivity\n/);
    expect(alert.initial_investigation).toContain(
      "Related signals:\n- production environment (env=production)",
    );
    const { events } = await readHistory(h, auth, id);
    expect(events.map((event) => [event.kind, event.actor])).toEqual([
      ["created", "source"],
      ["classified", "vigil"],
    ]);
    expect(events[1]?.detail).toEqual({
      step: "sre_classify_alert_criticality",
      attention: "needs_attention",
      reason: "Critical severity, in production",
    });
  });

  it("never classifies a test notification", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, { source: "grafana", classify_mode: "immediate" });
    const fixture = readFixture("grafana", "v12-test-notification.json");
    const delivered = await deliver(h, url, fixture);
    const [first] = delivered.json().alerts;
    const { rows } = await h.vigil.services.database.db.execute(
      sql`select count(*)::int as n from pgboss.job where name = 'alerts.classify' and data->'buckets' ? ${`alert:${first.id}`}`,
    );
    expect(Number(rows[0]?.n)).toBe(0);
    expect((await readAlert(h, auth, first.id)).analysis_status).toBe("none");
  });

  it("batches a scope's alerts over the window, and lets a critical alert through at once", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "batch",
      classify_mode: "batch",
      classify_batch_window_seconds: 15,
      classify_bucket_by: "storm_scope",
      classify_critical_bypass: true,
    });
    const labels = { cluster: "prod-eu-2", env: "production" };
    const sentAt = Date.now();
    const delivered = await deliver(
      h,
      url,
      firingBody([
        { name: "ApiLatencyHigh", severity: "warning", labels },
        { name: "ApiErrorRateHigh", severity: "warning", labels },
        { name: "NodeDiskFull", severity: "critical", labels },
        // No scope at all: it still waits for the window, alone in its source's bucket.
        { name: "Heartbeat", severity: "warning", labels: {} },
      ]),
    );
    const answeredAt = Date.now();
    const [latency, errors, disk, heartbeat] = delivered
      .json()
      .alerts.map((alert: { id: string }) => alert.id);
    const critical = await settled(h, auth, disk);
    expect(critical.analysis_status).toBe("completed");
    // The critical alert went straight through; the others still wait for the window.
    expect((await readAlert(h, auth, latency)).analysis_status).toBe("queued");
    expect((await readAlert(h, auth, errors)).analysis_status).toBe("queued");
    expect((await readAlert(h, auth, heartbeat)).analysis_status).toBe("queued");
    await windowPasses(h, "batch", { seconds: 15, sentAt, answeredAt });
    const batched = await Promise.all([settled(h, auth, latency), settled(h, auth, errors)]);
    for (const alert of batched) {
      expect(alert.analysis_status).toBe("completed");
      expect(alert.initial_investigation).toContain("classified together with 1 alert(s)");
    }
    expect(batched[0].initial_investigation).toContain("ApiErrorRateHigh (Medium)");
    const alone = await settled(h, auth, heartbeat);
    expect(alone.analysis_status).toBe("completed");
    expect(alone.initial_investigation).not.toContain("classified together");
  }, 60_000);

  it("queues one job for a group's buckets due now and one per waiting bucket and window, never one per delivery", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const registration = await registerAlerts(h, auth, {
      source: "alertmanager",
      integration: "grouped",
      classify_mode: "batch",
      classify_batch_window_seconds: 60,
      classify_bucket_by: "storm_scope",
      classify_critical_bypass: true,
    });
    const { database, queue } = h.vigil.services;
    const [owner] = (
      await database.db.execute(
        sql`select owner_id, org_id from alert_webhooks where id = ${registration.id}`,
      )
    ).rows;
    const scope = {
      orgId: (owner?.org_id as string | null) ?? null,
      ownerId: String(owner?.owner_id),
      sourceType: "alertmanager",
      integrationName: "grouped",
      webhookId: registration.id,
    };
    const settings: TriageSettings = {
      mode: "batch",
      windowSeconds: 60,
      bucketBy: "storm_scope",
      criticalBypass: true,
    };
    const batchOf = (alerts: { name: string; severity: string; cluster: string }[]) => {
      const body = firingBody(alerts.map((alert) => ({ ...alert, labels: { cluster: alert.cluster } })));
      const parsed = PARSERS.alertmanager({ body, headers: {}, options: {} });
      if (!parsed.ok) throw new Error(parsed.error);
      return {
        scope,
        events: parsed.events,
        receivedAt: new Date(),
        via: "push" as const,
        rawPayload: body,
        invocationId: null,
        triage: settings,
      };
    };
    // Each alert's bucket is read in the transaction that queued it: once it commits, a worker may
    // classify the critical ones at once, which clears their bucket.
    const applyTogether = (batches: ReturnType<typeof batchOf>[]) =>
      database.transaction(async (tx) => {
        const results = await applyAlertBatches(tx, batches, { enqueueMany: queue.enqueueMany });
        const { rows } = await tx.execute(
          sql`select id, triage_bucket from alerts where id = any(${boundArray(
            results.flat().map(({ id }) => id),
            "uuid",
          )})`,
        );
        const buckets = new Map(rows.map((row) => [String(row.id), String(row.triage_bucket)]));
        return results.map((delivery) => delivery.map(({ id }) => buckets.get(id)));
      });
    const jobs = async () =>
      (
        await database.db.execute(sql`
          select data->'buckets' as buckets, singleton_key, singleton_on, start_after > now() as waits
          from pgboss.job where name = 'alerts.classify' and data->>'ownerId' = ${scope.ownerId}
          order by singleton_key nulls first, singleton_on`)
      ).rows.map((row) => ({ buckets: row.buckets, singletonKey: row.singleton_key, waits: row.waits }));
    const tenantKey = scope.orgId ?? scope.ownerId;

    // Three deliveries in one transaction: the critical alerts go through at once, in one job; the
    // others wait in two buckets, one job each.
    const [first, second, third] = await applyTogether([
      batchOf([
        { name: "LatencyA", severity: "warning", cluster: "grouped-a" },
        { name: "DiskA", severity: "critical", cluster: "grouped-a" },
      ]),
      batchOf([
        { name: "LatencyB", severity: "warning", cluster: "grouped-b" },
        { name: "DiskB", severity: "critical", cluster: "grouped-b" },
      ]),
      batchOf([{ name: "ErrorsA", severity: "warning", cluster: "grouped-a" }]),
    ]);
    const [bucketA, aloneA, bucketB, aloneB, bucketA2] = [
      first?.[0],
      first?.[1],
      second?.[0],
      second?.[1],
      third?.[0],
    ];
    expect(bucketA2).toBe(bucketA);
    expect(new Set([bucketA, aloneA, bucketB, aloneB]).size).toBe(4);
    expect(await jobs()).toEqual([
      { buckets: [aloneA, aloneB].sort(), singletonKey: null, waits: false },
      { buckets: [bucketA], singletonKey: `${tenantKey}|${bucketA}`, waits: true },
      { buckets: [bucketB], singletonKey: `${tenantKey}|${bucketB}`, waits: true },
    ]);

    // A later group fills bucket A again and a new bucket C: C gets its job; A's waiting job covers
    // the new alert (a second job of A only when the window turned meanwhile, in a new window).
    const [laterDelivery] = await applyTogether([
      batchOf([
        { name: "SaturationA", severity: "warning", cluster: "grouped-a" },
        { name: "LatencyC", severity: "warning", cluster: "grouped-c" },
      ]),
    ]);
    expect(laterDelivery?.[0]).toBe(bucketA);
    const { rows: windows } = await database.db.execute(sql`
      select singleton_key, count(*)::int as jobs, count(distinct singleton_on)::int as windows from pgboss.job
      where name = 'alerts.classify' and data->>'ownerId' = ${scope.ownerId} and singleton_key is not null
      group by singleton_key order by singleton_key`);
    const bucketC = "batch:storm_scope:cluster:grouped-c";
    expect(windows.map((row) => row.singleton_key)).toEqual(
      [bucketA, bucketB, bucketC].map((bucket) => `${tenantKey}|${bucket}`).sort(),
    );
    for (const row of windows) expect(row.jobs).toBe(row.windows);
  });

  it("keeps an analyst's attention set while the alert waited in its batch window, until asked to classify again", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "analyst",
      classify_mode: "batch",
      classify_batch_window_seconds: 15,
      classify_critical_bypass: false,
    });
    const labels = { cluster: "prod-eu-3", env: "production" };
    const sentAt = Date.now();
    const delivered = await deliver(
      h,
      url,
      firingBody([{ name: "NoisyRule", severity: "critical", labels }]),
    );
    const answeredAt = Date.now();
    const id = delivered.json().alerts[0].id;
    expect((await readAlert(h, auth, id)).analysis_status).toBe("queued");
    const patched = await h.vigil.app.inject({
      method: "PATCH",
      url: `/app/sre/api/v1/alerts/${id}`,
      headers: auth,
      payload: { attention: "false_positive", attention_reason: "known noisy rule" },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await readAlert(h, auth, id)).analysis_status).toBe("queued");
    await windowPasses(h, "analyst", { seconds: 15, sentAt, answeredAt });
    const classified = await settled(h, auth, id);
    expect(classified).toMatchObject({
      analysis_status: "completed",
      attention: "false_positive",
      attention_reason: "known noisy rule",
    });
    expect(classified.short_summary).toContain("NoisyRule");
    const { events } = await readHistory(h, auth, id);
    expect(events.at(-1)).toMatchObject({ kind: "classified", detail: { operator_attention_kept: true } });

    const again = await h.vigil.app.inject({
      method: "POST",
      url: `/app/sre/api/v1/alerts/${id}/classify`,
      headers: auth,
    });
    expect(again.statusCode).toBe(202);
    expect(await settled(h, auth, id)).toMatchObject({
      attention: "needs_attention",
      attention_reason: "Critical severity, in production",
    });
    const after = (await readHistory(h, auth, id)).events.map((event) => event.kind);
    expect(after.slice(-2)).toEqual(["reclassify_requested", "classified"]);
  }, 60_000);

  it("classifies again an active alert whose severity a later event changes within its episode", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "escalated",
      classify_mode: "immediate",
    });
    const startsAt = new Date().toISOString();
    const body = (severity: string) =>
      amBody([
        {
          status: "firing",
          fingerprint: "fp-escalated",
          startsAt,
          labels: { alertname: "QueueBacklog", severity, env: "production" },
        },
      ]);
    const id = (await deliver(h, url, body("info"))).json().alerts[0].id;
    expect((await settled(h, auth, id)).attention).not.toBe("needs_attention");
    const escalated = await deliver(h, url, body("critical"));
    expect(escalated.json().alerts[0]).toMatchObject({ id, outcome: "updated" });
    expect(await settled(h, auth, id)).toMatchObject({
      attention: "needs_attention",
      attention_reason: "Critical severity, in production",
    });
    // The same severity again changes nothing: no classification is queued.
    const repeated = await deliver(h, url, body("critical"));
    expect(repeated.json().alerts[0].outcome).toBe("duplicate");
    expect((await readAlert(h, auth, id)).analysis_status).toBe("completed");
  });

  it("classifies again on request", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "again",
      classify_mode: "immediate",
    });
    const delivered = await deliver(h, url, firingBody([{ name: "Again", severity: "info" }]));
    const id = delivered.json().alerts[0].id;
    await settled(h, auth, id);
    const again = await h.vigil.app.inject({
      method: "POST",
      url: `/app/sre/api/v1/alerts/${id}/classify`,
      headers: auth,
    });
    expect(again.statusCode).toBe(202);
    expect(again.json().analysis_status).toBe("queued");
    expect((await settled(h, auth, id)).attention).toBe("others");
    const missing = await h.vigil.app.inject({
      method: "POST",
      url: "/app/sre/api/v1/alerts/nope/classify",
      headers: auth,
    });
    expect(missing.statusCode).toBe(404);
  });

  it("marks the bucket failed after the last attempt, and retries before it", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "failing",
      classify_mode: "immediate",
    });
    const delivered = await deliver(h, url, firingBody([{ name: "Flaky", severity: "warning" }]));
    const id = delivered.json().alerts[0].id;
    await settled(h, auth, id);
    const { db } = h.vigil.services.database;
    const bucket = "manual:failing";
    await db.execute(
      sql`update alerts set analysis_status = 'queued', triage_bucket = ${bucket} where id = ${id}`,
    );
    // A database whose first claim fails, made alone or in a transaction.
    let calls = 0;
    const failingFirstClaim = <T extends Pick<Db, "execute">>(executor: T): T =>
      new Proxy(executor, {
        get(target, property, receiver) {
          if (property === "transaction") {
            return (fn: (tx: Tx) => Promise<unknown>) =>
              (target as unknown as Db).transaction((tx) => fn(failingFirstClaim(tx)));
          }
          if (property !== "execute") return Reflect.get(target, property, receiver);
          return (...args: Parameters<Db["execute"]>) => {
            const claim = JSON.stringify(args[0]).includes("claimed_bucket");
            if (claim) calls += 1;
            if (claim && calls === 1) return Promise.reject(new Error("connection reset"));
            return target.execute(...args);
          };
        },
      });
    const ctx = jobContext(h, failingFirstClaim(db));
    const data = { orgId: null, ownerId: (await ownerOf(h, id)) as string, buckets: [bucket] };
    await expect(classifyAlertsJob.handler({ ctx, data, attempt: 1 })).rejects.toThrow("connection reset");
    expect((await readAlert(h, auth, id)).analysis_status).toBe("queued");
    calls = 0;
    await classifyAlertsJob.handler({ ctx, data, attempt: 4 });
    expect((await readAlert(h, auth, id)).analysis_status).toBe("failed");
  });

  it("claims only its own tenant's alerts from a bucket whose name another tenant's alerts share", async () => {
    const h = harness();
    const tenants = [];
    for (const name of ["first", "second"]) {
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: name,
        classify_mode: "immediate",
      });
      const delivered = await deliver(h, url, firingBody([{ name: "SharedBucket", severity: "warning" }]));
      const id = delivered.json().alerts[0].id as string;
      await settled(h, auth, id);
      tenants.push({ auth, id });
    }
    const [first, second] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];
    const { db } = h.vigil.services.database;
    // Bucket names hold no tenant: both alerts wait in a bucket of the same name.
    const bucket = "batch:storm_scope:shared";
    for (const { id } of tenants) {
      await db.execute(
        sql`update alerts set analysis_status = 'queued', triage_bucket = ${bucket} where id = ${id}`,
      );
    }
    const data = { orgId: null, ownerId: (await ownerOf(h, first.id)) as string, buckets: [bucket] };
    await classifyAlertsJob.handler({ ctx: jobContext(h, db), data, attempt: 1 });
    expect((await readAlert(h, first.auth, first.id)).analysis_status).toBe("completed");
    expect((await readAlert(h, second.auth, second.id)).analysis_status).toBe("queued");
  });
});

// With no correlator running (role api), the job itself places the bucket's alerts in their storm
// before classifying: the latency alert is classified as the database outage's symptom.
describeEachEngine(
  "classification correlates its bucket first",
  (harness) => {
    it("classifies a symptom as a symptom even before the correlator loop ran", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "storm-first",
        classify_mode: "immediate",
      });
      const cluster = { cluster: "eu-2", env: "staging" };
      const delivered = await deliver(
        h,
        url,
        firingBody([
          { name: "PostgresDown", severity: "critical", labels: cluster },
          { name: "HighRequestLatency", severity: "warning", labels: cluster },
        ]),
      );
      const [, latencyId] = delivered.json().alerts.map((alert: { id: string }) => alert.id);
      const before = await readAlert(h, auth, latencyId);
      expect([before.storm_id, before.analysis_status]).toEqual([null, "queued"]);
      const data = {
        orgId: null,
        ownerId: (await ownerOf(h, latencyId)) as string,
        buckets: [`alert:${latencyId}`],
      };
      await classifyAlertsJob.handler({ ctx: jobContext(h, h.vigil.services.database.db), data, attempt: 1 });
      const after = await readAlert(h, auth, latencyId);
      expect(after.storm_id).toMatch(/^[0-9a-f-]{36}$/);
      expect([after.alert_role, after.likely_upstream, after.analysis_status]).toEqual([
        "symptom",
        "PostgresDown",
        "completed",
      ]);
      expect(after.attention_reason).toBe('symptom of a storm: look at "PostgresDown" first');
    });

    it("keeps an analyst's attention through a long episode whose history dropped the analyst's change", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "long-episode",
        classify_mode: "immediate",
      });
      const startsAt = "2026-11-22T10:00:00Z";
      const body = (value: number) =>
        amBody([
          {
            status: "firing",
            fingerprint: "long-episode-1",
            startsAt,
            labels: { alertname: "DiskFilling", severity: "critical", env: "production" },
            summary: `disk at ${value}%`,
          },
        ]);
      const [id] = await deliverIds(h, url, body(0));
      const patched = await h.vigil.app.inject({
        method: "PATCH",
        url: `/app/sre/api/v1/alerts/${id}`,
        headers: auth,
        payload: { attention: "others", attention_reason: "expected during the migration" },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      // Every re-notification with a new value is a change in the history, which keeps the newest
      // HISTORY_LIMIT: the analyst's change and the episode's start fall out of it.
      for (let value = 1; value <= HISTORY_LIMIT + 5; value++) await deliverIds(h, url, body(value));
      const kinds = (await readHistory(h, auth, id as string)).events.map((event) => event.kind);
      expect(kinds).not.toContain("triaged");
      expect(kinds).not.toContain("created");

      const data = {
        orgId: null,
        ownerId: (await ownerOf(h, id as string)) as string,
        buckets: [`alert:${id}`],
      };
      await classifyAlertsJob.handler({ ctx: jobContext(h, h.vigil.services.database.db), data, attempt: 1 });
      expect(await readAlert(h, auth, id as string)).toMatchObject({
        analysis_status: "completed",
        attention: "others",
        attention_reason: "expected during the migration",
      });
    });
  },
  { role: "api" },
);

// A batch window can gather thousands of alerts in one bucket: the job classifies them in rounds
// of ALERTS_PER_ROUND, each its own transaction, and names each alert's peers in its round.
describeEachEngine(
  "classification in rounds",
  (harness) => {
    it("classifies a bucket larger than a round in rounds, starting each triage run once", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "rounds",
        classify_mode: "batch",
        classify_batch_window_seconds: 300,
        classify_bucket_by: "service",
        classify_critical_bypass: false,
      });
      const total = 2 * ALERTS_PER_ROUND + 20;
      const ids: string[] = [];
      for (let first = 0; first < total; first += 50) {
        const names = Array.from({ length: Math.min(50, total - first) }, (_, k) => `Disk${first + k}`);
        const body = firingBody(
          names.map((name) => ({ name, severity: "warning", labels: { service: "ledger" } })),
        );
        ids.push(...(await deliverIds(h, url, body)));
      }
      const { db } = h.vigil.services.database;
      const { rows: queued } = await db.execute(
        sql`select distinct triage_bucket, owner_id from alerts where id = any(${boundArray(ids, "uuid")})`,
      );
      expect(queued).toHaveLength(1);
      const data = {
        orgId: null,
        ownerId: String(queued[0]?.owner_id),
        buckets: [String(queued[0]?.triage_bucket)],
      };

      // A triage workflow: each claimed alert starts one run, with at most PEERS_LISTED peers named.
      const started: TriageRunInput[] = [];
      const appPort = triageWorkflowPort();
      setTriageWorkflowPort({
        choose: async () => "triage-rounds",
        start: async (_ctx, _tenant, run) => {
          started.push(run.input);
          return "trace";
        },
      });
      try {
        // A retry's attempt: running alerts are claimed too, so only the rounds' order keeps a round
        // from claiming the alerts whose runs an earlier round started.
        await classifyAlertsJob.handler({ ctx: jobContext(h, db), data, attempt: 2 });
      } finally {
        if (appPort) setTriageWorkflowPort(appPort);
      }
      expect(new Set(started.map((input) => input.alert_id)).size).toBe(total);
      expect(started).toHaveLength(total);
      const sizes = new Map<number, number>();
      for (const input of started) {
        expect(input.bucket.length).toBe(Math.min(PEERS_LISTED, input.bucket_size));
        expect(input.bucket.map((peer) => peer.id)).not.toContain(input.alert_id);
        sizes.set(input.bucket_size, (sizes.get(input.bucket_size) ?? 0) + 1);
      }
      expect([...sizes].sort(([a], [b]) => b - a)).toEqual([
        [ALERTS_PER_ROUND - 1, 2 * ALERTS_PER_ROUND],
        [19, 20],
      ]);

      // The runs never ended: a retry takes the running alerts back, and the built-in classifier
      // stores each round in a transaction of its own.
      await classifyAlertsJob.handler({ ctx: jobContext(h, db), data, attempt: 2 });
      const { rows } = await db.execute(sql`
        select count(*)::int as alerts, count(distinct xmin::text)::int as transactions,
          count(*) filter (where initial_investigation like ${`%classified together with ${ALERTS_PER_ROUND - 1} alert(s)%`})::int as in_full_rounds
        from alerts where id = any(${boundArray(ids, "uuid")}) and analysis_status = 'completed'`);
      expect(rows[0]).toEqual({ alerts: total, transactions: 3, in_full_rounds: 2 * ALERTS_PER_ROUND });
    }, 120_000);
  },
  { role: "api" },
);

async function ownerOf(h: Harness, id: string) {
  const { rows } = await h.vigil.services.database.db.execute(
    sql`select owner_id from alerts where id = ${id}`,
  );
  return rows[0]?.owner_id;
}

// An LLM, when configured, may correct the deterministic label; its answer is validated.
const stub = await startOpenAiStub();
afterAll(() => stub.close());

describeEachEngine(
  "automatic triage with an LLM",
  (harness) => {
    it("stores the model's refinement, and keeps the built-in result when the model fails", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, { source: "alertmanager", classify_mode: "immediate" });
      const read = (id: string) => readAlert(h, auth, id);
      const settledAlert = (id: string) =>
        waitFor(async () => {
          const alert = await read(id);
          return alert.analysis_status === "completed" ? alert : undefined;
        }, 30_000);

      stub.script([
        {
          content: JSON.stringify({
            attention: "false_positive",
            attention_reason: "synthetic canary that always fires during deploys",
            short_summary: "canary noise during deploy",
          }),
        },
      ]);
      const refined = await deliver(
        h,
        url,
        firingBody([{ name: "CanaryProbe", severity: "critical", labels: { env: "production" } }]),
      );
      const alert = await settledAlert(refined.json().alerts[0].id);
      expect(alert).toMatchObject({
        attention: "false_positive",
        attention_reason: "synthetic canary that always fires during deploys",
        short_summary: "canary noise during deploy",
      });
      expect(alert.initial_investigation).toContain("Hypotheses:");
      const sent = JSON.stringify(stub.requests[0]?.body);
      expect(sent).toContain("CanaryProbe");
      expect(sent).toContain("Critical severity, in production");

      stub.script([{ status: 500, body: { error: { message: "overloaded" } } }]);
      const fallback = await deliver(
        h,
        url,
        firingBody([{ name: "FallbackProbe", severity: "critical", labels: { env: "production" } }]),
      );
      expect(await settledAlert(fallback.json().alerts[0].id)).toMatchObject({
        attention: "needs_attention",
        attention_reason: "Critical severity, in production",
      });
    });

    it("asks the model about several alerts at once, not one after another", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, {
        source: "alertmanager",
        integration: "parallel",
        classify_mode: "immediate",
      });
      // Every answer is held until 8 questions are in flight together.
      const gate = concurrencyGate(8);
      const answer = JSON.stringify({
        attention: "others",
        attention_reason: "checked by the model",
        short_summary: "a warning the model looked at",
      });
      stub.script([], () => gate.reply(answer));
      // More than a round: the job asks about LLM_ALERTS_PER_ROUND and hands the rest to a new job.
      const total = LLM_ALERTS_PER_ROUND + 8;
      const names = Array.from({ length: total }, (_, n) => ({ name: `Parallel${n}`, severity: "warning" }));
      const ids = (await deliver(h, url, firingBody(names)))
        .json()
        .alerts.map((alert: { id: string }) => alert.id);
      for (const id of ids) {
        const alert = await waitFor(async () => {
          const read = await readAlert(h, auth, id);
          return read.analysis_status === "completed" ? read : undefined;
        }, 60_000);
        expect(alert.attention_reason).toBe("checked by the model");
      }
      expect(gate.gaveUp).toBe(false);
      expect(gate.arrived).toBe(total);
      const { rows } = await h.vigil.services.database.db.execute(sql`
        select count(*) filter (where retry_count = 0)::int as first_attempts,
          array_agg(priority order by created_on) as priorities
        from pgboss.job where name = 'alerts.classify' and data->>'ownerId' = ${await ownerOf(h, ids[0])}`);
      // The delivery's job is due now, ahead of batch windows; the rest of its bucket waits its turn.
      expect(rows[0]).toEqual({ first_attempts: 2, priorities: [1, 0] });
    });
  },
  { llm: { baseUrl: stub.baseUrl, model: "gpt-4o-mini", apiKey: "sk-test" } },
);
