// The alert console API: listAlerts with its filters, sorts, pagination and summary; the
// categorization summary; and an operator's PATCH.
import { sql } from "drizzle-orm";
import { beforeAll, expect, it } from "vitest";
import { amBody, deliver, registerTrigger } from "../../../test/alerts.ts";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import { type Auth, describeEachEngine, type Harness } from "../../../test/harness.ts";

interface Seed {
  name: string;
  integration: string;
  severity: string;
  summary: string;
}

// Titles and descriptions hold the characters a naive LIKE would treat as wildcards.
const SEEDS: Seed[] = [
  { name: "DiskFull", integration: "prod", severity: "critical", summary: "disk /var at 100%" },
  {
    name: "HighLatency",
    integration: "prod",
    severity: "warning",
    summary: "p99 over 500ms on checkout_api",
  },
  { name: "ErrorRate", integration: "prod", severity: "error", summary: "5xx rate 12% (O'Brien's service)" },
  { name: "CertExpiry", integration: "staging", severity: "info", summary: "certificate expires in 20 days" },
  { name: "NodeDown", integration: "staging", severity: "critical", summary: "node worker-3 not ready" },
];

function body(seed: Seed, status: "firing" | "resolved" = "firing") {
  return amBody(
    [
      {
        status,
        fingerprint: `fp${seed.name.toLowerCase()}`,
        // Distinct trigger times: the tie-break after severity is the most recent trigger.
        startsAt: `2026-11-22T10:0${SEEDS.indexOf(seed)}:00Z`,
        endsAt: status === "resolved" ? "2026-11-22T10:30:00Z" : undefined,
        labels: { alertname: seed.name, severity: seed.severity },
        summary: seed.summary,
      },
    ],
    { groupKey: `{}:{alertname="${seed.name}"}` },
  );
}

describeEachEngine(
  "alert console",
  (harness) => {
    let auth: Auth;
    const ids = new Map<string, string>();

    async function inject(method: "GET" | "PATCH", url: string, payload?: object) {
      return harness().vigil.app.inject({ method, url, headers: auth, payload });
    }

    async function list(query = "") {
      const response = await inject("GET", `/app/sre/api/v1/alerts${query}`);
      expect(response.statusCode, response.body).toBe(200);
      return response.json();
    }

    const titles = (page: { alerts: { title: string }[] }) => page.alerts.map((alert) => alert.title);

    beforeAll(async () => {
      const h: Harness = harness();
      ({ auth } = await h.createKey());
      for (const integration of ["prod", "staging"]) {
        const url = await registerTrigger(h, auth, { source: "alertmanager", integration });
        for (const seed of SEEDS.filter((item) => item.integration === integration)) {
          const delivered = await deliver(h, url, body(seed));
          ids.set(seed.name, delivered.json().alerts[0].id);
        }
        if (integration === "staging") {
          // CertExpiry resolves: it leaves the active list and the summary.
          const cert = SEEDS.find((seed) => seed.name === "CertExpiry") as Seed;
          await deliver(h, url, body(cert, "resolved"));
        }
      }
      // What classification, storms and impact will set later, set here to test filters and sorts.
      // Out of their triage buckets, so a classification job (which may already have run) leaves
      // them as set here.
      const { db } = h.vigil.services.database;
      const set = async (name: string, values: ReturnType<typeof sql>) =>
        db.execute(sql`update alerts set ${values}, triage_bucket = null where id = ${ids.get(name)}`);
      await set(
        "DiskFull",
        sql`attention = 'needs_attention', impact_score = 40, analysis_status = 'completed'`,
      );
      await set(
        "HighLatency",
        sql`attention = 'others', impact_score = 90, alert_role = 'symptom', analysis_status = 'running'`,
      );
      await set(
        "ErrorRate",
        sql`attention = 'false_positive', impact_score = 90, analysis_status = 'failed'`,
      );
      await set(
        "NodeDown",
        sql`attention = 'needs_review', impact_score = 10, alert_role = 'cause', analysis_status = 'queued'`,
      );
    });

    it("lists active alerts by severity with the summary of active alerts", async () => {
      const page = await list();
      expect(titles(page)).toEqual(["NodeDown", "DiskFull", "ErrorRate", "HighLatency"]);
      expect(page).toMatchObject({ page: 1, page_size: 20, total: 4, total_pages: 1 });
      expect(page.summary).toEqual({
        total_active: 4,
        needs_attention: 1,
        others: 1,
        needs_review: 1,
        false_positive: 1,
      });
    });

    it("leaves raw_payload out with include_raw_payload=false, and names the field when it is no boolean", async () => {
      const whole = await list();
      expect(whole.alerts.every((alert: { raw_payload?: unknown }) => "raw_payload" in alert)).toBe(true);
      const lean = await list("?include_raw_payload=false");
      expect(lean.alerts.some((alert: { raw_payload?: unknown }) => "raw_payload" in alert)).toBe(false);
      // The same alerts, fields and order otherwise.
      expect(lean).toEqual({
        ...whole,
        alerts: whole.alerts.map(({ raw_payload: _payload, ...alert }: { raw_payload?: unknown }) => alert),
      });
      const bad = await inject("GET", "/app/sre/api/v1/alerts?include_raw_payload=maybe");
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ details: { field: "include_raw_payload" } });
    });

    it("sorts by impact, with severity as the tie-break", async () => {
      // HighLatency and ErrorRate share impact 90: ErrorRate (High) outranks HighLatency (Medium).
      expect(titles(await list("?sort_by=impact"))).toEqual([
        "ErrorRate",
        "HighLatency",
        "DiskFull",
        "NodeDown",
      ]);
    });

    it("switches the list with status while the summary stays on active alerts", async () => {
      const resolved = await list("?status=resolved");
      expect(titles(resolved)).toEqual(["CertExpiry"]);
      expect(resolved.summary.total_active).toBe(4);
      expect(titles(await list("?status=ignored"))).toEqual([]);
    });

    it("filters by attention, source, severity bucket and role", async () => {
      expect(titles(await list("?attention=needs_attention"))).toEqual(["DiskFull"]);
      expect(titles(await list("?source_type=alertmanager"))).toHaveLength(4);
      expect(titles(await list("?source_type=grafana"))).toEqual([]);
      expect(titles(await list("?signal_severity=Critical"))).toEqual(["NodeDown", "DiskFull"]);
      expect(titles(await list("?alert_role=cause"))).toEqual(["NodeDown"]);
    });

    it("scopes list and summary by integration_names", async () => {
      const staging = await list("?integration_names=staging");
      expect(titles(staging)).toEqual(["NodeDown"]);
      expect(staging.summary).toEqual({
        total_active: 1,
        needs_attention: 0,
        others: 0,
        needs_review: 1,
        false_positive: 0,
      });
      expect(titles(await list("?integration_names=prod,staging"))).toHaveLength(4);
      expect((await list("?integration_names=nowhere")).summary.total_active).toBe(0);
    });

    it("searches title and description case-insensitively, taking %, _ and quotes literally", async () => {
      expect(titles(await list("?q=diskfull"))).toEqual(["DiskFull"]);
      expect(titles(await list(`?q=${encodeURIComponent("100%")}`))).toEqual(["DiskFull"]);
      expect(titles(await list(`?q=${encodeURIComponent("12%")}`))).toEqual(["ErrorRate"]);
      expect(titles(await list(`?q=${encodeURIComponent("%")}`))).toEqual(["DiskFull", "ErrorRate"]);
      expect(titles(await list("?q=checkout_api"))).toEqual(["HighLatency"]);
      expect(titles(await list("?q=_"))).toEqual(["HighLatency"]);
      expect(titles(await list(`?q=${encodeURIComponent("O'Brien")}`))).toEqual(["ErrorRate"]);
      expect(titles(await list(`?q=${encodeURIComponent("\\")}`))).toEqual([]);
      // Title and description are searched apart: a match may not run from one into the other.
      expect(titles(await list(`?q=${encodeURIComponent("DiskFull disk")}`))).toEqual([]);
      expect(titles(await list(`?q=${encodeURIComponent("DiskFull\u001fdisk")}`))).toEqual([]);
      expect(titles(await list(`?q=${encodeURIComponent("\u001f")}`))).toEqual([]);
      expect(titles(await list(`?q=${encodeURIComponent("disk /var")}`))).toEqual(["DiskFull"]);
    });

    // The harness sets SEARCH_COUNT_LIMIT to 2 (below).
    it("counts a search exactly up to SEARCH_COUNT_LIMIT, then gives a lower bound", async () => {
      const broad = await list("?q=e&page_size=2");
      expect(titles(broad)).toEqual(["NodeDown", "ErrorRate"]);
      expect(broad).toMatchObject({ total: 2, total_exact: false, total_pages: 1 });
      // A page that is neither empty nor full is the last: its total is known past the limit.
      expect(await list("?q=e")).toMatchObject({ total: 3, total_exact: true, total_pages: 1 });
      expect(await list("?q=e&page_size=2&page=2")).toMatchObject({
        total: 3,
        total_exact: true,
        total_pages: 2,
      });
      const twoOfThem = await list(`?q=${encodeURIComponent("%")}`);
      expect(twoOfThem).toMatchObject({ total: 2, total_exact: true, total_pages: 1 });
      expect(await list("?q=nothing-like-this")).toMatchObject({ total: 0, total_exact: true });
    });

    // The harness sets LIST_COUNT_LIMIT to 3 (below); four alerts are active.
    it("counts any other list exactly up to LIST_COUNT_LIMIT, then gives a lower bound", async () => {
      const filtered = await list("?source_type=alertmanager&page_size=2");
      expect(titles(filtered)).toEqual(["NodeDown", "DiskFull"]);
      expect(filtered).toMatchObject({ total: 3, total_exact: false, total_pages: 2 });
      // Later pages are still served, and the total counts at least the alerts up to the page.
      const second = await list("?source_type=alertmanager&page_size=2&page=2");
      expect(titles(second)).toEqual(["ErrorRate", "HighLatency"]);
      expect(second).toMatchObject({ total: 4, total_exact: false, total_pages: 2 });
      const fourth = await list("?source_type=alertmanager&page_size=1&page=4");
      expect(fourth).toMatchObject({ total: 4, total_exact: false, total_pages: 4 });
      // Past the end, the count is all there is to say.
      expect(await list("?source_type=alertmanager&page_size=2&page=3")).toMatchObject({
        total: 3,
        total_exact: false,
        total_pages: 2,
      });
      // The active list without filters is the summary's count: exact, whatever the limit.
      expect(await list()).toMatchObject({ total: 4, total_exact: true, summary: { total_active: 4 } });
      expect(await list("?status=resolved")).toMatchObject({ total: 1, total_exact: true });
    });

    it("pages stably", async () => {
      const pages = [];
      for (let page = 1; page <= 3; page++) pages.push(await list(`?page_size=2&page=${page}`));
      expect(pages.map(titles)).toEqual([["NodeDown", "DiskFull"], ["ErrorRate", "HighLatency"], []]);
      expect(pages[0]).toMatchObject({ total: 4, total_pages: 2 });
    });

    it("lists the active members of a storm", async () => {
      const stormId = "6f1c0d2e-0000-4000-8000-000000000001";
      await harness().vigil.services.database.db.execute(
        sql`update alerts set storm_id = ${stormId} where id in (${ids.get("DiskFull")}, ${ids.get("CertExpiry")})`,
      );
      expect(titles(await list(`?storm_id=${stormId}`))).toEqual(["DiskFull"]);
    });

    it("answers 400 naming the parameter for out-of-range and malformed values", async () => {
      const cases: [string, string][] = [
        ["page=0", "page"],
        ["page_size=0", "page_size"],
        ["page_size=501", "page_size"],
        ["status=open", "status"],
        ["sort_by=newest", "sort_by"],
        ["signal_severity=critical", "signal_severity"],
        ["attention=urgent", "attention"],
        ["alert_role=victim", "alert_role"],
        ["storm_id=storm-1", "storm_id"],
        ["integration_names=prod,,staging", "integration_names"],
        ["integration_names=", "integration_names"],
        // PostgreSQL text cannot hold U+0000: a clear 400, not a database error.
        ["q=disk%00full", "q"],
      ];
      for (const [query, field] of cases) {
        const response = await inject("GET", `/app/sre/api/v1/alerts?${query}`);
        expect(response.statusCode, query).toBe(400);
        expect(response.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
      }
    });

    it("summarizes categorization progress over active alerts", async () => {
      const response = await inject("GET", "/app/sre/api/v1/alerts/categorization/summary");
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        total_active: 4,
        not_started: 0,
        in_progress: 2,
        completed: 1,
        failed: 1,
        is_running: true,
      });
      const prod = await inject(
        "GET",
        "/app/sre/api/v1/alerts/categorization/summary?integration_names=prod",
      );
      expect(prod.json()).toEqual({
        total_active: 3,
        not_started: 0,
        in_progress: 1,
        completed: 1,
        failed: 1,
        is_running: true,
      });
      const bad = await inject("GET", "/app/sre/api/v1/alerts/categorization/summary?integration_names=,");
      expect(bad.statusCode).toBe(400);
    });

    it("lets an operator ignore an alert with a reason, and set it back to active, with history", async () => {
      const id = ids.get("HighLatency") as string;
      const ignored = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, {
        status: "ignored",
        ignore_reason: "known issue, fix deploying",
      });
      expect(ignored.statusCode).toBe(200);
      expect(ignored.json()).toMatchObject({
        status: "ignored",
        ignore_reason: "known issue, fix deploying",
      });
      expect(titles(await list("?status=ignored"))).toEqual(["HighLatency"]);
      expect((await list()).summary.total_active).toBe(3);
      // Ignoring it again without a reason keeps the reason it has; a new one replaces it.
      const again = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, { status: "ignored" });
      expect(again.json()).toMatchObject({ status: "ignored", ignore_reason: "known issue, fix deploying" });
      const reworded = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, {
        status: "ignored",
        ignore_reason: "known issue, fix deployed at 14:00",
      });
      expect(reworded.json()).toMatchObject({ ignore_reason: "known issue, fix deployed at 14:00" });

      // Setting it back to active drops the reason: one sent along is refused, not recorded and lost.
      const withReason = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, {
        status: "active",
        ignore_reason: "fixed",
      });
      expect(withReason.statusCode).toBe(400);
      expect(withReason.json()).toMatchObject({
        code: "VALIDATION_FAILED",
        details: { field: "ignore_reason" },
      });
      // A blank reason is none.
      const blank = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, { ignore_reason: "   " });
      expect(blank.json()).toMatchObject({ status: "ignored", ignore_reason: null });
      const back = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, {
        status: "active",
        ignore_reason: null,
      });
      expect(back.json()).toMatchObject({ status: "active", ignore_reason: null });
      const history = await inject("GET", `/app/sre/api/v1/alerts/${id}/history`);
      const operatorEvents = history
        .json()
        .events.filter((event: { actor: string }) => event.actor === "operator");
      expect(
        operatorEvents.map((event: { kind: string; status_after: string }) => [
          event.kind,
          event.status_after,
        ]),
      ).toEqual([
        ["ignored", "ignored"],
        ["ignored", "ignored"],
        ["ignored", "ignored"],
        ["triaged", "ignored"],
        ["unignored", "active"],
      ]);
    });

    it("lets an analyst set attention and its reason, by id or external_uid", async () => {
      const response = await inject("PATCH", "/app/sre/api/v1/alerts/fpnodedown", {
        attention: "needs_attention",
        attention_reason: "node loss takes out a third of capacity",
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        id: ids.get("NodeDown"),
        attention: "needs_attention",
        attention_reason: "node loss takes out a third of capacity",
        status: "active",
      });
      // Another label without a reason: the earlier reason explained the earlier label, so it goes.
      const relabelled = await inject("PATCH", "/app/sre/api/v1/alerts/fpnodedown", {
        attention: "needs_review",
      });
      expect(relabelled.json()).toMatchObject({
        attention: "needs_review",
        attention_reason: "set by an operator",
      });
      // The same label again keeps its reason; a blank reason is none.
      const same = await inject("PATCH", "/app/sre/api/v1/alerts/fpnodedown", { attention: "needs_review" });
      expect(same.json()).toMatchObject({ attention_reason: "set by an operator" });
      const blank = await inject("PATCH", "/app/sre/api/v1/alerts/fpnodedown", { attention_reason: " " });
      expect(blank.json()).toMatchObject({ attention: "needs_review", attention_reason: null });
    });

    it("refuses derived fields, bad values and impossible transitions with 400, and unknown alerts with 404", async () => {
      const id = ids.get("DiskFull") as string;
      const cases: [object, string][] = [
        [{ analysis_status: "completed" }, "analysis_status"],
        [{ impact_score: 100 }, "impact_score"],
        [{ storm_id: null }, "storm_id"],
        [{ alert_role: "cause" }, "alert_role"],
        [{ status: "resolved" }, "status"],
        [{ attention: "urgent" }, "attention"],
        [{ colour: "red" }, "colour"],
        [{ ignore_reason: "not ignored" }, "ignore_reason"],
        [{ status: "active" }, "status"],
      ];
      for (const [payload, field] of cases) {
        const response = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, payload);
        expect(response.statusCode, JSON.stringify(payload)).toBe(400);
        expect(response.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
      }
      const resolved = await inject("PATCH", `/app/sre/api/v1/alerts/${ids.get("CertExpiry")}`, {
        status: "ignored",
      });
      expect(resolved.statusCode).toBe(400);
      const empty = await inject("PATCH", `/app/sre/api/v1/alerts/${id}`, {});
      expect(empty.statusCode).toBe(400);
      const missing = await inject("PATCH", "/app/sre/api/v1/alerts/no-such-alert", { attention: "others" });
      expect(missing.statusCode).toBe(404);
      expect(
        (await list("?attention=needs_attention")).alerts.map((alert: { id: string }) => alert.id),
      ).toContain(id);
    });

    itEnforcesAuth(harness, { method: "GET", scope: "sre_alerts_read", url: "/app/sre/api/v1/alerts" });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "sre_alerts_read",
      url: "/app/sre/api/v1/alerts/categorization/summary",
    });
    itEnforcesAuth(harness, {
      method: "PATCH",
      scope: "sre_alerts_write",
      url: async (h, owner) => {
        const url = await registerTrigger(h, owner.auth, {
          source: "alertmanager",
          integration: `auth-${Math.random().toString(36).slice(2, 8)}`,
        });
        const delivered = await deliver(h, url, body(SEEDS[0] as Seed));
        return `/app/sre/api/v1/alerts/${delivered.json().alerts[0].id}`;
      },
      body: { attention: "others" },
      ownedResource: true,
    });
  },
  { searchCountLimit: 2, listCountLimit: 3 },
);

describeEachEngine(
  "alert console: a search's count limit apart from the list's",
  (harness) => {
    it("counts a search up to SEARCH_COUNT_LIMIT even past LIST_COUNT_LIMIT", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const url = await registerTrigger(h, auth, { source: "alertmanager", integration: "counts" });
      for (const seed of SEEDS) await deliver(h, url, body(seed));
      const page = async (query: string) =>
        (
          await h.vigil.app.inject({ url: `/app/sre/api/v1/alerts${query}&page_size=1`, headers: auth })
        ).json();
      // Four alerts match "e" (all but DiskFull's "disk /var at 100%"): counted exactly.
      expect(await page("?q=e")).toMatchObject({ total: 4, total_exact: true });
      expect(await page("?source_type=alertmanager")).toMatchObject({ total: 2, total_exact: false });
    });
  },
  { searchCountLimit: 5, listCountLimit: 2 },
);
