// listAlerts over enough alerts to page, in a personal namespace and in an org: every page is the
// slice of a plain query (ORDER BY ... over the table, no deferred join), `total` is the plain count,
// and the summaries are a plain GROUP BY. The expected rows come from SQL written independently of
// list-alerts.ts: severity rather than display_priority, strpos rather than ILIKE.
import { type SQL, sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { amBody, deliver, registerTrigger } from "../../../test/alerts.ts";
import { type Auth, describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";

interface Tenant {
  name: string;
  auth: Auth;
  /** `orgId=...` selecting the tenant, or "" for the personal namespace. */
  orgQuery: string;
  where: SQL;
}

const SEVERITIES = ["critical", "error", "warning", "low", "info"];
// Texts with the characters a naive LIKE would take as wildcards or an escape.
const SUMMARIES = [
  "disk at 100% on node_7",
  "O'Brien's service is down",
  "path C:\\temp is full",
  "p99 over 500ms on checkout_api",
  "nothing special",
];
const ALERTS_PER_TENANT = 36;

function alertmanagerBody(tenant: string, status: "firing" | "resolved", numbers: number[]) {
  return amBody(
    numbers.map((n) => ({
      status,
      fingerprint: `${tenant}-${n}`,
      // Four alerts share each trigger time: ties that only the id breaks.
      startsAt: `2026-11-22T10:${String(Math.floor(n / 4)).padStart(2, "0")}:00Z`,
      endsAt: status === "resolved" ? "2026-11-22T11:00:00Z" : undefined,
      labels: { alertname: `Alert${n}`, severity: SEVERITIES[n % SEVERITIES.length] as string },
      summary: SUMMARIES[n % SUMMARIES.length] as string,
    })),
    { groupKey: `{}:{tenant="${tenant}"}` },
  );
}

const ORDERS = {
  severity: sql.raw("display_priority, triggered_at desc, id"),
  impact: sql.raw("impact_score desc, display_priority, triggered_at desc, id"),
};

/** Each list query and the plain condition it must equal (besides the tenant). */
const LISTS: [string, SQL][] = [
  ["", sql`status = 'active'`],
  ["status=resolved", sql`status = 'resolved'`],
  ["status=ignored", sql`status = 'ignored'`],
  ["signal_severity=High", sql`status = 'active' and severity = 'High'`],
  ["signal_severity=info&status=resolved", sql`status = 'resolved' and severity = 'info'`],
  ["alert_role=cause", sql`status = 'active' and alert_role = 'cause'`],
  ["attention=others", sql`status = 'active' and attention = 'others'`],
  ["source_type=alertmanager", sql`status = 'active' and source_type = 'alertmanager'`],
  ["source_type=grafana", sql`status = 'active' and source_type = 'grafana'`],
  ["integration_names=staging", sql`status = 'active' and integration_name = 'staging'`],
  [
    "status=resolved&alert_role=symptom&integration_names=prod,staging",
    sql`status = 'resolved' and alert_role = 'symptom' and integration_name in ('prod', 'staging')`,
  ],
];

/** Case-insensitive literal substring: what `q` means, without LIKE. */
function contains(text: string): SQL {
  return sql`(strpos(lower(title), lower(${text})) > 0 or strpos(lower(description), lower(${text})) > 0)`;
}

describeEachEngine("alert list paging and counts", (harness) => {
  const tenants: Tenant[] = [];

  async function ids(where: SQL, order: SQL): Promise<string[]> {
    const { rows } = await harness().vigil.services.database.db.execute(
      sql`select id from alerts where ${where} order by ${order}`,
    );
    return rows.map((row) => row.id as string);
  }

  async function list(tenant: Tenant, query: string) {
    const url = `/app/sre/api/v1/alerts?${[tenant.orgQuery, query].filter(Boolean).join("&")}`;
    const response = await harness().vigil.app.inject({ method: "GET", url, headers: tenant.auth });
    expect(response.statusCode, `${tenant.name} ${url}: ${response.body}`).toBe(200);
    return response.json();
  }

  /** Every page of `query` at `pageSize`, and one past the end, against the plain query's rows. */
  async function expectPagesOf(tenant: Tenant, query: string, expected: string[], pageSize: number) {
    const pages = Math.ceil(expected.length / pageSize);
    for (let page = 1; page <= pages + 1; page++) {
      const body = await list(tenant, `${query}&page=${page}&page_size=${pageSize}`);
      const label = `${tenant.name} ?${query} page ${page}`;
      expect(
        body.alerts.map((alert: { id: string }) => alert.id),
        label,
      ).toEqual(expected.slice((page - 1) * pageSize, page * pageSize));
      expect({ total: body.total, total_pages: body.total_pages }, label).toEqual({
        total: expected.length,
        total_pages: pages,
      });
    }
  }

  beforeAll(async () => {
    const h: Harness = harness();
    const person = await h.createKey();
    const orgId = await h.createOrg("sre");
    const member = await h.createKey({ orgIds: [orgId] });
    const { db } = h.vigil.services.database;
    const { rows } = await db.execute(sql`select user_id from api_keys where id = ${person.id}`);
    tenants.push(
      {
        name: "personal",
        auth: person.auth,
        orgQuery: "",
        where: sql`org_id is null and owner_id = ${rows[0]?.user_id as string}`,
      },
      { name: "org", auth: member.auth, orgQuery: `orgId=${orgId}`, where: sql`org_id = ${orgId}` },
    );
    for (const tenant of tenants) {
      for (const [integration, numbers] of [
        ["prod", Array.from({ length: ALERTS_PER_TENANT / 2 }, (_, i) => i)],
        ["staging", Array.from({ length: ALERTS_PER_TENANT / 2 }, (_, i) => ALERTS_PER_TENANT / 2 + i)],
      ] as const) {
        const url = await registerTrigger(
          h,
          tenant.auth,
          // Classified at once: batch mode would hold these alerts (no scope) for its window.
          { source: "alertmanager", integration, classify_mode: "immediate" },
          tenant.orgQuery ? `?${tenant.orgQuery}` : "",
        );
        const key = `${tenant.name}-${integration}`;
        for (const [status, sent] of [
          ["firing", numbers],
          ["resolved", numbers.filter((n) => n % 3 === 0)],
        ] as const) {
          const delivered = await deliver(h, url, alertmanagerBody(key, status, sent));
          expect(delivered.statusCode, delivered.body).toBeLessThan(300);
        }
      }
      // What classification, storms and operators set later, set here: few distinct values, so
      // every sort has ties for the id to break. Triage and storms are done first, and without a
      // triage bucket no classification job changes the rows afterwards.
      await waitFor(async () => {
        const { rows: busy } = await db.execute(sql`
          select count(*)::int as n from alerts
          where ${tenant.where} and (analysis_status in ('queued', 'running')
            or id in (select alert_id from alert_storm_queue))`);
        return busy[0]?.n === 0 ? true : undefined;
      });
      const n = sql`substring(external_uid from '[0-9]+$')::int`;
      await db.execute(sql`
        update alerts set
          triage_bucket = null,
          impact_score = (${n} % 3) * 40,
          alert_role = (array['symptom', 'cause', 'unknown'])[1 + (${n} / 2) % 3],
          attention = (array['needs_attention', 'needs_review', 'false_positive', 'others'])[1 + ${n} % 4],
          analysis_status = (array['none', 'queued', 'running', 'completed', 'failed'])[1 + ${n} % 5],
          status = case when ${n} % 7 = 1 then 'ignored' else status end
        where ${tenant.where}`);
    }
  });

  it("pages every list in both sorts exactly as the plain query, however deep, with exact totals", async () => {
    for (const tenant of tenants) {
      for (const [query, condition] of LISTS) {
        for (const [sortBy, order] of Object.entries(ORDERS)) {
          const expected = await ids(sql`${tenant.where} and ${condition}`, order);
          await expectPagesOf(tenant, `sort_by=${sortBy}${query ? `&${query}` : ""}`, expected, 5);
        }
      }
      // The tenant holds every kind of list above.
      const active = await ids(sql`${tenant.where} and status = 'active'`, ORDERS.severity);
      expect(active.length).toBeGreaterThan(10);
    }
  });

  it("searches with q literally (%, _, quotes, backslash), paged like the plain query", async () => {
    for (const tenant of tenants) {
      for (const text of ["100%", "%", "_", "node_7", "o'brien", "C:\\temp", "\\", "alert1"]) {
        for (const status of ["active", "resolved"]) {
          const expected = await ids(
            sql`${tenant.where} and status = ${status} and ${contains(text)}`,
            ORDERS.severity,
          );
          await expectPagesOf(tenant, `status=${status}&q=${encodeURIComponent(text)}`, expected, 4);
        }
      }
      // The searches above are not all empty.
      const percent = await ids(sql`${tenant.where} and ${contains("100%")}`, ORDERS.severity);
      expect(percent.length).toBeGreaterThan(0);
    }
  });

  it("summarizes each tenant's active alerts as a plain GROUP BY, whole and by integration", async () => {
    const { db } = harness().vigil.services.database;
    for (const tenant of tenants) {
      for (const integrations of [null, ["staging"], ["prod", "staging"], ["nowhere"]]) {
        const scope = integrations
          ? sql`${tenant.where} and status = 'active' and integration_name in (${sql.join(
              integrations.map((name) => sql`${name}`),
              sql`, `,
            )})`
          : sql`${tenant.where} and status = 'active'`;
        const query = integrations ? `integration_names=${integrations.join(",")}` : "";
        const byAttention = await db.execute(
          sql`select attention as key, count(*)::int as n from alerts where ${scope} group by attention`,
        );
        const attention = Object.fromEntries(byAttention.rows.map((row) => [row.key, row.n]));
        const total = byAttention.rows.reduce((sum, row) => sum + (row.n as number), 0);
        expect((await list(tenant, query)).summary, `${tenant.name} ${query}`).toEqual({
          total_active: total,
          needs_attention: attention.needs_attention ?? 0,
          others: attention.others ?? 0,
          needs_review: attention.needs_review ?? 0,
          false_positive: attention.false_positive ?? 0,
        });

        const byAnalysis = await db.execute(
          sql`select analysis_status as key, count(*)::int as n from alerts where ${scope} group by analysis_status`,
        );
        const analysis = Object.fromEntries(byAnalysis.rows.map((row) => [row.key, row.n as number]));
        const inProgress = (analysis.queued ?? 0) + (analysis.running ?? 0);
        const url = `/app/sre/api/v1/alerts/categorization/summary?${[tenant.orgQuery, query].filter(Boolean).join("&")}`;
        const categorization = await harness().vigil.app.inject({ url, headers: tenant.auth });
        expect(categorization.json(), `${tenant.name} ${query}`).toEqual({
          total_active: total,
          not_started: analysis.none ?? 0,
          in_progress: inProgress,
          completed: analysis.completed ?? 0,
          failed: analysis.failed ?? 0,
          is_running: inProgress > 0,
        });
      }
    }
  });

  it("keeps display_priority the rank of severity, and attention and analysis_status in their lists", async () => {
    const { db } = harness().vigil.services.database;
    for (const [change, constraint] of [
      [sql`display_priority = 2, severity = 'Critical'`, "alerts_display_priority_of_severity"],
      [sql`attention = 'urgent'`, "alerts_attention_known"],
      [sql`analysis_status = 'skipped'`, "alerts_analysis_status_known"],
    ] as const) {
      // drizzle wraps the driver's error: the constraint is named by its cause.
      await expect(db.execute(sql`update alerts set ${change}`)).rejects.toMatchObject({
        cause: { message: expect.stringContaining(`check constraint "${constraint}"`) },
      });
    }
  });
});
