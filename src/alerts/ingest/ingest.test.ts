// Alert ingest through real HTTP: a registration's trigger URL takes a monitoring system's body, and
// the alert reads back through getAlertV1. Expected alerts come from the shared fixtures, the spec's
// AlertV1 notes, alert-sources.md 1.10, and the source parsers (tested on their own, called here
// directly). The clock is Vigil's injected `now`, so the receive time is known exactly.
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AmAlert,
  amBody,
  getAlert,
  readAlert,
  readHistory,
  registerAlerts,
  triggerPathOf,
} from "../../../test/alerts.ts";
import { fixtureFiles, readFixture } from "../../../test/fixtures.ts";
import {
  type Auth,
  describeEachEngine,
  ENGINES,
  type Harness,
  startHarness,
  waitFor,
} from "../../../test/harness.ts";
import { scansOfPlan } from "../../../test/plans.ts";
import { maintainEmbeddedDatabase } from "../../core/db/embedded-maintenance.ts";
import { type AlertEvent, PARSERS, SOURCE_TYPES, type SourceType } from "../sources/index.ts";
import { alertKeysStatement, HISTORY_LIMIT } from "./ingest.ts";

interface Fixture {
  source: SourceType;
  name: string;
  body: string;
}

const FIXTURES: Fixture[] = SOURCE_TYPES.flatMap((source) =>
  fixtureFiles(source).map((name) => ({ source, name, body: readFixture(source, name) })),
);

const fixturesOf = (source: SourceType) => FIXTURES.filter((fixture) => fixture.source === source);

/** Request headers as the source sends them: SNS posts text/plain and names the message type. */
function headersFor(source: SourceType, body: string): Record<string, string> {
  if (source === "cloudwatch") {
    let type = "Notification";
    try {
      type = String((JSON.parse(body) as { Type?: unknown }).Type ?? type);
    } catch {
      // not JSON: whatever the type header says, the body is refused
    }
    return { "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": type };
  }
  return { "content-type": "application/json" };
}

function parse(source: SourceType, body: string, headers: Record<string, string> = headersFor(source, body)) {
  return PARSERS[source]({ body, headers, options: { severityOverrides: {} } });
}

// ---- the clock: every delivery is received at a known instant ----

let clock = new Date("2031-03-01T00:00:00.000Z");
/** Moves the clock one second on and returns the new receive time as ISO text. */
function tick(): string {
  clock = new Date(clock.getTime() + 1000);
  return clock.toISOString();
}

// ---- HTTP helpers ----

interface Registration {
  id: string;
  source: SourceType;
  integration: string;
  triggerPath: string;
}

async function register(h: Harness, auth: Auth, source: SourceType, integration = ""): Promise<Registration> {
  const body = await registerAlerts(h, auth, { source, integration });
  expect(body.platform_webhook_url).toMatch(/^\/api\/v1\/webhooks\/trigger\?apiKey=/);
  return { id: body.id, source, integration, triggerPath: triggerPathOf(body) };
}

async function deliver(
  h: Harness,
  registration: Registration,
  body: string | Buffer,
  headers: Record<string, string> = typeof body === "string"
    ? headersFor(registration.source, body)
    : { "content-type": "application/octet-stream" },
) {
  return h.vigil.app.inject({ method: "POST", url: registration.triggerPath, headers, payload: body });
}

/** Every stored alert and history row, as the database holds them. */
async function snapshot(h: Harness) {
  const { db } = h.vigil.services.database;
  const alertRows = (await db.execute(sql`select * from alerts order by id`)).rows;
  const eventRows = (await db.execute(sql`select * from alert_events order by id`)).rows;
  return { alerts: alertRows as Record<string, unknown>[], events: eventRows as Record<string, unknown>[] };
}

/** The alert a newly created event must read back as (alert-sources.md 1.10, AlertV1). */
function expectedNewAlert(
  event: AlertEvent,
  registration: Registration,
  body: string,
  receivedAt: string,
): Record<string, unknown> {
  const status = event.status === "unchanged" ? "active" : event.status;
  const resolvedAt = status === "resolved" ? (event.resolved_at ?? receivedAt) : null;
  const triggeredAt = event.triggered_at ?? receivedAt;
  return {
    external_uid: event.external_uid,
    source_type: registration.source,
    integration_name: registration.integration,
    title: event.title,
    description: event.description,
    source_severity: event.source_severity,
    signal_severity: event.severity,
    display_priority: event.display_priority,
    status,
    ignore_reason: status === "ignored" ? event.ignore_reason : null,
    // First seen resolved: never triggered after it resolved.
    triggered_at:
      resolvedAt !== null && Date.parse(resolvedAt) < Date.parse(triggeredAt) ? resolvedAt : triggeredAt,
    resolved_at: resolvedAt,
    created_at: receivedAt,
    refire_count: 0,
    last_resolved_at: null,
    labels: event.labels,
    links: event.links,
    raw_payload: body,
    ingested_via: "push",
  };
}

// ---- Alertmanager bodies built by hand (webhook payload version 4) ----

/** A CheckoutLatency alert (summary "checkout p99 above 2s") unless the fields given say otherwise. */
type CheckoutAlert = Omit<AmAlert, "labels"> & { labels?: Record<string, string> };

function checkoutBody(alerts: CheckoutAlert[]): string {
  return amBody(
    alerts.map((alert) => ({
      labels: { alertname: "CheckoutLatency", severity: "critical", service: "checkout" },
      summary: "checkout p99 above 2s",
      ...alert,
    })),
    {
      groupKey: '{}:{alertname="CheckoutLatency"}',
      groupLabels: { alertname: "CheckoutLatency" },
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=up",
    },
  );
}

// ---- reminders of an episode under way, from the shared fixtures ----

/** The clock minus `minutes`: a source time before the receive time, as the sources date theirs. */
function minutesAgo(minutes: number): Date {
  return new Date(clock.getTime() - minutes * 60_000);
}

const DATADOG_SCOPE = "kube_namespace:checkout,pod_name:checkout-6b7c9d4f8-2lq9m";

/**
 * Keep's Datadog template for monitor 777001 at `date`. The transition is in `alert_transition`
 * and in the title tag, or only in the tag when `inTitleOnly`.
 */
function datadogBody(transition: string, date: Date, { inTitleOnly = false } = {}): string {
  const fixture = JSON.parse(readFixture("datadog", "keep-template-triggered-k8s-cpu.json"));
  const { alert_transition: _, ...rest } = fixture;
  return JSON.stringify({
    ...rest,
    ...(!inTitleOnly && { alert_transition: transition }),
    title: `[P2] [${transition} on {${DATADOG_SCOPE}}] Pod CPU near limit`,
    monitor_id: "777001",
    date: String(date.getTime()),
  });
}

/** A run of the fixture's saved search whose first result row is dated `time`. */
function splunkRunBody(time: Date): string {
  const fixture = JSON.parse(readFixture("splunk", "scheduled-search-named-host-count.json"));
  const sid = `scheduler__nobody__search__RMD5a1b2c3d4e5f60718_at_${time.getTime() / 1000}_4411`;
  return JSON.stringify({
    ...fixture,
    sid,
    results_link: `https://splunk.example.com:8000/app/search/@go?sid=${sid}`,
    result: { ...fixture.result, _time: String(time.getTime() / 1000) },
  });
}

/** Uptime Kuma's DOWN of monitor 29 at `time`; `important` false is a resend while still down. */
function uptimeKumaDownBody(time: Date, important: boolean): string {
  const fixture = JSON.parse(readFixture("uptime-kuma", "v1.23-http-down.json"));
  // heartbeat.time is UTC without a zone, to the millisecond.
  const naive = time.toISOString().replace("T", " ").replace("Z", "");
  return JSON.stringify({ ...fixture, heartbeat: { ...fixture.heartbeat, time: naive, important } });
}

let fingerprints = 0;
/** A fresh 16-hex-digit Alertmanager fingerprint. */
function fingerprint(): string {
  fingerprints += 1;
  return `f${fingerprints.toString(16).padStart(15, "0")}`;
}

const T0 = "2024-05-14T10:00:00.000Z";
const T1 = "2024-05-14T10:30:00.000Z";
const T2 = "2024-05-14T11:00:00.000Z";
const T3 = "2024-05-14T11:30:00.000Z";

/**
 * Deterministic bytes that are mostly not valid UTF-8 (a small LCG; no randomness in tests). NUL
 * bytes are left out unless asked for: they have a test of their own.
 */
function garbage(length: number, seed: number, { withNul = false } = {}): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24 || (withNul ? 0 : 1);
  }
  return bytes;
}

const MIB = 1024 * 1024;

describeEachEngine(
  "alert ingest",
  (harness) => {
    it("has fixtures for every one of the 16 sources", () => {
      expect(SOURCE_TYPES).toHaveLength(16);
      for (const source of SOURCE_TYPES) expect(fixturesOf(source).length).toBeGreaterThan(0);
    });

    for (const source of SOURCE_TYPES) {
      it(`stores every ${source} fixture as the parser normalizes it, readable by id`, async () => {
        const h = harness();
        const { auth } = await h.createKey();
        for (const fixture of fixturesOf(source)) {
          const registration = await register(h, auth, source, fixture.name.replace(/\.json$/, ""));
          const headers = headersFor(source, fixture.body);
          const parsed = parse(source, fixture.body, headers);
          const receivedAt = tick();
          const response = await deliver(h, registration, fixture.body, headers);
          if (!parsed.ok) {
            expect({ fixture: fixture.name, status: response.statusCode }).toEqual({
              fixture: fixture.name,
              status: 400,
            });
            expect(response.json()).toMatchObject({ errCode: "INVALID_PAYLOAD" });
            continue;
          }
          expect({ fixture: fixture.name, status: response.statusCode }).toEqual({
            fixture: fixture.name,
            status: 202,
          });
          // One fixture is one episode of distinct alerts: every event creates its own alert.
          const uids = parsed.events.map((event) => event.external_uid);
          expect(new Set(uids).size).toBe(uids.length);
          const accepted = response.json();
          expect(accepted).toEqual({
            webhook_id: registration.id,
            invocation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
            target_type: "alert_ingest",
            target_name: `sre/${source}/${registration.integration}`,
            events: parsed.events.length,
            alerts: uids.map((uid) => ({
              id: expect.stringMatching(/^[0-9a-f-]{36}$/),
              external_uid: uid,
              outcome: "created",
            })),
            // An SNS subscription request's note also says what becomes of it (auto-confirm is off here).
            note:
              fixture.name === "sns-subscription-confirmation.json"
                ? `${parsed.note}; auto-confirm is off: open its SubscribeURL to confirm the subscription`
                : (parsed.note ?? null),
          });
          for (const [index, event] of parsed.events.entries()) {
            const id = accepted.alerts[index].id;
            const alert = await readAlert(h, auth, id);
            expect({ fixture: fixture.name, ...alert }).toMatchObject({
              fixture: fixture.name,
              id,
              ...expectedNewAlert(event, registration, fixture.body, receivedAt),
            });
            // listAlerts builds its page in SQL (present.ts, ALERT_V1_JSON): the same AlertV1.
            const listed = await h.vigil.app.inject({
              url: `/app/sre/api/v1/alerts?status=${alert.status}&page_size=500`,
              headers: auth,
            });
            expect(listed.headers["content-type"]).toBe("application/json; charset=utf-8");
            const item = listed.json().alerts.find((candidate: { id: string }) => candidate.id === id);
            expect({ fixture: fixture.name, ...item }).toEqual({ fixture: fixture.name, ...alert });
          }
          const { db } = h.vigil.services.database;
          const stored = await db.execute(
            sql`select count(*)::int as n from alerts where webhook_id = ${registration.id}`,
          );
          expect(Number(stored.rows[0]?.n)).toBe(parsed.events.length);
        }
      });
    }

    it("answers an SNS subscription handshake with 202, no alert and a note", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "cloudwatch");
      const fixture = fixturesOf("cloudwatch").find(
        (item) => item.name === "sns-subscription-confirmation.json",
      );
      if (!fixture) throw new Error("the SubscriptionConfirmation fixture is missing");
      const response = await deliver(h, registration, fixture.body);
      expect(response.statusCode).toBe(202);
      expect(response.json()).toMatchObject({ events: 0, alerts: [], note: expect.stringMatching(/\S/) });
      const list = await h.vigil.app.inject({ url: "/app/sre/api/v1/alerts", headers: auth });
      expect(list.json()).toMatchObject({ alerts: [], total: 0 });
    });

    it("fires, resolves and re-fires one alert, with the history in order", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager", "prod");
      const uid = fingerprint();

      const firstAt = tick();
      const fired = await deliver(
        h,
        registration,
        checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T0 }]),
      );
      expect(fired.statusCode).toBe(202);
      const [created] = fired.json().alerts;
      expect(created).toEqual({ id: expect.any(String), external_uid: uid, outcome: "created" });
      expect(await readAlert(h, auth, created.id)).toMatchObject({
        external_uid: uid,
        title: "CheckoutLatency",
        description: "checkout p99 above 2s",
        source_severity: "critical",
        signal_severity: "Critical",
        display_priority: 1,
        status: "active",
        triggered_at: T0,
        created_at: firstAt,
        resolved_at: null,
        refire_count: 0,
        ingested_via: "push",
        labels: { alertname: "CheckoutLatency", severity: "critical", service: "checkout" },
      });

      tick();
      const resolvedBody = checkoutBody([{ status: "resolved", fingerprint: uid, startsAt: T0, endsAt: T1 }]);
      const resolved = await deliver(h, registration, resolvedBody);
      expect(resolved.json().alerts).toEqual([{ id: created.id, external_uid: uid, outcome: "resolved" }]);
      expect(await readAlert(h, auth, created.id)).toMatchObject({
        status: "resolved",
        resolved_at: T1,
        triggered_at: T0,
        // A resolve never lowers severity, though Alertmanager sends the same labels anyway.
        signal_severity: "Critical",
        raw_payload: resolvedBody,
      });

      tick();
      const refiredBody = checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T2 }]);
      const refired = await deliver(h, registration, refiredBody);
      expect(refired.json().alerts).toEqual([{ id: created.id, external_uid: uid, outcome: "refired" }]);
      expect(await readAlert(h, auth, created.id)).toMatchObject({
        id: created.id,
        status: "active",
        refire_count: 1,
        last_resolved_at: T1,
        resolved_at: null,
        triggered_at: T2,
        created_at: firstAt,
        ingested_via: "push",
        analysis_status: "queued",
        raw_payload: refiredBody,
      });

      const history = await readHistory(h, auth, created.id);
      expect(history).toEqual({
        alert_id: created.id,
        events: [
          {
            seq: 1,
            at: firstAt,
            kind: "created",
            actor: "source",
            source_event: "firing",
            status_before: null,
            status_after: "active",
            invocation_id: fired.json().invocation_id,
            detail: {},
          },
          {
            seq: 2,
            at: expect.any(String),
            kind: "resolved",
            actor: "source",
            source_event: "resolved",
            status_before: "active",
            status_after: "resolved",
            invocation_id: resolved.json().invocation_id,
            detail: {},
          },
          {
            seq: 3,
            at: expect.any(String),
            kind: "refired",
            actor: "source",
            source_event: "firing",
            status_before: "resolved",
            status_after: "active",
            invocation_id: refired.json().invocation_id,
            detail: {},
          },
        ],
      });
    });

    it("changes nothing when the same delivery arrives twice", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const uid = fingerprint();
      const body = checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T0 }]);
      tick();
      const first = await deliver(h, registration, body);
      const { id } = first.json().alerts[0];
      const alertBefore = (await getAlert(h, auth, id)).body;
      const historyBefore = await readHistory(h, auth, id);

      tick();
      const retry = await deliver(h, registration, body);
      expect(retry.statusCode).toBe(202);
      expect(retry.json().alerts).toEqual([{ id, external_uid: uid, outcome: "duplicate" }]);
      expect((await getAlert(h, auth, id)).body).toBe(alertBefore);
      expect(await readHistory(h, auth, id)).toEqual(historyBefore);
    });

    it("takes trigger times outside the years 1 to 9999 as absent, beside a good alert", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const good = fingerprint();
      const early = fingerprint();
      const late = fingerprint();
      const body = checkoutBody([
        { status: "firing", fingerprint: good, startsAt: T0 },
        { status: "firing", fingerprint: early, startsAt: "0001-01-01T00:00:00+01:00" },
        { status: "firing", fingerprint: late, startsAt: "9999-12-31T23:59:59Z" },
      ]);
      const response = await deliver(h, registration, body);
      expect(response.statusCode, response.body).toBe(202);
      const received = h.vigil.services.now().toISOString();
      for (const uid of [early, late]) {
        expect((await readAlert(h, auth, uid)).triggered_at, uid).toBe(received);
      }
      expect((await readAlert(h, auth, good)).triggered_at).toBe(T0);
    });

    it("tells repeats from changes alert by alert, in one delivery and for one alert twice in a body", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager", "mixed");
      const [a, b] = [fingerprint(), fingerprint()];
      const firingA = { status: "firing" as const, fingerprint: a, startsAt: T0 };
      const firingB = { status: "firing" as const, fingerprint: b, startsAt: T0 };
      tick();
      const first = await deliver(h, registration, checkoutBody([firingA, firingB]));
      const [idA, idB] = first.json().alerts.map((alert: { id: string }) => alert.id);
      const { db } = h.vigil.services.database;
      const versionOf = async (id: string) =>
        (await db.execute(sql`select xmin::text as v from alerts where id = ${id}`)).rows[0]?.v;
      const storedA = await versionOf(idA);

      // A repeats its last event, B resolves: only B changes, A's row is not written.
      tick();
      const mixed = await deliver(
        h,
        registration,
        checkoutBody([firingA, { ...firingB, status: "resolved", endsAt: T1 }]),
      );
      expect(mixed.statusCode).toBe(202);
      expect(mixed.json().alerts).toEqual([
        { id: idA, external_uid: a, outcome: "duplicate" },
        { id: idB, external_uid: b, outcome: "resolved" },
      ]);
      expect(await versionOf(idA)).toBe(storedA);
      expect(await readAlert(h, auth, idB)).toMatchObject({ status: "resolved", resolved_at: T1 });

      // A's repeat, then its resolve, in one body: the repeat changes nothing, the resolve applies.
      tick();
      const twice = await deliver(
        h,
        registration,
        checkoutBody([firingA, { ...firingA, status: "resolved", endsAt: T2 }]),
      );
      expect(twice.json().alerts).toEqual([
        { id: idA, external_uid: a, outcome: "duplicate" },
        { id: idA, external_uid: a, outcome: "resolved" },
      ]);
      expect(await readAlert(h, auth, idA)).toMatchObject({ status: "resolved", resolved_at: T2 });
      expect((await readHistory(h, auth, idA)).events.map((event) => event.kind)).toEqual([
        "created",
        "resolved",
      ]);
    });

    it("keeps a newer episode active when an older resolve arrives late, and counts the earlier episode", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const uid = fingerprint();
      tick();
      const fired = await deliver(
        h,
        registration,
        checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T2 }]),
      );
      const { id } = fired.json().alerts[0];
      const before = await readAlert(h, auth, id);

      tick();
      const late = await deliver(
        h,
        registration,
        checkoutBody([{ status: "resolved", fingerprint: uid, startsAt: T0, endsAt: T1 }]),
      );
      expect(late.statusCode).toBe(202);
      // In time order the resolve came first, so T2 re-fired the alert (alert-sources.md 1.10): the
      // count says so, and nothing else of the newer episode changes.
      expect(late.json().alerts).toEqual([{ id, external_uid: uid, outcome: "updated" }]);
      const after = await readAlert(h, auth, id);
      expect(after).toEqual({ ...before, refire_count: 1, last_resolved_at: T1 });
      expect(after).toMatchObject({ status: "active", resolved_at: null, triggered_at: T2 });
      const { events } = await readHistory(h, auth, id);
      expect(events.map((event) => event.kind)).toEqual(["created", "updated"]);
      expect(events[1]).toMatchObject({
        status_before: "active",
        status_after: "active",
        source_event: "resolved",
        invocation_id: late.json().invocation_id,
      });
    });

    it("reads an alert by external_uid as by id, and answers 404 for unknown ids and other tenants", async () => {
      const h = harness();
      const owner = await h.createKey();
      const stranger = await h.createKey();
      const registration = await register(h, owner.auth, "alertmanager");
      const uid = fingerprint();
      tick();
      const fired = await deliver(
        h,
        registration,
        checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T0 }]),
      );
      const { id } = fired.json().alerts[0];

      const byId = await getAlert(h, owner.auth, id);
      const byUid = await getAlert(h, owner.auth, uid);
      expect(byUid.statusCode).toBe(200);
      expect(byUid.json()).toEqual(byId.json());
      expect(byId.json()).toMatchObject({ id, external_uid: uid });

      const notFound = { error: expect.any(String), code: "NOT_FOUND", details: expect.any(Object) };
      for (const [auth, target] of [
        [owner.auth, randomUUID()],
        [owner.auth, "no-such-uid"],
        [stranger.auth, id],
        [stranger.auth, uid],
      ] as const) {
        const response = await getAlert(h, auth, target);
        expect({ target, status: response.statusCode }).toEqual({ target, status: 404 });
        expect(response.json()).toEqual(notFound);
        expect(response.body).not.toContain("CheckoutLatency");
        const history = await h.vigil.app.inject({
          url: `/app/sre/api/v1/alerts/${target}/history`,
          headers: auth,
        });
        expect(history.statusCode).toBe(404);
      }
    });

    it(`keeps at most ${HISTORY_LIMIT} history events per alert, the newest`, async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const uid = fingerprint();
      const deliveries = HISTORY_LIMIT + 5;
      let id = "";
      let lastInvocation = "";
      for (let n = 1; n <= deliveries; n++) {
        tick();
        const response = await deliver(
          h,
          registration,
          checkoutBody([
            {
              status: "firing",
              fingerprint: uid,
              startsAt: T0,
              description: `delivery ${n}`,
            },
          ]),
        );
        expect(response.statusCode).toBe(202);
        const [outcome] = response.json().alerts;
        expect(outcome.outcome).toBe(n === 1 ? "created" : "updated");
        id = outcome.id;
        lastInvocation = response.json().invocation_id;
      }
      const { events } = await readHistory(h, auth, id);
      expect(events).toHaveLength(HISTORY_LIMIT);
      expect(events.map((event) => event.seq)).toEqual(
        Array.from({ length: HISTORY_LIMIT }, (_, index) => deliveries - HISTORY_LIMIT + 1 + index),
      );
      expect(events.at(-1)).toMatchObject({ kind: "updated", invocation_id: lastInvocation });
      expect(await readAlert(h, auth, id)).toMatchObject({
        description: `checkout p99 above 2s\n\ndelivery ${deliveries}`,
      });
    });

    it("keeps an alert an operator ignored ignored while the same episode keeps firing", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const uid = fingerprint();
      tick();
      const fired = await deliver(
        h,
        registration,
        checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T0 }]),
      );
      const { id } = fired.json().alerts[0];
      // The PATCH that ignores an alert comes later; set what it will set.
      await h.vigil.services.database.db.execute(
        sql`update alerts set status = 'ignored', ignored_by = 'operator', ignore_reason = 'noisy during migration' where id = ${id}`,
      );

      for (const n of [1, 2]) {
        tick();
        const repeat = await deliver(
          h,
          registration,
          checkoutBody([
            {
              status: "firing",
              fingerprint: uid,
              startsAt: T0,
              description: `repeat ${n}`,
            },
          ]),
        );
        expect(repeat.statusCode).toBe(202);
        expect(repeat.json().alerts[0].outcome).not.toBe("refired");
        expect(await readAlert(h, auth, id)).toMatchObject({
          status: "ignored",
          ignore_reason: "noisy during migration",
          triggered_at: T0,
          description: `checkout p99 above 2s\n\nrepeat ${n}`,
        });
      }

      tick();
      const newEpisode = await deliver(
        h,
        registration,
        checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T3 }]),
      );
      expect(newEpisode.json().alerts).toEqual([{ id, external_uid: uid, outcome: "refired" }]);
      expect(await readAlert(h, auth, id)).toMatchObject({
        status: "active",
        ignore_reason: null,
        triggered_at: T3,
        refire_count: 0,
      });
    });

    async function ignoreAlert(h: Harness, auth: Auth, uid: string, reason: string) {
      const response = await h.vigil.app.inject({
        method: "PATCH",
        url: `/app/sre/api/v1/alerts/${uid}`,
        headers: auth,
        payload: { status: "ignored", ignore_reason: reason },
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toMatchObject({ status: "ignored", ignore_reason: reason });
    }

    /** The alert's last history event: kind, source event and the status change. */
    async function lastHistory(h: Harness, auth: Auth, id: string) {
      const { events } = await readHistory(h, auth, id);
      const last = events.at(-1) ?? {};
      return [last.kind, last.source_event, last.status_before, last.status_after];
    }

    it("keeps a Datadog monitor ignored through its renotifications; a later Triggered is a new episode", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "datadog", "dd");
      tick();
      const triggeredAt = minutesAgo(40);
      const fired = await deliver(h, registration, datadogBody("Triggered", triggeredAt));
      const [{ id, external_uid: uid, outcome }] = fired.json().alerts;
      expect(outcome).toBe("created");
      await ignoreAlert(h, auth, uid, "known, fix tomorrow");
      const operatorIgnore = await lastHistory(h, auth, id);

      // Renotify in the field, then Re-Triggered only in the title tag: both remind of the episode.
      for (const [transition, inTitleOnly] of [
        ["Renotify", false],
        ["Re-Triggered", true],
      ] as const) {
        tick();
        const reminder = await deliver(
          h,
          registration,
          datadogBody(transition, minutesAgo(30), { inTitleOnly }),
        );
        expect(reminder.statusCode).toBe(202);
        expect(reminder.json().alerts).toEqual([{ id, external_uid: uid, outcome: "unchanged" }]);
        expect(await readAlert(h, auth, id)).toMatchObject({
          status: "ignored",
          ignore_reason: "known, fix tomorrow",
          triggered_at: triggeredAt.toISOString(),
          refire_count: 0,
        });
        // A reminder changes nothing: the history still ends with the operator's ignore.
        expect(await lastHistory(h, auth, id)).toEqual(operatorIgnore);
      }

      // A transition into the alert state, dated later, starts a new episode: the ignore ends.
      tick();
      const retriggeredAt = minutesAgo(10);
      const refired = await deliver(h, registration, datadogBody("Triggered", retriggeredAt));
      expect(refired.json().alerts).toEqual([{ id, external_uid: uid, outcome: "refired" }]);
      expect(await readAlert(h, auth, id)).toMatchObject({
        status: "active",
        ignore_reason: null,
        triggered_at: retriggeredAt.toISOString(),
        refire_count: 0,
      });

      // On an active alert a renotification is no trigger either: triggered_at stays.
      tick();
      const renotified = await deliver(h, registration, datadogBody("Renotify", minutesAgo(1)));
      expect(renotified.json().alerts).toEqual([{ id, external_uid: uid, outcome: "unchanged" }]);
      expect(await readAlert(h, auth, id)).toMatchObject({
        status: "active",
        triggered_at: retriggeredAt.toISOString(),
      });
    });

    it("keeps a Splunk saved search ignored through its next runs, and dates it by its first run", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "splunk", "prod");
      tick();
      const firstRun = minutesAgo(40);
      const fired = await deliver(h, registration, splunkRunBody(firstRun));
      const [{ id, external_uid: uid, outcome }] = fired.json().alerts;
      expect(outcome).toBe("created");
      await ignoreAlert(h, auth, uid, "known, fix tomorrow");

      tick();
      const nextRun = await deliver(h, registration, splunkRunBody(minutesAgo(30)));
      // Updated, not re-fired: the run's own results link is added.
      expect(nextRun.json().alerts).toEqual([{ id, external_uid: uid, outcome: "updated" }]);
      expect(await readAlert(h, auth, id)).toMatchObject({
        status: "ignored",
        ignore_reason: "known, fix tomorrow",
        triggered_at: firstRun.toISOString(),
        refire_count: 0,
      });
      expect(await lastHistory(h, auth, id)).toEqual(["updated", "triggered", "ignored", "ignored"]);

      // Set active again by the operator, later runs still leave the episode's start alone: Splunk
      // never says a search stopped matching, so no run starts a new episode.
      const unignored = await h.vigil.app.inject({
        method: "PATCH",
        url: `/app/sre/api/v1/alerts/${uid}`,
        headers: auth,
        payload: { status: "active" },
      });
      expect(unignored.statusCode, unignored.body).toBe(200);
      tick();
      const laterRun = await deliver(h, registration, splunkRunBody(minutesAgo(10)));
      expect(laterRun.json().alerts).toEqual([{ id, external_uid: uid, outcome: "updated" }]);
      expect(await readAlert(h, auth, id)).toMatchObject({
        status: "active",
        triggered_at: firstRun.toISOString(),
        refire_count: 0,
      });
    });

    it("keeps an Uptime Kuma monitor ignored through its resends while down; an important DOWN is a new episode", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "uptime-kuma", "kuma");
      tick();
      const downAt = minutesAgo(40);
      const fired = await deliver(h, registration, uptimeKumaDownBody(downAt, true));
      const [{ id, external_uid: uid, outcome }] = fired.json().alerts;
      expect(outcome).toBe("created");
      await ignoreAlert(h, auth, uid, "known, fix tomorrow");
      const operatorIgnore = await lastHistory(h, auth, id);

      tick();
      const resend = await deliver(h, registration, uptimeKumaDownBody(minutesAgo(30), false));
      expect(resend.json().alerts).toEqual([{ id, external_uid: uid, outcome: "unchanged" }]);
      expect(await readAlert(h, auth, id)).toMatchObject({
        status: "ignored",
        ignore_reason: "known, fix tomorrow",
        triggered_at: downAt.toISOString(),
        refire_count: 0,
      });
      expect(await lastHistory(h, auth, id)).toEqual(operatorIgnore);

      // A DOWN Uptime Kuma marks important is a change to DOWN: the monitor was up in between.
      tick();
      const downAgainAt = minutesAgo(10);
      const downAgain = await deliver(h, registration, uptimeKumaDownBody(downAgainAt, true));
      expect(downAgain.json().alerts).toEqual([{ id, external_uid: uid, outcome: "refired" }]);
      expect(await readAlert(h, auth, id)).toMatchObject({
        status: "active",
        ignore_reason: null,
        triggered_at: downAgainAt.toISOString(),
      });
    });

    it("keeps two integrations of one source apart: one fingerprint, two alerts", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const east = await register(h, auth, "alertmanager", "east");
      const west = await register(h, auth, "alertmanager", "west");
      const uid = fingerprint();
      const body = checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T0 }]);
      tick();
      const toEast = await deliver(h, east, body);
      tick();
      const toWest = await deliver(h, west, body);
      expect(toEast.json().alerts[0]).toMatchObject({ external_uid: uid, outcome: "created" });
      expect(toWest.json().alerts[0]).toMatchObject({ external_uid: uid, outcome: "created" });
      const eastId = toEast.json().alerts[0].id;
      const westId = toWest.json().alerts[0].id;
      expect(eastId).not.toBe(westId);
      expect(await readAlert(h, auth, eastId)).toMatchObject({ integration_name: "east", external_uid: uid });
      expect(await readAlert(h, auth, westId)).toMatchObject({ integration_name: "west", external_uid: uid });

      // Resolving in one integration leaves the other firing.
      tick();
      await deliver(
        h,
        east,
        checkoutBody([{ status: "resolved", fingerprint: uid, startsAt: T0, endsAt: T1 }]),
      );
      expect(await readAlert(h, auth, eastId)).toMatchObject({ status: "resolved" });
      expect(await readAlert(h, auth, westId)).toMatchObject({ status: "active" });
    });

    it("looks delivered alerts up by alerts_key, before and after the table is analyzed", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager", "plan");
      // Enough alerts of one tenant that reading all of them for two uids would be the wrong plan.
      const uids = Array.from({ length: 1_000 }, () => fingerprint());
      for (let start = 0; start < uids.length; start += 250) {
        const chunk = uids.slice(start, start + 250);
        tick();
        const response = await deliver(
          h,
          registration,
          checkoutBody(chunk.map((uid) => ({ status: "firing", fingerprint: uid, startsAt: T0 }))),
        );
        expect(response.statusCode).toBe(202);
      }
      const { db } = h.vigil.services.database;
      const owner = await db.execute(
        sql`select org_id, owner_id from alert_webhooks where id = ${registration.id}`,
      );
      const tenant = owner.rows[0] as { org_id: string | null; owner_id: string };
      const { query: statement } = alertKeysStatement([
        {
          scope: {
            orgId: tenant.org_id,
            ownerId: tenant.owner_id,
            sourceType: "alertmanager",
            integrationName: "plan",
            webhookId: registration.id,
          },
          events: [uids[7], uids[700]].map((uid) => ({ external_uid: uid }) as AlertEvent),
        },
      ]);
      /** Every index scan of the plan: the index and what it is searched by. */
      async function indexScans() {
        const { rows } = await db.execute(sql`explain (format json) ${statement}`);
        return scansOfPlan(rows);
      }
      const lookupScans = async () => (await indexScans()).filter((scan) => scan.index !== "alerts_pkey");
      expect(await lookupScans()).toEqual([
        { index: "alerts_key", cond: expect.stringContaining("external_uid = ANY") },
      ]);
      await db.execute(sql`analyze alerts`);
      expect(await lookupScans()).toEqual([
        { index: "alerts_key", cond: expect.stringContaining("external_uid = ANY") },
      ]);
      // Ingest runs it as a named statement, on a plan made once for any uids: that plan too.
      const { sql: text, params } = new PgDialect().sqlToQuery(statement);
      const generic = await db.transaction(async (tx) => {
        await tx.execute(sql`set local plan_cache_mode = force_generic_plan`);
        await tx.execute(sql.raw(`prepare lock_probe as ${text}`));
        // EXECUTE takes no bound parameters: the values go in as literals (text, uuids, an array).
        const args = params.map((param) => `'${String(param).replaceAll("'", "''")}'`).join(", ");
        const { rows } = await tx.execute(sql.raw(`explain (format json) execute lock_probe(${args})`));
        await tx.execute(sql`deallocate lock_probe`);
        return rows;
      });
      expect(scansOfPlan(generic).filter((scan) => scan.index !== "alerts_pkey")).toEqual([
        { index: "alerts_key", cond: expect.stringContaining("external_uid = ANY") },
      ]);
      const locked = await db.transaction(async (tx) => (await tx.execute(statement)).rows);
      expect(locked.map((row) => (row as { external_uid: string }).external_uid).sort()).toEqual(
        [uids[7], uids[700]].sort(),
      );
    });

    it("counts an unmapped severity in vigil_ingest_unmapped_total", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const uid = fingerprint();
      tick();
      const response = await deliver(
        h,
        registration,
        checkoutBody([
          {
            status: "firing",
            fingerprint: uid,
            startsAt: T0,
            labels: { alertname: "DiskFull", severity: "sev-unlisted-q7" },
          },
        ]),
      );
      expect(response.statusCode).toBe(202);
      expect(await readAlert(h, auth, response.json().alerts[0].id)).toMatchObject({
        source_severity: "sev-unlisted-q7",
        signal_severity: "Medium",
        display_priority: 3,
      });
      const metrics = await h.vigil.app.inject({ url: "/metrics" });
      const line = metrics.body
        .split("\n")
        .find((text) => text.startsWith("vigil_ingest_unmapped_total{") && text.includes("sev-unlisted-q7"));
      expect(line).toBeDefined();
      expect(line).toContain('source_type="alertmanager"');
      expect(line).toContain('field="severity"');
      expect(line).toContain('value="sev-unlisted-q7"');
      expect(line).toMatch(/\} 1$/);
    });

    it("stores JSON escapes PostgreSQL cannot hold (\\u0000, lone surrogates) as U+FFFD", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager");
      const uid = fingerprint();
      // The body itself is plain ASCII: the escapes only become NUL and surrogates once parsed.
      const body = checkoutBody([
        {
          status: "firing",
          fingerprint: uid,
          startsAt: T0,
          labels: { alertname: "Disk\u0000Full", team: "a\ud800b", zone: "c\udfffd" },
          summary: "nul \u0000 here",
        },
      ]);
      tick();
      const response = await deliver(h, registration, body);
      expect(response.statusCode).toBe(202);
      expect(await readAlert(h, auth, response.json().alerts[0].id)).toMatchObject({
        title: "Disk\ufffdFull",
        description: "nul \ufffd here",
        labels: { alertname: "Disk\ufffdFull", team: "a\ufffdb", zone: "c\ufffdd" },
        raw_payload: body,
      });
      // A retry of it is still recognised as the same delivery.
      expect((await deliver(h, registration, body)).json().alerts[0].outcome).toBe("duplicate");
    });

    itHandlesBadInput(harness);
  },
  // No workers: classification (triage.ts) would change alerts and history in the background, and
  // these tests compare them exactly. New and re-fired alerts therefore stay `queued`.
  { role: "api" },
  { now: () => new Date(clock.getTime()) },
);

/** Point 8: malformed and foreign bodies get a 4xx, the service stays up, stored alerts stay. */
function itHandlesBadInput(harness: () => Harness) {
  /** One registration per source, holding the alerts of that source's own fixtures. */
  async function seed(h: Harness, auth: Auth): Promise<Map<SourceType, Registration>> {
    const registrations = new Map<SourceType, Registration>();
    for (const source of SOURCE_TYPES) {
      const registration = await register(h, auth, source, "seeded");
      registrations.set(source, registration);
      for (const fixture of fixturesOf(source)) {
        tick();
        expect((await deliver(h, registration, fixture.body)).statusCode).toBe(202);
      }
    }
    return registrations;
  }

  async function expectRejected(response: Awaited<ReturnType<typeof deliver>>, label: string) {
    expect({ label, status: response.statusCode }).toEqual({ label, status: 400 });
    expect(response.json()).toEqual({
      msg: expect.any(String),
      errCode: "INVALID_PAYLOAD",
      extras: expect.any(Array),
    });
  }

  it("refuses malformed bodies with 400 or 413, stays up, and changes no stored alert", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const registrations = await seed(h, auth);
    const before = await snapshot(h);
    expect(before.alerts.length).toBeGreaterThan(FIXTURES.length);

    const deepArray = `${"[".repeat(10_000)}${"]".repeat(10_000)}`;
    const deepObject = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`;
    for (const [source, registration] of registrations) {
      const [own] = fixturesOf(source);
      if (!own) throw new Error(`no fixture for ${source}`);
      const malformed: [string, string | Buffer][] = [
        ["empty body", ""],
        ["truncated JSON", own.body.slice(0, Math.floor(own.body.length / 2))],
        ["JSON array where an object is expected", `[${own.body}]`],
        ["empty array", "[]"],
        ["JSON of the wrong shape", '{"hello":"world","alerts":"not a list","status":42,"event":[1]}'],
        ["empty object", "{}"],
        ["a JSON string", '"firing"'],
        ["a JSON number", "42"],
        ["JSON null", "null"],
        ["10,000 nested arrays", deepArray],
        ["10,000 nested objects", deepObject],
        ["binary garbage", garbage(64 * 1024, source.length * 7919)],
      ];
      for (const [label, body] of malformed) {
        await expectRejected(await deliver(h, registration, body), `${source}: ${label}`);
      }
    }

    // Huge bodies under the 5 MiB limit, and one over it, on a few sources of different shapes.
    for (const source of ["alertmanager", "cloudwatch", "datadog"] as const) {
      const registration = registrations.get(source) as Registration;
      const hugeJson = JSON.stringify({
        message: "x".repeat(3 * MIB),
        alerts: [{ status: "y".repeat(MIB) }],
      });
      await expectRejected(await deliver(h, registration, hugeJson), `${source}: huge JSON strings`);
      await expectRejected(await deliver(h, registration, "z".repeat(4 * MIB)), `${source}: huge non-JSON`);
      const over = await deliver(h, registration, JSON.stringify({ message: "x".repeat(5 * MIB) }));
      expect(over.statusCode).toBe(413);
      expect(over.json()).toMatchObject({ errCode: "PAYLOAD_TOO_LARGE" });
    }

    expect((await h.vigil.app.inject({ url: "/healthz" })).statusCode).toBe(200);
    expect(await snapshot(h)).toEqual(before);
  });

  // PostgreSQL text refuses U+0000: the trigger keeps payloads as bytes, so this is recorded and refused.
  it("refuses binary garbage holding NUL bytes with 400 and stays up", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const registration = await register(h, auth, "alertmanager", "nul-bytes");
    const body = garbage(4096, 7, { withNul: true });
    const response = await deliver(h, registration, body);
    await expectRejected(response, "binary garbage with NUL bytes");
    expect((await h.vigil.app.inject({ url: "/healthz" })).statusCode).toBe(200);
    // The invocation keeps the body byte for byte.
    const [identity] = response.json().extras as { invocation_id: string }[];
    const { rows } = await h.vigil.services.database.db.execute(
      sql`select payload, payload_bytes, status from webhook_invocations where id = ${identity?.invocation_id}`,
    );
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0]?.payload as Uint8Array).equals(body)).toBe(true);
    expect(rows[0]).toMatchObject({ payload_bytes: body.length, status: "failed" });
  });

  it("handles every fixture posted to every other source's webhook: refused, or read as that source reads it", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const registrations = await seed(h, auth);
    const before = await snapshot(h);
    const storedUids = new Set(before.alerts.map((row) => `${row.webhook_id}/${row.external_uid}`));

    const accepted: string[] = [];
    const created = new Map<string, AlertEvent>();
    for (const [target, registration] of registrations) {
      for (const fixture of FIXTURES.filter((item) => item.source !== target)) {
        const label = `${fixture.source}/${fixture.name} -> ${target}`;
        const headers = headersFor(fixture.source, fixture.body);
        const parsed = parse(target, fixture.body, headers);
        const response = await deliver(h, registration, fixture.body, headers);
        if (!parsed.ok) {
          await expectRejected(response, label);
          continue;
        }
        // The target's parser reads this body: it is an alert of the target source, stored as such.
        expect({ label, status: response.statusCode }).toEqual({ label, status: 202 });
        accepted.push(label);
        expect(response.json().alerts.map((item: { external_uid: string }) => item.external_uid)).toEqual(
          parsed.events.map((event) => event.external_uid),
        );
        for (const event of parsed.events) {
          const key = `${registration.id}/${event.external_uid}`;
          // A foreign body never lands on an alert that was already stored.
          expect(storedUids.has(key)).toBe(false);
          if (!created.has(key)) created.set(key, event);
        }
      }
    }

    // Grafana's unified alerting body is Alertmanager's shape: these readings are legitimate. Any
    // other body is another source's (a Datadog recovery read as a New Relic alert would open a
    // second alert that never resolves), refused naming what it is (cross-source.test.ts).
    expect(accepted.sort()).toEqual(
      [
        ...[
          "docs-firing-2-alerts",
          "v11-firing-values-imageurl",
          "v12-test-notification",
          "v9-resolved-single",
        ].map((name) => `grafana/${name}.json -> alertmanager`),
        ...fixturesOf("alertmanager").map((fixture) => `alertmanager/${fixture.name} -> grafana`),
      ].sort(),
    );

    expect((await h.vigil.app.inject({ url: "/healthz" })).statusCode).toBe(200);
    const after = await snapshot(h);
    // What was stored is untouched, history included; the only new alerts are the accepted events.
    // Storm fields and impact are derived from co-firing alerts (storms.ts): a new alert may
    // legitimately join a stored one's storm; the stored data itself must not change.
    const beforeIds = new Set(before.alerts.map((row) => row.id));
    const stored = (rows: Record<string, unknown>[]) =>
      rows.map(
        ({ storm_id, alert_role, likely_upstream, impact_score, impact_explanation, ...data }) => data,
      );
    expect(stored(after.alerts.filter((row) => beforeIds.has(row.id)))).toEqual(stored(before.alerts));
    const beforeEventIds = new Set(before.events.map((row) => String(row.id)));
    expect(after.events.filter((row) => beforeEventIds.has(String(row.id)))).toEqual(before.events);
    const added = after.alerts.filter((row) => !beforeIds.has(row.id));
    expect(added.map((row) => `${row.webhook_id}/${row.external_uid}`).sort()).toEqual(
      [...created.keys()].sort(),
    );
    for (const row of added) {
      const target = [...registrations.values()].find((item) => item.id === row.webhook_id);
      expect(row.source_type).toBe(target?.source);
    }
  });
}

// On PostgreSQL, where other connections run beside ingest: a transaction that holds an alert's row
// (a classification or a change under way) does not hold up a repeat of the alert's last event,
// which writes nothing; a change of the alert waits for it, then reads what it wrote and keeps it.
if (ENGINES.includes("postgres")) {
  describe("alert ingest beside a held alert row [postgres]", () => {
    let h: Harness & { stop(): Promise<void> };
    beforeAll(async () => {
      h = await startHarness("postgres");
    });
    afterAll(() => h?.stop());

    it("answers a repeat while the row is held, and applies a change on top of the holder's write", async () => {
      const { auth } = await h.createKey();
      const registration = await register(h, auth, "alertmanager", "held");
      const uid = fingerprint();
      const firing = checkoutBody([{ status: "firing", fingerprint: uid, startsAt: T0 }]);
      tick();
      const [{ id }] = (await deliver(h, registration, firing)).json().alerts;
      const { database } = h.vigil.services;
      let change: ReturnType<typeof deliver> | undefined;
      let changeSettled = false;
      await database.transaction(async (tx) => {
        // As the investigations domain does: the row locked, then written. (A column no worker of
        // this harness writes: classification runs beside this test and writes its own.)
        await tx.execute(sql`select id from alerts where id = ${id} for update`);
        await tx.execute(sql`update alerts set investigation = '{"held": true}'::jsonb where id = ${id}`);
        tick();
        const repeat = await deliver(h, registration, firing);
        expect(repeat.json().alerts).toEqual([{ id, external_uid: uid, outcome: "duplicate" }]);
        tick();
        change = deliver(
          h,
          registration,
          checkoutBody([{ status: "resolved", fingerprint: uid, startsAt: T0, endsAt: T1 }]),
        );
        void change.then(() => {
          changeSettled = true;
        });
        // The change's transaction waits for this one's lock (a backend of this test's database
        // waiting on a lock; other test files may share the server).
        await waitFor(async () => {
          const { rows } = await database.db.execute(
            sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
          );
          return rows.length > 0 ? true : undefined;
        });
        expect(changeSettled).toBe(false);
      });
      if (!change) throw new Error("the change was not sent");
      const changed = await change;
      expect(changed.json().alerts).toEqual([{ id, external_uid: uid, outcome: "resolved" }]);
      // Read from the table: the marker is not an investigation the API could present.
      const { rows } = await database.db.execute(
        sql`select status, investigation from alerts where id = ${id}`,
      );
      expect(rows).toEqual([{ status: "resolved", investigation: { held: true } }]);
    });
  });
}

// The group's key read runs as a named statement, planned once. On the embedded database only once
// `alerts` has planner statistics: a generic plan made while the table was new and empty would be
// kept, however large the table grew. Those statistics come from the maintenance pass, which says
// so; until then the database is not asked again for every group.
describe("the key read on the embedded database", () => {
  let h: Harness & { stop(): Promise<void> };
  beforeAll(async () => {
    h = await startHarness("pglite");
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("runs unnamed until the maintenance pass gathers statistics of alerts, then named, with the same outcomes", async () => {
    const { auth } = await h.createKey();
    const path = triggerPathOf(
      await registerAlerts(h, auth, { source: "alertmanager", integration: "key-read" }),
    );
    const db = h.vigil.services.database.db;
    const preparedKeyReads = async () =>
      (
        await db.execute(sql`select name from pg_prepared_statements where name like 'alerts.keys.%'`)
      ).rows.map((row) => row.name);
    const outcomes = async (fingerprints: string[]) => {
      const body = amBody(
        fingerprints.map((fingerprint) => ({
          status: "firing",
          fingerprint,
          startsAt: "2026-11-27T08:00:00Z",
          labels: { alertname: "KeyRead", fingerprint },
        })),
      );
      const response = await h.vigil.app.inject({
        method: "POST",
        url: path,
        headers: { "content-type": "application/json" },
        payload: body,
      });
      expect(response.statusCode, response.body).toBe(202);
      return (response.json() as { alerts: { outcome: string }[] }).alerts.map(({ outcome }) => outcome);
    };
    // More new alerts than autovacuum's analyze threshold (50 changes), so the pass analyzes alerts.
    const many = Array.from({ length: 60 }, (_, n) => `key-read-many-${n}`);

    expect(await outcomes(["key-read-1"])).toEqual(["created"]);
    expect(await outcomes(many)).toEqual(many.map(() => "created"));
    expect(await preparedKeyReads()).toEqual([]);
    // Statistics gathered behind the maintenance pass's back are not looked for on every group.
    await db.execute(sql`analyze alerts`);
    expect(await outcomes(["key-read-1"])).toEqual(["duplicate"]);
    expect(await preparedKeyReads()).toEqual([]);
    // New alerts past the threshold again, for the pass.
    const more = many.map((fingerprint) => `${fingerprint}-more`);
    expect(await outcomes(more)).toEqual(more.map(() => "created"));
    expect(await preparedKeyReads()).toEqual([]);

    const report = await maintainEmbeddedDatabase(db);
    expect(report.tables).toContainEqual(
      expect.objectContaining({ table: "public.alerts", action: "analyze" }),
    );
    expect(await outcomes(["key-read-1"])).toEqual(["duplicate"]);
    expect(await preparedKeyReads()).toEqual(["alerts.keys.1"]);
    expect(await outcomes(["key-read-2"])).toEqual(["created"]);
    expect(await outcomes(["key-read-2", ...many.slice(0, 3)])).toEqual([
      "duplicate",
      "duplicate",
      "duplicate",
      "duplicate",
    ]);
  });
});
