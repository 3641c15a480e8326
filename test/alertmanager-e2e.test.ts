// A real sender: Prometheus Alertmanager (the Debian package `prometheus-alertmanager`) with a webhook
// receiver pointing at a listening Vigil's trigger URL. Alerts posted to Alertmanager's API arrive in
// Vigil with Alertmanager's own fingerprints as external_uid, and resolve the same way. The binary is
// required, not optional: without it the test fails and says how to install it (.ci/run does).
import { afterAll, beforeAll, expect, it } from "vitest";
import type { AlertV1 } from "../src/alerts/schemas.ts";
import {
  type AlertmanagerProcess,
  type GettableAlert,
  type PostableAlert,
  poll,
  request,
  requireAlertmanager,
  startAlertmanager,
} from "./alertmanager-process.ts";
import { describeEachEngine, listenOnLoopback } from "./harness.ts";

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

describeEachEngine("Prometheus Alertmanager posting to a running Vigil", (harness) => {
  let alertmanager: AlertmanagerProcess | null = null;
  let vigilBase = "";
  let auth: { authorization: string } = { authorization: "" };
  const run = Math.random().toString(36).slice(2, 8);
  // Whole milliseconds, so the times Vigil returns compare equal to what was posted.
  const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();
  const alerts: PostableAlert[] = [
    {
      labels: { alertname: "HighLatency", service: "checkout", instance: "web-1", severity: "critical", run },
      annotations: { summary: "p99 latency above 2s", description: "checkout p99 is 2.4s on web-1" },
      startsAt,
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=latency",
    },
    {
      labels: { alertname: "HighLatency", service: "checkout", instance: "web-2", severity: "critical", run },
      annotations: { summary: "p99 latency above 2s", description: "checkout p99 is 2.1s on web-2" },
      startsAt,
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=latency",
    },
    {
      labels: { alertname: "DiskFull", service: "db", instance: "db-1", severity: "warning", run },
      annotations: { summary: "disk 95% full", runbook_url: "https://runbooks.example/disk-full" },
      startsAt,
      generatorURL: "http://prometheus.example:9090/graph?g0.expr=disk",
    },
  ];
  const expected: Record<string, { title: string; description: string; severity: string; bucket: string }> = {
    "web-1": {
      title: "HighLatency",
      description: "p99 latency above 2s\n\ncheckout p99 is 2.4s on web-1",
      severity: "critical",
      bucket: "Critical",
    },
    "web-2": {
      title: "HighLatency",
      description: "p99 latency above 2s\n\ncheckout p99 is 2.1s on web-2",
      severity: "critical",
      bucket: "Critical",
    },
    "db-1": { title: "DiskFull", description: "disk 95% full", severity: "warning", bucket: "Medium" },
  };
  /** Alertmanager's fingerprint of each alert, by its instance label. */
  const fingerprints = new Map<string, string>();

  beforeAll(async () => {
    const binary = requireAlertmanager();
    const { vigil, createKey } = harness();
    vigilBase = await listenOnLoopback(vigil);
    ({ auth } = await createKey());
    const registered = await request(`${vigilBase}/app/sre/api/v1/alerts/webhook`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ source: "alertmanager", integration: "e2e" }),
    });
    expect(registered.status).toBe(201);
    const registration = (await registered.json()) as { platform_webhook_url: string };
    expect(registration.platform_webhook_url).toMatch(/^\/api\/v1\/webhooks\/trigger\?apiKey=/);
    alertmanager = await startAlertmanager(binary, {
      webhookUrl: `${vigilBase}/platform${registration.platform_webhook_url}`,
    });
  }, 60_000);

  afterAll(async () => {
    await alertmanager?.stop();
  });

  function am(): AlertmanagerProcess {
    if (!alertmanager) throw new Error("alertmanager not started");
    return alertmanager;
  }

  async function postToAlertmanager(body: PostableAlert[]): Promise<void> {
    const response = await request(`${am().base}/api/v2/alerts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status, `${await response.clone().text()}\n${am().output()}`).toBe(200);
  }

  async function vigilAlert(uid: string): Promise<AlertV1 | undefined> {
    const response = await request(`${vigilBase}/app/sre/api/v1/alerts/${encodeURIComponent(uid)}`, {
      headers: auth,
    });
    if (response.status === 404) return undefined;
    expect(response.status).toBe(200);
    return (await response.json()) as AlertV1;
  }

  it("delivers firing alerts that Vigil stores under Alertmanager's fingerprints", async () => {
    await postToAlertmanager(alerts);

    // Alertmanager's own fingerprints, from its API.
    await poll(
      "Alertmanager to list the posted alerts",
      async () => {
        const response = await request(`${am().base}/api/v2/alerts?filter=run%3D%22${run}%22`);
        const listed = (await response.json()) as GettableAlert[];
        if (listed.length < alerts.length) return undefined;
        for (const alert of alerts) {
          const match = listed.find((item) => sameLabels(item.labels, alert.labels));
          if (!match) return undefined;
          expect(match.status.state).toBe("active");
          fingerprints.set(alert.labels.instance as string, match.fingerprint);
        }
        return true;
      },
      am().output,
    );
    expect(new Set(fingerprints.values()).size).toBe(alerts.length);
    for (const fingerprint of fingerprints.values()) expect(fingerprint).toMatch(/^[0-9a-f]{16}$/);

    for (const alert of alerts) {
      const instance = alert.labels.instance as string;
      const fingerprint = fingerprints.get(instance) as string;
      const stored = await poll(
        `Vigil to show the ${instance} alert (${fingerprint})`,
        async () => {
          const found = await vigilAlert(fingerprint);
          return found?.status === "active" ? found : undefined;
        },
        am().output,
      );
      const want = expected[instance];
      expect(stored.external_uid).toBe(fingerprint);
      expect(stored.source_type).toBe("alertmanager");
      expect(stored.integration_name).toBe("e2e");
      expect(stored.title).toBe(want?.title);
      expect(stored.description).toBe(want?.description);
      expect(stored.source_severity).toBe(want?.severity);
      expect(stored.signal_severity).toBe(want?.bucket);
      expect(stored.labels).toEqual(alert.labels);
      expect(Date.parse(stored.triggered_at)).toBe(Date.parse(startsAt));
      expect(stored.resolved_at).toBeNull();
      expect(stored.ingested_via).toBe("push");
      expect(stored.links).toContainEqual({ kind: "source", url: alert.generatorURL });

      // The body is Alertmanager's own webhook (version 4), kept verbatim, with the fingerprint in it.
      const payload = JSON.parse(stored.raw_payload ?? "null") as {
        version: string;
        receiver: string;
        groupLabels: Record<string, string>;
        alerts: { fingerprint: string; status: string; labels: Record<string, string> }[];
      };
      expect(payload.version).toBe("4");
      expect(payload.receiver).toBe("vigil");
      expect(payload.groupLabels).toEqual({ alertname: alert.labels.alertname });
      const sent = payload.alerts.find((item) => item.fingerprint === fingerprint);
      expect(sent?.status).toBe("firing");
      expect(sent?.labels).toEqual(alert.labels);
    }
    // Alertmanager groups both HighLatency alerts: a body carrying both reached Vigil and is stored.
    // Usually one body creates both; on a loaded machine the group may first flush with one of them,
    // and then the body that created the other carries both.
    const groupSizes = await Promise.all(
      ["web-1", "web-2"].map(async (instance) => {
        const stored = await vigilAlert(fingerprints.get(instance) as string);
        return (JSON.parse(stored?.raw_payload ?? "{}") as { alerts?: unknown[] }).alerts?.length ?? 0;
      }),
    );
    expect(Math.max(...groupSizes)).toBe(2);

    const listed = await request(`${vigilBase}/app/sre/api/v1/alerts?status=active&page_size=100`, {
      headers: auth,
    });
    const list = (await listed.json()) as { alerts: AlertV1[] };
    expect(list.alerts.map((alert) => alert.external_uid).sort()).toEqual([...fingerprints.values()].sort());
  }, 90_000);

  it("resolves them when Alertmanager sends the resolve", async () => {
    expect(fingerprints.size).toBe(alerts.length);
    const endsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 1_000).toISOString();
    await postToAlertmanager(alerts.map((alert) => ({ ...alert, endsAt })));

    for (const alert of alerts) {
      const instance = alert.labels.instance as string;
      const fingerprint = fingerprints.get(instance) as string;
      const stored = await poll(
        `Vigil to show the ${instance} alert resolved`,
        async () => {
          const found = await vigilAlert(fingerprint);
          return found?.status === "resolved" ? found : undefined;
        },
        am().output,
      );
      expect(stored.external_uid).toBe(fingerprint);
      expect(stored.resolved_at).not.toBeNull();
      expect(Date.parse(stored.resolved_at as string)).toBe(Date.parse(endsAt));
      expect(Date.parse(stored.triggered_at)).toBe(Date.parse(startsAt));
      expect(stored.refire_count).toBe(0);
      const payload = JSON.parse(stored.raw_payload ?? "null") as {
        alerts: { fingerprint: string; status: string }[];
      };
      expect(payload.alerts.find((item) => item.fingerprint === fingerprint)?.status).toBe("resolved");
    }

    const history = await request(`${vigilBase}/app/sre/api/v1/alerts/${fingerprints.get("db-1")}/history`, {
      headers: auth,
    });
    const { events } = (await history.json()) as { events: { kind: string }[] };
    expect(events.map((event) => event.kind)).toEqual(["created", "resolved"]);
  }, 90_000);
});
