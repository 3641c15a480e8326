// auto_investigate and test notifications (alert-sources.md 1.9): a source's test notification is
// ingested as an alert so the operator sees that it arrived, but the ingest starts no investigation
// for it; a real alert of the same delivery gets one.
import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { deliver, readAlert, registerTrigger } from "../../test/alerts.ts";
import { call, describeEachEngine, waitFor } from "../../test/harness.ts";

const testNotification = JSON.parse(
  readFileSync(
    new URL("../../test/fixtures/alert-payloads/grafana/v12-test-notification.json", import.meta.url),
    "utf8",
  ),
);

describeEachEngine("auto_investigate and test notifications", (harness) => {
  it("a test notification is ingested but not investigated; a real alert beside it is", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const trigger = await registerTrigger(h, auth, {
      source: "grafana",
      integration: "grafana-test",
      auto_investigate: true,
    });
    const [test] = testNotification.alerts;
    const real = {
      ...test,
      labels: { alertname: "DiskFull", instance: "db-1", service: "storage" },
      annotations: { summary: "disk full on db-1" },
      fingerprint: "real0000disk0001",
    };
    const response = await deliver(h, trigger, JSON.stringify({ ...testNotification, alerts: [test, real] }));
    expect(response.statusCode, response.body).toBe(202);
    const [testId, realId] = response.json().alerts.map((alert: { id: string }) => alert.id);
    expect((await readAlert(h, auth, testId)).labels.vigil_test).toBe("true");

    // The jobs are written with the alerts, in the delivery's transaction: one, for the real alert.
    const { rows } = await h.vigil.services.database.db.execute(
      sql`select data->>'alertId' as alert_id from pgboss.job where name = 'investigations.auto_investigate'
            and data->>'alertId' in (${testId}, ${realId})`,
    );
    expect(rows.map((row) => row.alert_id)).toEqual([realId]);

    await waitFor(async () => (await readAlert(h, auth, realId)).investigation ?? undefined);
    const listed = await call(h, auth, "GET", `/app/sre/api/v1/investigations?alert_id=${testId}`);
    expect(listed.json().total).toBe(0);
    expect((await readAlert(h, auth, testId)).investigation).toBeNull();
  });
});

// The job queue's workers poll once an hour here: an alert's investigation that waited for their
// poll would not start within the test. The delivery's commit wakes them.
describeEachEngine(
  "auto_investigate, woken by the delivery",
  (harness) => {
    it("starts each alert's investigation when its delivery commits, not at the workers' next poll", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const trigger = await registerTrigger(h, auth, {
        source: "grafana",
        integration: "grafana-wake",
        auto_investigate: true,
      });
      const [template] = testNotification.alerts;
      // Two deliveries one after the other: the workers' first fetch, at start, cannot have found either.
      for (const host of ["db-1", "db-2"]) {
        const alert = {
          ...template,
          labels: { alertname: "DiskFull", instance: host, service: "storage" },
          annotations: { summary: `disk full on ${host}` },
          fingerprint: `wake0000${host.replace("-", "")}000`,
        };
        const response = await deliver(h, trigger, JSON.stringify({ ...testNotification, alerts: [alert] }));
        expect(response.statusCode, response.body).toBe(202);
        const [{ id }] = response.json().alerts;
        const investigation = await waitFor(
          async () => (await readAlert(h, auth, id)).investigation ?? undefined,
        );
        expect(investigation).toMatchObject({ id: expect.any(String) });
        // Nobody asked for it: its stages go behind those of runs someone waits for.
        const { rows } = await h.vigil.services.database.db.execute(sql`
          select distinct j.priority from pgboss.job j join investigations i on i.trace_id::text = j.data->>'traceId'
          where j.name = 'automation.run_stage' and i.id = ${investigation.id}`);
        expect(rows).toEqual([{ priority: 0 }]);
      }
    });
  },
  {},
  { pollingIntervalSeconds: 3600 },
);
