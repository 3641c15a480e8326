// Pull sync against a real Prometheus Alertmanager on loopback (one per test, so each starts empty):
// what its /api/v2/alerts lists is ingested with ingested_via=pull under Alertmanager's fingerprints,
// silences and inhibitions become ignored, alerts that disappear are resolved, and a failed fetch
// changes nothing. The cron schedule is off here (schedules: []) so only the test starts syncs.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { sql } from "drizzle-orm";
import { afterEach, expect, it } from "vitest";
import {
  type AlertmanagerProcess,
  freePort,
  type PostableAlert,
  poll,
  requireAlertmanager,
  startAlertmanager,
} from "../../../test/alertmanager-process.ts";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import { describeEachEngine, type Harness, startHarness } from "../../../test/harness.ts";
import { workContext } from "../../core/context.ts";
import type { AlertV1 } from "../schemas.ts";
import { alertSyncRuns } from "../tables.ts";
import { syncDueIntegrations } from "./pull-sync.ts";
import type { AlertSyncRun } from "./schemas.ts";

type Auth = { authorization: string };

const SCHEDULED_JOB = "alerts.sync_integrations";
const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 120_000).toISOString();

function alert(name: string, labels: Record<string, string> = {}): PostableAlert {
  return {
    labels: { alertname: name, severity: "warning", service: name.toLowerCase(), ...labels },
    annotations: { summary: `${name} is firing` },
    startsAt,
    generatorURL: `http://prometheus.example:9090/graph?g0.expr=${name}`,
  };
}

const completed = (counts: Partial<AlertSyncRun["counts"]>, name: string, trigger = "manual") => ({
  id: expect.stringMatching(/^[0-9a-f-]{36}$/),
  integration_name: name,
  trigger,
  status: "completed",
  started_at: expect.any(String),
  finished_at: expect.any(String),
  counts: { fetched: 0, created: 0, updated: 0, resolved: 0, unchanged: 0, ...counts },
  error: null,
});

describeEachEngine(
  "alert pull sync",
  (harness) => {
    const running: AlertmanagerProcess[] = [];
    afterEach(async () => {
      for (const am of running.splice(0)) await am.stop();
    });

    async function alertmanager(): Promise<AlertmanagerProcess> {
      const am = await startAlertmanager(requireAlertmanager());
      running.push(am);
      return am;
    }

    async function createIntegration(auth: Auth, body: Record<string, unknown>, query = "") {
      const response = await harness().vigil.app.inject({
        method: "POST",
        url: `/api/v1/integrations${query}`,
        headers: auth,
        payload: { type: "alertmanager", ...body },
      });
      expect(response.statusCode, response.body).toBe(201);
    }

    /** An Alertmanager push registration of `integration`; answers its trigger path. */
    async function registerPush(auth: Auth, integration: string): Promise<string> {
      const registered = await harness().vigil.app.inject({
        method: "POST",
        url: "/app/sre/api/v1/alerts/webhook",
        headers: auth,
        payload: { source: "alertmanager", integration },
      });
      expect(registered.statusCode, registered.body).toBe(201);
      return `/platform${(registered.json() as { platform_webhook_url: string }).platform_webhook_url}`;
    }

    async function sync(auth: Auth, name: string, query = ""): Promise<AlertSyncRun> {
      const response = await harness().vigil.app.inject({
        method: "POST",
        url: `/app/sre/api/v1/integrations/${name}/sync${query}`,
        headers: auth,
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    }

    async function getAlert(auth: Auth, uid: string): Promise<AlertV1> {
      const response = await harness().vigil.app.inject({
        url: `/app/sre/api/v1/alerts/${uid}`,
        headers: auth,
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    }

    async function historyKinds(auth: Auth, uid: string): Promise<string[]> {
      const response = await harness().vigil.app.inject({
        url: `/app/sre/api/v1/alerts/${uid}/history`,
        headers: auth,
      });
      return (response.json() as { events: { kind: string }[] }).events.map((event) => event.kind);
    }

    /** Posts the alerts and waits until Alertmanager lists them all; answers fingerprint by alertname. */
    async function fire(am: AlertmanagerProcess, alerts: PostableAlert[]): Promise<Record<string, string>> {
      await am.postAlerts(alerts);
      const names = alerts.map((item) => item.labels.alertname);
      const listed = await am.waitForAlerts(`Alertmanager to list ${names.join(", ")}`, (items) =>
        names.every((name) => items.some((item) => item.labels.alertname === name)),
      );
      return Object.fromEntries(listed.map((item) => [item.labels.alertname, item.fingerprint]));
    }

    /** Re-posts the alerts with endsAt in the past; Alertmanager stops listing them. */
    async function resolveInAlertmanager(am: AlertmanagerProcess, alerts: PostableAlert[]): Promise<void> {
      const endsAt = new Date(Date.now() - 1000).toISOString();
      await am.postAlerts(alerts.map((item) => ({ ...item, endsAt })));
      const names = alerts.map((item) => item.labels.alertname);
      await am.waitForAlerts(`Alertmanager to drop ${names.join(", ")}`, (items) =>
        items.every((item) => !names.includes(item.labels.alertname)),
      );
    }

    it("ingests what Alertmanager lists with ingested_via pull, under its fingerprints", async () => {
      const am = await alertmanager();
      const { auth } = await harness().createKey();
      await createIntegration(auth, { name: "prod-am", url: am.base });
      const fired = [alert("DiskFull", { instance: "db-1" }), alert("HighLatency", { severity: "critical" })];
      const fingerprints = await fire(am, fired);

      const run = await sync(auth, "prod-am");
      expect(run).toEqual(completed({ fetched: 2, created: 2 }, "prod-am"));
      expect(Date.parse(run.finished_at as string)).toBeGreaterThanOrEqual(Date.parse(run.started_at));

      const disk = await getAlert(auth, fingerprints.DiskFull as string);
      expect(disk).toMatchObject({
        external_uid: fingerprints.DiskFull,
        source_type: "alertmanager",
        integration_name: "prod-am",
        title: "DiskFull",
        description: "DiskFull is firing",
        source_severity: "warning",
        signal_severity: "Medium",
        status: "active",
        ingested_via: "pull",
        resolved_at: null,
        labels: { alertname: "DiskFull", severity: "warning", service: "diskfull", instance: "db-1" },
        links: [{ kind: "source", url: "http://prometheus.example:9090/graph?g0.expr=DiskFull" }],
      });
      expect(Date.parse(disk.triggered_at)).toBe(Date.parse(startsAt));
      // The raw payload is the alert's own item of Alertmanager's answer, not the whole list.
      const listed = (JSON.parse(await am.alertListText()) as { fingerprint: string }[]).find(
        (item) => item.fingerprint === fingerprints.DiskFull,
      );
      expect(listed).toBeDefined();
      expect(JSON.parse(disk.raw_payload ?? "null")).toEqual(listed);
      expect(await getAlert(auth, fingerprints.HighLatency as string)).toMatchObject({
        status: "active",
        ingested_via: "pull",
        signal_severity: "Critical",
      });
    });

    it("changes nothing on a second sync of the same list", async () => {
      const am = await alertmanager();
      const { auth } = await harness().createKey();
      await createIntegration(auth, { name: "am", url: am.base });
      const fingerprints = await fire(am, [alert("DiskFull"), alert("HighLatency")]);
      expect(await sync(auth, "am")).toEqual(completed({ fetched: 2, created: 2 }, "am"));
      const before = await getAlert(auth, fingerprints.DiskFull as string);

      expect(await sync(auth, "am")).toEqual(completed({ fetched: 2, unchanged: 2 }, "am"));
      expect(await getAlert(auth, fingerprints.DiskFull as string)).toEqual(before);
      expect(await historyKinds(auth, fingerprints.DiskFull as string)).toEqual(["created"]);
    });

    it("syncs only the alerts routed to settings.receiver when it is set", async () => {
      const am = await alertmanager();
      const { auth } = await harness().createKey();
      await createIntegration(auth, { name: "routed", url: am.base, settings: { receiver: "nowhere" } });
      await createIntegration(auth, { name: "every", url: am.base });
      const fingerprints = await fire(am, [alert("DiskFull"), alert("Watchdog")]);
      expect(await sync(auth, "routed")).toEqual(completed({ fetched: 1, created: 1 }, "routed"));
      expect(await sync(auth, "every")).toEqual(completed({ fetched: 2, created: 2 }, "every"));
      const listed = await harness().vigil.app.inject({
        url: "/app/sre/api/v1/alerts?integration_names=routed",
        headers: auth,
      });
      const routed = (listed.json() as { alerts: AlertV1[] }).alerts.map((item) => item.external_uid);
      expect(routed).toEqual([fingerprints.DiskFull]);
      const refused = await harness().vigil.app.inject({
        method: "POST",
        url: "/api/v1/integrations",
        headers: auth,
        payload: { name: "bad", type: "alertmanager", url: am.base, settings: { receiver: "vigil(" } },
      });
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toMatchObject({
        code: "VALIDATION_FAILED",
        details: { field: "settings.receiver" },
      });
    });

    it("ignores silenced and inhibited alerts, naming why", async () => {
      const am = await alertmanager();
      const { auth } = await harness().createKey();
      await createIntegration(auth, { name: "am", url: am.base });
      // ApiDown (critical) inhibits the warning with the same service label.
      const fingerprints = await fire(am, [
        alert("ApiDown", { severity: "critical", service: "checkout" }),
        alert("CheckoutErrors", { service: "checkout" }),
        alert("DiskFull"),
      ]);
      await am.waitForAlerts("the inhibition", (items) =>
        items.some(
          (item) => item.labels.alertname === "CheckoutErrors" && item.status.inhibitedBy.length > 0,
        ),
      );
      expect(await sync(auth, "am")).toEqual(completed({ fetched: 3, created: 3 }, "am"));
      expect(await getAlert(auth, fingerprints.CheckoutErrors as string)).toMatchObject({
        status: "ignored",
        ignore_reason: "alertmanager: inhibited",
        ingested_via: "pull",
      });
      expect((await getAlert(auth, fingerprints.DiskFull as string)).status).toBe("active");

      await am.silence({ alertname: "DiskFull" });
      await am.waitForAlerts("the silence", (items) =>
        items.some((item) => item.labels.alertname === "DiskFull" && item.status.silencedBy.length > 0),
      );
      expect(await sync(auth, "am")).toEqual(completed({ fetched: 3, updated: 1, unchanged: 2 }, "am"));
      expect(await getAlert(auth, fingerprints.DiskFull as string)).toMatchObject({
        status: "ignored",
        ignore_reason: "alertmanager: silenced",
      });
      expect(await historyKinds(auth, fingerprints.DiskFull as string)).toEqual(["created", "ignored"]);
    });

    it("resolves an alert that disappeared from the list, and re-fires it when it comes back", async () => {
      const am = await alertmanager();
      const { auth } = await harness().createKey();
      await createIntegration(auth, { name: "am", url: am.base });
      const disk = alert("DiskFull");
      const fingerprints = await fire(am, [disk, alert("HighLatency")]);
      await sync(auth, "am");

      await resolveInAlertmanager(am, [disk]);
      const run = await sync(auth, "am");
      expect(run).toEqual(completed({ fetched: 1, resolved: 1, unchanged: 1 }, "am"));
      const resolved = await getAlert(auth, fingerprints.DiskFull as string);
      expect(resolved).toMatchObject({ status: "resolved", ingested_via: "pull" });
      expect(resolved.resolved_at).toBe(run.finished_at);
      expect((await getAlert(auth, fingerprints.HighLatency as string)).status).toBe("active");
      // Gone stays gone: the next sync has nothing more to resolve.
      expect(await sync(auth, "am")).toEqual(completed({ fetched: 1, unchanged: 1 }, "am"));

      await fire(am, [{ ...disk, startsAt: new Date().toISOString() }]);
      expect(await sync(auth, "am")).toEqual(completed({ fetched: 2, updated: 1, unchanged: 1 }, "am"));
      expect(await getAlert(auth, fingerprints.DiskFull as string)).toMatchObject({
        status: "active",
        refire_count: 1,
        ingested_via: "pull",
      });
      expect(await historyKinds(auth, fingerprints.DiskFull as string)).toEqual([
        "created",
        "resolved",
        "refired",
      ]);
    });

    it("undoes a resolve it inferred when Alertmanager lists the same episode again (an empty restart), by pull or push", async () => {
      const am = await alertmanager();
      const empty = await alertmanager();
      const h = harness();
      const { auth } = await h.createKey();
      await createIntegration(auth, { name: "restarting", url: am.base });
      const triggerPath = await registerPush(auth, "restarting");
      const disk = alert("DiskFull");
      const latency = alert("HighLatency");
      const fingerprints = await fire(am, [disk, latency]);
      await sync(auth, "restarting");

      // Alertmanager restarted: it lists nothing until Prometheus sends the alerts again.
      const pointAt = async (url: string) => {
        const moved = await h.vigil.app.inject({
          method: "PUT",
          url: "/api/v1/integrations/restarting",
          headers: auth,
          payload: { name: "restarting", type: "alertmanager", url },
        });
        expect(moved.statusCode, moved.body).toBe(200);
      };
      await pointAt(empty.base);
      expect(await sync(auth, "restarting")).toEqual(completed({ resolved: 2 }, "restarting"));
      expect((await getAlert(auth, fingerprints.DiskFull as string)).status).toBe("resolved");

      // Refilled with the same starts: the episode never ended. The next sync reopens DiskFull...
      await pointAt(am.base);
      const relisted = await sync(auth, "restarting");
      expect(relisted.counts).toMatchObject({ fetched: 2, updated: 2 });
      expect(await getAlert(auth, fingerprints.DiskFull as string)).toMatchObject({
        status: "active",
        resolved_at: null,
        refire_count: 0,
        triggered_at: disk.startsAt,
      });
      expect(await historyKinds(auth, fingerprints.DiskFull as string)).toEqual([
        "created",
        "resolved",
        "updated",
      ]);

      // ...and a push of the same episode reopens an alert the same way.
      await pointAt(empty.base);
      await sync(auth, "restarting");
      expect((await getAlert(auth, fingerprints.HighLatency as string)).status).toBe("resolved");
      const pushed = await h.vigil.app.inject({
        method: "POST",
        url: triggerPath,
        headers: { "content-type": "application/json" },
        payload: {
          version: "4",
          status: "firing",
          receiver: "vigil",
          alerts: [{ ...latency, status: "firing", fingerprint: fingerprints.HighLatency }],
        },
      });
      expect(pushed.json().alerts[0].outcome).toBe("updated");
      expect(await getAlert(auth, fingerprints.HighLatency as string)).toMatchObject({
        status: "active",
        refire_count: 0,
      });
    });

    it("resolves the pulled alerts of an integration deleted or no longer synced, unless a registration of its name pushes them", async () => {
      const am = await alertmanager();
      const h = harness();
      const { auth } = await h.createKey();
      const ctx = workContext(h.vigil.services, h.vigil.log);
      const disk = alert("DiskFull");
      const fingerprints = await fire(am, [disk]);
      const uid = fingerprints.DiskFull as string;
      const byIntegration = async (name: string) => {
        const listed = await h.vigil.app.inject({
          url: `/app/sre/api/v1/alerts?integration_names=${name}`,
          headers: auth,
        });
        const resolved = await h.vigil.app.inject({
          url: `/app/sre/api/v1/alerts?status=resolved&integration_names=${name}`,
          headers: auth,
        });
        return { active: listed.json().total, resolved: resolved.json().total };
      };
      for (const name of ["doomed", "kept", "muted", "idle"]) {
        await createIntegration(auth, { name, url: am.base });
        await sync(auth, name);
      }
      await registerPush(auth, "kept");
      // A disabled registration takes no pushes: it keeps nothing current.
      await registerPush(auth, "idle");
      const [idle] = (
        await h.vigil.app.inject({ url: "/app/sre/api/v1/alerts/webhook?integration=idle", headers: auth })
      ).json();
      const disabled = await h.vigil.app.inject({
        method: "PUT",
        url: `/app/sre/api/v1/alerts/webhook/${idle.id}`,
        headers: auth,
        payload: { enabled: false },
      });
      expect(disabled.statusCode, disabled.body).toBe(200);
      for (const name of ["doomed", "kept", "idle"]) {
        const deleted = await h.vigil.app.inject({
          method: "DELETE",
          url: `/api/v1/integrations/${name}`,
          headers: auth,
        });
        expect(deleted.statusCode).toBe(204);
      }
      const muted = await h.vigil.app.inject({
        method: "PUT",
        url: "/api/v1/integrations/muted",
        headers: auth,
        payload: { name: "muted", type: "alertmanager", url: am.base, settings: { pull_sync: "false" } },
      });
      expect(muted.statusCode).toBe(200);

      await syncDueIntegrations({ ctx });
      expect(await byIntegration("doomed")).toEqual({ active: 0, resolved: 1 });
      expect(await byIntegration("muted")).toEqual({ active: 0, resolved: 1 });
      expect(await byIntegration("idle")).toEqual({ active: 0, resolved: 1 });
      // Pushes to the registration of that name still keep it current.
      expect(await byIntegration("kept")).toEqual({ active: 1, resolved: 0 });

      // The integration back under its name lists the same episode: the alert is active again.
      await createIntegration(auth, { name: "doomed", url: am.base });
      expect((await sync(auth, "doomed")).counts).toMatchObject({ fetched: 1, updated: 1 });
      expect(await byIntegration("doomed")).toEqual({ active: 1, resolved: 0 });
      const history = await h.vigil.app.inject({
        url: `/app/sre/api/v1/alerts?integration_names=doomed`,
        headers: auth,
      });
      const [doomed] = history.json().alerts;
      expect(doomed).toMatchObject({ external_uid: uid, refire_count: 0, status: "active" });
      const events = await h.vigil.app.inject({
        url: `/app/sre/api/v1/alerts/${doomed.id}/history`,
        headers: auth,
      });
      // The three integrations' copies share a scope: the storm correlator's events may come between.
      const lifecycle = (events.json().events as { kind: string; actor: string; source_event: string }[])
        .filter((event) => !event.kind.startsWith("storm_"))
        .map((event) => [event.kind, event.actor, event.source_event]);
      expect(lifecycle).toEqual([
        ["created", "source", "active"],
        // Vigil's inference, not Alertmanager's word.
        ["resolved", "vigil", "integration doomed no longer syncs"],
        ["updated", "source", "active"],
      ]);
    });

    it("keeps ingested_via push on an alert first pushed, and resolves only alerts it has seen", async () => {
      const am = await alertmanager();
      const h = harness();
      const { auth } = await h.createKey();
      await createIntegration(auth, { name: "shared", url: am.base });
      const triggerPath = await registerPush(auth, "shared");
      const disk = alert("DiskFull");
      const fingerprints = await fire(am, [disk]);
      // The webhook Alertmanager would send for it, plus one alert this Alertmanager does not have.
      const pushed = await h.vigil.app.inject({
        method: "POST",
        url: triggerPath,
        headers: { "content-type": "application/json" },
        payload: {
          version: "4",
          status: "firing",
          receiver: "vigil",
          alerts: [
            { ...disk, status: "firing", fingerprint: fingerprints.DiskFull },
            { ...alert("OtherSource"), status: "firing", fingerprint: "00000000000000aa" },
          ],
        },
      });
      expect(pushed.statusCode, pushed.body).toBe(202);
      expect((await getAlert(auth, fingerprints.DiskFull as string)).ingested_via).toBe("push");

      // Same data as pushed (jsonb hands the labels back in another key order): unchanged.
      const pulled = await sync(auth, "shared");
      expect(pulled).toEqual({
        ...completed({ fetched: 1 }, "shared"),
        counts: { fetched: 1, created: 0, updated: 0, resolved: 0, unchanged: 1 },
      });
      expect(await getAlert(auth, fingerprints.DiskFull as string)).toMatchObject({
        status: "active",
        ingested_via: "push",
      });
      expect((await getAlert(auth, "00000000000000aa")).status).toBe("active");

      // Seen by the sync once, so its disappearance is a resolve; the alert the sync never saw stays.
      await resolveInAlertmanager(am, [disk]);
      expect(await sync(auth, "shared")).toEqual(completed({ fetched: 0, resolved: 1 }, "shared"));
      expect(await getAlert(auth, fingerprints.DiskFull as string)).toMatchObject({
        status: "resolved",
        ingested_via: "push",
      });
      expect((await getAlert(auth, "00000000000000aa")).status).toBe("active");
    });

    it("fails the run without fetching when the url's host is no longer on INTEGRATION_ALLOWED_HOSTS", async () => {
      const am = await alertmanager();
      const h = harness();
      const { auth } = await h.createKey();
      await createIntegration(auth, { name: "am-listed", url: am.base });
      const fingerprints = await fire(am, [alert("NotFetched")]);
      // As after a restart with a narrower list: the integration was saved under the old one.
      const config = h.vigil.services.config;
      const allowedHosts = config.integrationAllowedHosts;
      config.integrationAllowedHosts = ["alertmanager.internal"];
      try {
        const run = await sync(auth, "am-listed");
        expect(run).toEqual({
          ...completed({}, "am-listed"),
          status: "failed",
          error: `host ${new URL(am.base).host} is not on INTEGRATION_ALLOWED_HOSTS`,
        });
      } finally {
        config.integrationAllowedHosts = allowedHosts;
      }
      const stored = await h.vigil.app.inject({
        url: `/app/sre/api/v1/alerts/${fingerprints.NotFetched}`,
        headers: auth,
      });
      expect(stored.statusCode).toBe(404);
    });

    it("fetches under the outbound rules: no internal host unless named, never Vigil's own or a metadata address", async () => {
      const am = await alertmanager();
      const h = harness();
      const { auth } = await h.createKey();
      await createIntegration(auth, { name: "am-rules", url: am.base });
      const fingerprints = await fire(am, [alert("NeverFetched")]);
      const amHost = new URL(am.base).host;
      const config = h.vigil.services.config;
      const { integrationAllowedHosts, port } = config;
      try {
        // An empty list means any public host: loopback is not one.
        config.integrationAllowedHosts = [];
        expect((await sync(auth, "am-rules")).error).toBe(
          `host ${amHost} is 127.0.0.1, an internal address: name the host on INTEGRATION_ALLOWED_HOSTS to call it`,
        );
        // Named on the list, but where Vigil itself listens.
        config.integrationAllowedHosts = integrationAllowedHosts;
        config.port = Number(new URL(am.base).port);
        expect((await sync(auth, "am-rules")).error).toBe(
          `host ${amHost} is Vigil's own address, which Vigil never calls`,
        );
      } finally {
        config.integrationAllowedHosts = integrationAllowedHosts;
        config.port = port;
      }
      const stored = await h.vigil.app.inject({
        url: `/app/sre/api/v1/alerts/${fingerprints.NeverFetched}`,
        headers: auth,
      });
      expect(stored.statusCode).toBe(404);

      config.integrationAllowedHosts = [...integrationAllowedHosts, "169.254.169.254"];
      try {
        await createIntegration(auth, { name: "am-metadata", url: "http://169.254.169.254/" });
        expect(await sync(auth, "am-metadata")).toEqual({
          ...completed({}, "am-metadata"),
          status: "failed",
          error:
            "host 169.254.169.254 is 169.254.169.254, a link-local, metadata or reserved address, which Vigil never calls",
        });
      } finally {
        config.integrationAllowedHosts = integrationAllowedHosts;
      }
      // With the rules satisfied, the same integration syncs.
      expect(await sync(auth, "am-rules")).toEqual(completed({ fetched: 1, created: 1 }, "am-rules"));
    });

    it("records a failed run and resolves nothing when Alertmanager cannot be reached", async () => {
      const am = await alertmanager();
      const h = harness();
      const { auth } = await h.createKey();
      await createIntegration(auth, { name: "am", url: am.base });
      const fingerprints = await fire(am, [alert("DiskFull")]);
      await sync(auth, "am");

      const deadPort = await freePort();
      const moved = await h.vigil.app.inject({
        method: "PUT",
        url: "/api/v1/integrations/am",
        headers: auth,
        payload: { name: "am", type: "alertmanager", url: `http://127.0.0.1:${deadPort}` },
      });
      expect(moved.statusCode).toBe(200);
      const failed = await sync(auth, "am");
      expect(failed).toEqual({
        ...completed({}, "am"),
        status: "failed",
        error: expect.stringMatching(
          new RegExp(`^GET http://127\\.0\\.0\\.1:${deadPort}/api/v2/alerts failed: .*ECONNREFUSED`),
        ),
      });
      expect(await getAlert(auth, fingerprints.DiskFull as string)).toMatchObject({ status: "active" });

      const runs = await h.vigil.app.inject({
        url: "/app/sre/api/v1/integrations/am/sync-runs",
        headers: auth,
      });
      expect(runs.statusCode).toBe(200);
      expect(runs.json()).toEqual({
        runs: [failed, completed({ fetched: 1, created: 1 }, "am")],
        total: 2,
        limit: 20,
        offset: 0,
      });
      const page = await h.vigil.app.inject({
        url: "/app/sre/api/v1/integrations/am/sync-runs?limit=1&offset=1",
        headers: auth,
      });
      expect(page.json()).toEqual({
        runs: [completed({ fetched: 1, created: 1 }, "am")],
        total: 2,
        limit: 1,
        offset: 1,
      });
    });

    it("sends the credentials, follows a path prefix, and fails on a refusal, a redirect or a huge answer", async () => {
      const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
      let answer: (res: import("node:http").ServerResponse) => void = (res) => res.end("[]");
      const server = createServer((req, res) => {
        seen.push({ url: req.url ?? "", headers: req.headers });
        answer(res);
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        const { auth } = await harness().createKey();
        await createIntegration(auth, {
          name: "bearer",
          url: `${base}/am/`,
          credentials: { token: "t0ken" },
        });
        await createIntegration(auth, {
          name: "basic",
          url: `${base}/prefix`,
          credentials: { username: "vigil", password: "s3cret" },
        });
        expect(await sync(auth, "bearer")).toEqual(completed({}, "bearer"));
        expect(await sync(auth, "basic")).toEqual(completed({}, "basic"));
        expect(seen.map((item) => [item.url, item.headers.authorization])).toEqual([
          ["/am/api/v2/alerts?active=true&silenced=true&inhibited=true", "Bearer t0ken"],
          [
            "/prefix/api/v2/alerts?active=true&silenced=true&inhibited=true",
            `Basic ${Buffer.from("vigil:s3cret").toString("base64")}`,
          ],
        ]);

        const failures: [(res: import("node:http").ServerResponse) => void, string][] = [
          [
            (res) => res.writeHead(401).end("Unauthorized by the peer\n"),
            "/prefix/api/v2/alerts answered 401",
          ],
          [(res) => res.writeHead(302, { location: "http://elsewhere.example/" }).end(), "answered 302"],
          [
            (res) => res.writeHead(200, { "content-length": String(64 * 1024 * 1024) }).end(),
            "answer larger than 16777216 bytes",
          ],
          [(res) => res.end('{"alerts":[]}'), "the answer is not an alert list: not an Alertmanager API v2"],
        ];
        for (const [respond, error] of failures) {
          answer = respond;
          const run = await sync(auth, "basic");
          expect(run.status, error).toBe("failed");
          expect(run.error).toContain(error);
          expect(run.error).not.toContain("s3cret");
          // The answer's body stays out of the error the tenant reads.
          expect(run.error).not.toContain("by the peer");
        }
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    it("answers 404 for an unknown integration and 400 for one that cannot be synced", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      await createIntegration(auth, { name: "grafana", type: "grafana", url: "http://grafana.example" });
      await createIntegration(auth, { name: "no-url" });
      const call = (method: "GET" | "POST", url: string) =>
        h.vigil.app.inject({ method, url, headers: auth });

      for (const [method, path] of [
        ["POST", "sync"],
        ["GET", "sync-runs"],
      ] as const) {
        const missing = await call(method, `/app/sre/api/v1/integrations/nope/${path}`);
        expect(missing.statusCode).toBe(404);
        expect(missing.json()).toEqual({
          error: "integration not found",
          code: "NOT_FOUND",
          details: { name: "nope" },
        });
      }
      const grafana = await call("POST", "/app/sre/api/v1/integrations/grafana/sync");
      expect(grafana.statusCode).toBe(400);
      expect(grafana.json()).toEqual({
        error: "integration grafana is of type grafana; only alertmanager integrations can be synced",
        code: "BAD_REQUEST",
        details: { name: "grafana", type: "grafana" },
      });
      const noUrl = await call("POST", "/app/sre/api/v1/integrations/no-url/sync");
      expect(noUrl.statusCode).toBe(400);
      expect(noUrl.json()).toEqual({
        error: "integration no-url has no url to sync from",
        code: "BAD_REQUEST",
        details: { name: "no-url" },
      });
      const badName = await call("POST", "/app/sre/api/v1/integrations/Not%20A%20Name/sync");
      expect(badName.statusCode).toBe(400);
      expect(badName.json()).toMatchObject({ code: "VALIDATION_FAILED" });
      for (const query of ["limit=0", "limit=101", "offset=-1", "limit=x"]) {
        const response = await call("GET", `/app/sre/api/v1/integrations/no-url/sync-runs?${query}`);
        expect(response.statusCode, query).toBe(400);
        expect(response.json(), query).toMatchObject({
          code: "VALIDATION_FAILED",
          details: { field: query.split("=")[0] },
        });
      }
      const maybe = await h.vigil.app.inject({
        method: "POST",
        url: "/api/v1/integrations",
        headers: auth,
        payload: {
          name: "maybe",
          type: "alertmanager",
          url: "http://127.0.0.1:1",
          settings: { pull_sync: "yes" },
        },
      });
      expect(maybe.statusCode).toBe(400);
      expect(maybe.json()).toMatchObject({ details: { field: "settings.pull_sync" } });
      const empty = await call("GET", "/app/sre/api/v1/integrations/no-url/sync-runs");
      expect(empty.json()).toEqual({ runs: [], total: 0, limit: 20, offset: 0 });
      // Pull sync off: a one-off sync would open the alerts the minute's sweep resolves again.
      const off = await h.vigil.app.inject({
        method: "POST",
        url: "/api/v1/integrations",
        headers: auth,
        payload: {
          name: "off",
          type: "alertmanager",
          url: "http://127.0.0.1:1",
          settings: { pull_sync: "false" },
        },
      });
      expect(off.statusCode).toBe(201);
      const refused = await call("POST", "/app/sre/api/v1/integrations/off/sync");
      expect(refused.statusCode).toBe(400);
      expect(refused.json()).toEqual({
        error: 'integration off has pull sync off; set settings.pull_sync to "true" to sync it',
        code: "BAD_REQUEST",
        details: { name: "off", field: "settings.pull_sync" },
      });
      const none = await call("GET", "/app/sre/api/v1/integrations/off/sync-runs");
      expect(none.json()).toMatchObject({ runs: [], total: 0 });
    });

    async function runsOf(auth: Auth, name: string): Promise<AlertSyncRun[]> {
      const response = await harness().vigil.app.inject({
        url: `/app/sre/api/v1/integrations/${name}/sync-runs?limit=100`,
        headers: auth,
      });
      expect(response.statusCode, response.body).toBe(200);
      return (response.json() as { runs: AlertSyncRun[] }).runs;
    }

    /** Waits until every named integration has a finished run; answers the runs by name. */
    async function finishedRuns(
      auth: Auth,
      names: string[],
      timeoutMs = 60_000,
    ): Promise<Map<string, AlertSyncRun[]>> {
      const done = new Map<string, AlertSyncRun[]>();
      await poll(
        "every integration's sync run to finish",
        async () => {
          for (const name of names) {
            if (done.has(name)) continue;
            const runs = await runsOf(auth, name);
            if (runs.length > 0 && runs.every((run) => run.status !== "running")) done.set(name, runs);
          }
          return done.size === names.length ? true : undefined;
        },
        () => `unfinished: ${names.filter((name) => !done.has(name)).join(", ")}`,
        timeoutMs,
      );
      return done;
    }

    it("the scheduled sync queues one sync job per Alertmanager integration with a url, of every tenant", async () => {
      const am = await alertmanager();
      const h = harness();
      const alice = await h.createKey();
      const orgId = await h.createOrg("sre");
      const bob = await h.createKey({ orgIds: [orgId] });
      await createIntegration(alice.auth, { name: "sched-a", url: am.base });
      await createIntegration(bob.auth, { name: "sched-b", url: am.base }, `?orgId=${orgId}`);
      await createIntegration(alice.auth, { name: "sched-grafana", type: "grafana", url: am.base });
      await createIntegration(alice.auth, { name: "sched-no-url" });
      // Kept for investigations beside a push registration: its pull sync is off.
      await createIntegration(alice.auth, {
        name: "sched-off",
        url: am.base,
        settings: { pull_sync: "false" },
      });
      // Another Alertmanager, with nothing to list: its alerts would share DiskFull's fingerprint.
      const quiet = await alertmanager();
      await createIntegration(alice.auth, {
        name: "sched-on",
        url: quiet.base,
        settings: { pull_sync: "true" },
      });
      const fingerprints = await fire(am, [alert("DiskFull")]);
      const ctx = workContext(h.vigil.services, h.vigil.log);
      const mine = (queued: { name: string }[]) =>
        queued
          .map((item) => item.name)
          .filter((name) => name.startsWith("sched-"))
          .sort();

      // Integrations of the other tests point at stopped Alertmanagers: they fail, and are skipped here.
      expect(mine(await syncDueIntegrations({ ctx }))).toEqual(["sched-a", "sched-b", "sched-on"]);
      const [a] = (await finishedRuns(alice.auth, ["sched-a"])).get("sched-a") ?? [];
      expect(a).toEqual(completed({ fetched: 1, created: 1 }, "sched-a", "scheduled"));
      const bobRuns = await poll("sched-b's run to finish", async () => {
        const response = await h.vigil.app.inject({
          url: `/app/sre/api/v1/integrations/sched-b/sync-runs?orgId=${orgId}`,
          headers: bob.auth,
        });
        const runs = (response.json() as { runs: AlertSyncRun[] }).runs;
        return runs[0] && runs[0].status !== "running" ? runs : undefined;
      });
      expect(bobRuns).toEqual([completed({ fetched: 1, created: 1 }, "sched-b", "scheduled")]);
      expect((await getAlert(alice.auth, fingerprints.DiskFull as string)).integration_name).toBe("sched-a");
      const inOrgAlert = await h.vigil.app.inject({
        url: `/app/sre/api/v1/alerts/${fingerprints.DiskFull}?orgId=${orgId}`,
        headers: bob.auth,
      });
      expect(inOrgAlert.json()).toMatchObject({ integration_name: "sched-b", ingested_via: "pull" });

      // Synced a moment ago: skipped, unless the interval allows it.
      expect(mine(await syncDueIntegrations({ ctx }))).toEqual([]);
      expect(mine(await syncDueIntegrations({ ctx, input: { minIntervalSeconds: 0 } }))).toContain("sched-a");
      const again = await poll("sched-a's second run to finish", async () => {
        const runs = await runsOf(alice.auth, "sched-a");
        return runs.length === 2 && runs[0]?.status !== "running" ? runs : undefined;
      });
      expect(again[0]).toEqual(completed({ fetched: 1, unchanged: 1 }, "sched-a", "scheduled"));

      // The scheduled job itself, sent to the queue, syncs a new integration.
      await createIntegration(alice.auth, { name: "sched-c", url: am.base });
      await h.vigil.services.queue.boss.send(SCHEDULED_JOB, {});
      const runs = (await finishedRuns(alice.auth, ["sched-c"])).get("sched-c");
      expect(runs).toEqual([completed({ fetched: 1, created: 1 }, "sched-c", "scheduled")]);
    });

    it("fails a run its process left running once its job has expired, and syncs that integration again", async () => {
      const am = await alertmanager();
      const h = harness();
      const alice = await h.createKey();
      await createIntegration(alice.auth, { name: "died-mid-sync", url: am.base });
      await createIntegration(alice.auth, { name: "still-syncing", url: am.base });
      const ctx = workContext(h.vigil.services, h.vigil.log);
      const { rows } = await h.vigil.services.database.db.execute(
        sql`select user_id from api_keys where id = ${alice.id}`,
      );
      const ownerId = String(rows[0]?.user_id);
      const minutesAgo = (minutes: number) => new Date(ctx.now().getTime() - minutes * 60_000);
      // A run whose job expired (5 minutes) with its process gone, and one still within its time.
      await h.vigil.services.database.db.insert(alertSyncRuns).values([
        {
          id: randomUUID(),
          ownerId,
          integrationName: "died-mid-sync",
          trigger: "scheduled",
          status: "running",
          startedAt: minutesAgo(7),
        },
        {
          id: randomUUID(),
          ownerId,
          integrationName: "still-syncing",
          trigger: "scheduled",
          status: "running",
          startedAt: minutesAgo(2),
        },
      ]);
      const due = (await syncDueIntegrations({ ctx })).map((item) => item.name);
      expect(due).toContain("died-mid-sync");
      expect(due).not.toContain("still-syncing");
      const died = await runsOf(alice.auth, "died-mid-sync");
      expect(died.find((run) => run.status === "failed")?.error).toBe("interrupted: the run never finished");
      expect((await runsOf(alice.auth, "still-syncing")).map((run) => run.status)).toEqual(["running"]);
    });

    it("syncs 25 answering integrations while 25 others never answer: each silent one fails on its own timeout", async () => {
      const am = await alertmanager();
      // Accepts the connection, reads the request, never answers.
      const silent = createServer(() => {});
      await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
      const silentBase = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      try {
        const h = harness();
        const { auth } = await h.createKey();
        // More silent ones than the syncs an instance runs at once (20), so some wait for a slot
        // that a silent one holds until its timeout.
        const answering = Array.from({ length: 25 }, (_, i) => `fan-up-${i}`);
        const dead = Array.from({ length: 25 }, (_, i) => `fan-dead-${i}`);
        // Interleaved, so that no ordering of the queue puts all the answering ones first.
        for (let i = 0; i < 25; i++) {
          await createIntegration(auth, { name: dead[i], url: `${silentBase}/dead-${i}` });
          await createIntegration(auth, { name: answering[i], url: am.base });
        }
        await fire(am, [alert("DiskFull")]);
        const ctx = workContext(h.vigil.services, h.vigil.log);
        const queued = (await syncDueIntegrations({ ctx })).map((item) => item.name);
        expect(queued).toEqual(expect.arrayContaining([...answering, ...dead]));
        // A second pass right away queues none of them again: each is either waiting in the queue
        // (the singleton key) or has a run under way or just finished.
        await syncDueIntegrations({ ctx });

        const runs = await finishedRuns(auth, [...answering, ...dead], 240_000);
        for (const name of answering) {
          expect(runs.get(name), name).toEqual([completed({ fetched: 1, created: 1 }, name, "scheduled")]);
        }
        for (const [i, name] of dead.entries()) {
          expect(runs.get(name), name).toEqual([
            {
              ...completed({}, name, "scheduled"),
              status: "failed",
              error: `GET ${silentBase}/dead-${i}/api/v2/alerts failed: no answer within 10000 ms`,
            },
          ]);
        }
      } finally {
        silent.closeAllConnections();
        silent.close();
      }
    }, 300_000);

    it("schedules alerts.sync_integrations every minute at start", async () => {
      const other = await startHarness(harness().engine);
      try {
        const schedules = await other.vigil.services.queue.boss.getSchedules();
        expect(schedules.map((item) => [item.name, item.cron, item.timezone])).toEqual([
          [SCHEDULED_JOB, "* * * * *", "UTC"],
        ]);
      } finally {
        await other.stop();
      }
    });

    const ownedIntegration = (suffix: string) => async (h: Harness, owner: { auth: Auth }) => {
      const name = `am-${Math.random().toString(36).slice(2, 8)}`;
      const created = await h.vigil.app.inject({
        method: "POST",
        url: "/api/v1/integrations",
        headers: owner.auth,
        payload: { name, type: "alertmanager", url: "http://127.0.0.1:9" },
      });
      expect(created.statusCode).toBe(201);
      return `/app/sre/api/v1/integrations/${name}/${suffix}`;
    };
    itEnforcesAuth(harness, {
      method: "POST",
      scope: "sre_alerts_write",
      url: ownedIntegration("sync"),
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "sre_alerts_read",
      url: ownedIntegration("sync-runs"),
      ownedResource: true,
    });
  },
  // The test Alertmanagers and peers listen on loopback, an internal address: named here, as a
  // laptop names its own Alertmanager. grafana.example is an integration that is never synced.
  { integrationAllowedHosts: ["127.0.0.1", "grafana.example"] },
  { schedules: [] },
);
