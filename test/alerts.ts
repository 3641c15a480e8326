// Alert ingest through real HTTP, for the tests that drive it: alert-ingest registrations, deliveries
// to their trigger URL, the alert and its history read back through the API, and Alertmanager
// webhook bodies (payload version 4) built from a few fields per alert.
import { expect } from "vitest";
import type { Auth, Harness } from "./harness.ts";

// ---- registrations and deliveries ----

/** An alert-ingest registration as the API shows it. */
export interface AlertRegistration {
  id: string;
  platform_webhook_url: string;
  created_at: string;
  [field: string]: unknown;
}

/** Creates an alert-ingest registration (POST /app/sre/api/v1/alerts/webhook`query`), expecting 201. */
export async function registerAlerts(
  h: Harness,
  auth: Auth,
  body: object,
  query = "",
): Promise<AlertRegistration> {
  const response = await h.vigil.app.inject({
    method: "POST",
    url: `/app/sre/api/v1/alerts/webhook${query}`,
    headers: auth,
    payload: body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

/** The path a registration's trigger URL posts to. */
export const triggerPathOf = (registration: { platform_webhook_url: string }) =>
  `/platform${registration.platform_webhook_url}`;

/** Creates an alert-ingest registration as `registerAlerts` does; answers the path its trigger URL posts to. */
export async function registerTrigger(h: Harness, auth: Auth, body: object, query = ""): Promise<string> {
  return triggerPathOf(await registerAlerts(h, auth, body, query));
}

/** Posts `body` to a trigger path as a monitoring system would: JSON unless `headers` say otherwise. */
export function deliver(
  h: Harness,
  triggerPath: string,
  body: string | Buffer,
  headers: Record<string, string> = { "content-type": "application/json" },
) {
  return h.vigil.app.inject({ method: "POST", url: triggerPath, headers, payload: body });
}

/** Delivers a JSON body, expecting 202; answers its alerts' ids and ingest outcomes, in payload order. */
export async function deliverAlerts(
  h: Harness,
  triggerPath: string,
  body: string,
): Promise<{ id: string; outcome: string }[]> {
  const response = await deliver(h, triggerPath, body);
  expect(response.statusCode, response.body).toBe(202);
  return response
    .json()
    .alerts.map((alert: { id: string; outcome: string }) => ({ id: alert.id, outcome: alert.outcome }));
}

/** Delivers a JSON body, expecting 202; answers its alerts' ids, in payload order. */
export async function deliverIds(h: Harness, triggerPath: string, body: string): Promise<string[]> {
  return (await deliverAlerts(h, triggerPath, body)).map((alert) => alert.id);
}

// ---- reading alerts back ----

/** GET /app/sre/api/v1/alerts/:id (an id or an external uid), whatever it answers. */
export function getAlert(h: Harness, auth: Auth, id: string) {
  return h.vigil.app.inject({ url: `/app/sre/api/v1/alerts/${encodeURIComponent(id)}`, headers: auth });
}

/** The alert as getAlertV1 shows it; expects 200. */
export async function readAlert(h: Harness, auth: Auth, id: string) {
  const response = await getAlert(h, auth, id);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** The alert's history (GET /app/sre/api/v1/alerts/:id/history); expects 200. */
export async function readHistory(h: Harness, auth: Auth, id: string) {
  const response = await h.vigil.app.inject({
    url: `/app/sre/api/v1/alerts/${encodeURIComponent(id)}/history`,
    headers: auth,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { alert_id: string; events: Record<string, unknown>[] };
}

/** [kind, actor, storm_id, previous_storm_id] of each of the alert's history events, oldest first. */
export async function stormHistory(h: Harness, auth: Auth, id: string) {
  const { events } = await readHistory(h, auth, id);
  return events.map((event) => {
    const detail = event.detail as Record<string, unknown>;
    return [event.kind, event.actor, detail.storm_id ?? null, detail.previous_storm_id ?? null];
  });
}

// ---- Alertmanager webhook bodies ----

export interface AmAlert {
  status: "firing" | "resolved";
  /** Alertmanager's fingerprint: the alert's external_uid. */
  fingerprint: string;
  startsAt: string;
  /** Alertmanager's "not ended" zero time when absent. */
  endsAt?: string;
  labels: Record<string, string>;
  /** The summary annotation (the title); `<alertname> fired` when absent. */
  summary?: string;
  /** The description annotation; none when absent. */
  description?: string;
}

/** What the notification's group says besides its alerts. */
interface AmGroup {
  groupKey?: string;
  groupLabels?: Record<string, string>;
  /** Every alert's generatorURL. */
  generatorURL?: string;
}

/** The body Alertmanager posts (webhook payload version 4) for `alerts`: firing while any of them fires. */
export function amBody(alerts: AmAlert[], group: AmGroup = {}): string {
  const {
    groupKey = "{}:{}",
    groupLabels = {},
    generatorURL = "http://prometheus.example:9090/graph",
  } = group;
  return JSON.stringify({
    version: "4",
    groupKey,
    truncatedAlerts: 0,
    status: alerts.some((alert) => alert.status === "firing") ? "firing" : "resolved",
    receiver: "vigil",
    groupLabels,
    commonLabels: {},
    commonAnnotations: {},
    externalURL: "http://alertmanager.example:9093",
    alerts: alerts.map((alert) => ({
      status: alert.status,
      labels: alert.labels,
      annotations: {
        summary: alert.summary ?? `${alert.labels.alertname} fired`,
        ...(alert.description === undefined ? {} : { description: alert.description }),
      },
      startsAt: alert.startsAt,
      endsAt: alert.endsAt ?? "0001-01-01T00:00:00Z",
      generatorURL,
      fingerprint: alert.fingerprint,
    })),
  });
}

let investigated = 0;

/**
 * A new firing alert of `labels` (alertname PaymentsErrors unless given), through a registration
 * of its own, and its investigation started: the investigation's and the alert's ids.
 */
export async function investigateNewAlert(
  h: Harness,
  auth: Auth,
  labels: Record<string, string> = { service: "payments" },
): Promise<{ id: string; alertId: string }> {
  investigated += 1;
  const name = `investigated-${investigated}`;
  const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: name });
  const [alertId] = await deliverIds(
    h,
    trigger,
    amBody([
      {
        status: "firing",
        fingerprint: `${name}-${process.pid}`,
        startsAt: new Date().toISOString(),
        labels: { alertname: "PaymentsErrors", ...labels },
      },
    ]),
  );
  const started = await h.vigil.app.inject({
    method: "POST",
    url: `/app/sre/api/v1/alerts/${alertId}/investigate`,
    headers: auth,
  });
  expect(started.statusCode, started.body).toBe(200);
  return { id: started.json().investigation.id as string, alertId: alertId as string };
}

/** A conclusion the investigator's model review accepts: its JSON is the stub's answer. */
export const MODEL_CONCLUSION = {
  verdict: "real_problem",
  what_broke: "Payments answered errors to customers.",
  what_to_do: "Roll back the payments deploy of 10:02.",
  how_we_got_here: ["Read the alert"],
  hypotheses: [
    { statement: "A bad deploy", confidence: 0.7, status: "confirmed", rationale: "errors began" },
  ],
  citations: [],
};
