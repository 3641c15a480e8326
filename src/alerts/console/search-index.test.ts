// What `q` searches lives in a table of its own (alert_search), kept by triggers on alerts. What
// must hold: every alert is found by its current title and description under its current status,
// and a change that touches none of them (a classification) leaves its search row unwritten.
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { amBody, deliverIds, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, describeEachEngine, ENGINES, type Harness, waitFor } from "../../../test/harness.ts";
import { beforeMigration } from "../../../test/migrations.ts";

const startsAt = new Date(Date.now() - 60_000).toISOString();
const firing = (description: string, startsAt: string) =>
  amBody([
    {
      status: "firing",
      fingerprint: "fp-search",
      startsAt,
      labels: { alertname: "QueueBacklog", severity: "warning" },
      summary: "QueueBacklog on billing",
      description,
    },
  ]);
const resolved = amBody([
  {
    status: "resolved",
    fingerprint: "fp-search",
    startsAt,
    endsAt: new Date().toISOString(),
    labels: { alertname: "QueueBacklog", severity: "warning" },
    summary: "QueueBacklog on billing",
    description: "the backlog drained",
  },
]);

describeEachEngine("the search index of alerts", (harness) => {
  async function found(h: Harness, auth: Auth, q: string, status = "active") {
    const response = await h.vigil.app.inject({
      url: `/app/sre/api/v1/alerts?status=${status}&q=${encodeURIComponent(q)}`,
      headers: auth,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().alerts.map((alert: { id: string }) => alert.id);
  }

  async function searchRow(h: Harness, id: string) {
    const { rows } = await h.vigil.services.database.db.execute(sql`
      select s.active, s.text, s.xmin::text as written_by, a.xmin::text as alert_written_by,
        (select e.xmin::text from alert_events e where e.alert_id = a.id order by e.seq limit 1) as created_by
      from alerts a left join alert_search s on s.alert_id = a.id where a.id = ${id}`);
    return rows[0] as {
      active: boolean | null;
      text: string | null;
      written_by: string | null;
      alert_written_by: string;
      created_by: string;
    };
  }

  it("follows each alert's text and status, and is not written again by its classification", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, {
      source: "alertmanager",
      integration: "search",
      classify_mode: "immediate",
    });
    const [id] = await deliverIds(h, url, firing("consumer lag 120000 messages", startsAt));
    expect(await found(h, auth, "lag 120000")).toEqual([id]);

    // Classified (role all runs the workers): the alert row is written again, its search row not.
    const alert = await waitFor(async () => {
      const read = await readAlert(h, auth, id as string);
      return read.analysis_status === "completed" ? read : undefined;
    });
    const classified = await searchRow(h, id as string);
    expect(classified.alert_written_by).not.toBe(classified.created_by);
    expect(classified).toMatchObject({
      active: true,
      text: `${alert.title}\u001f${alert.description}`,
      written_by: classified.created_by,
    });
    expect(alert.description).toContain("consumer lag 120000 messages");

    // Resolved: found among resolved alerts by its new description, no longer among active ones.
    await deliverIds(h, url, resolved);
    expect(await found(h, auth, "drained", "resolved")).toEqual([id]);
    expect(await found(h, auth, "billing", "active")).toEqual([]);
    expect(await found(h, auth, "120000", "resolved")).toEqual([]);

    // Fired again with other text: active again, found by what it says now.
    await deliverIds(
      h,
      url,
      firing("consumer lag 990000 messages", new Date(Date.now() + 1000).toISOString()),
    );
    expect(await found(h, auth, "990000")).toEqual([id]);
    expect(await found(h, auth, "billing", "resolved")).toEqual([]);
    const refired = await readAlert(h, auth, id as string);
    expect(refired.description).toContain("consumer lag 990000 messages");
    expect(await searchRow(h, id as string)).toMatchObject({
      active: true,
      text: `${refired.title}\u001f${refired.description}`,
    });
  });

  it("holds one row per alert, written in the alerts' own transaction", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const url = await registerTrigger(h, auth, { source: "alertmanager", integration: "search-many" });
    const body = amBody(
      Array.from({ length: 30 }, (_, n) => ({
        status: "firing" as const,
        fingerprint: `fp-many-${n}`,
        startsAt,
        labels: { alertname: `Many${n}`, severity: "warning" },
        summary: `Many${n} fired`,
      })),
    );
    const ids = await deliverIds(h, url, body);
    const rows = await Promise.all(ids.map((id) => searchRow(h, id)));
    for (const row of rows) expect(row.written_by).toBe(row.created_by);
    expect(await found(h, auth, "Many17 ")).toEqual([ids[17]]);
  });
});

const SEARCH_MIGRATION = "0015_alert_search.sql";

for (const engine of ENGINES) {
  describe(`migration ${SEARCH_MIGRATION} [${engine}]`, () => {
    it("gives each stored alert its search row, active or not, and keeps it from then on", () =>
      beforeMigration(engine, SEARCH_MIGRATION, async (db, apply) => {
        const owner = "e8b7059f-2900-4675-9add-f93cd707f5aa";
        const alert = (id: string, title: string, description: string, status: string) => sql`
        insert into alerts (id, owner_id, source_type, integration_name, external_uid, title, description,
          source_severity, severity, display_priority, severity_mapping, status, labels, links, triggered_at,
          created_at, updated_at, last_status_change_at)
        values (${id}, ${owner}, 'alertmanager', 'prod', ${id}, ${title}, ${description}, 'critical', 'Critical', 1,
          'default', ${status}, '{}'::jsonb, '[]'::jsonb, now(), now(), now(), now())`;
        const active = "00000000-0000-4000-8000-000000000001";
        const resolved = "00000000-0000-4000-8000-000000000002";
        const later = "00000000-0000-4000-8000-000000000003";
        const rows = async () =>
          (await db.execute(sql`select alert_id, active, text from alert_search order by alert_id`)).rows;
        await db.execute(alert(active, "NodeDown", "node-7 unreachable", "active"));
        await db.execute(alert(resolved, "DiskFull", "", "resolved"));

        await apply();

        expect(await rows()).toEqual([
          { alert_id: active, active: true, text: "NodeDown\u001fnode-7 unreachable" },
          { alert_id: resolved, active: false, text: "DiskFull\u001f" },
        ]);
        // From then on the triggers keep it: an insert, a status change, a delete.
        await db.execute(alert(later, "CpuHigh", "95%", "active"));
        await db.execute(sql`update alerts set status = 'resolved' where id = ${active}`);
        await db.execute(sql`delete from alerts where id = ${resolved}`);
        expect(await rows()).toEqual([
          { alert_id: active, active: false, text: "NodeDown\u001fnode-7 unreachable" },
          { alert_id: later, active: true, text: "CpuHigh\u001f95%" },
        ]);
      }));
  });
}
