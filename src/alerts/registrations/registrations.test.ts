import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { deliver, readAlert, registerAlerts, triggerPathOf } from "../../../test/alerts.ts";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import { readFixture } from "../../../test/fixtures.ts";
import { type Auth, describeEachEngine, type Harness } from "../../../test/harness.ts";
import { HIDDEN_TOKEN } from "./registrations.ts";

const ALERTMANAGER_FIRING = readFixture("alertmanager", "firing-single-critical.json");

const PUBLIC_URL = "https://vigil.example.com";
const BASE = "/app/sre/api/v1/alerts/webhook";
const TOKEN_URL = /^\/api\/v1\/webhooks\/trigger\?apiKey=whk_[A-Za-z0-9_-]+$/;

async function create(h: Harness, auth: Auth, body: unknown, query = "") {
  return h.vigil.app.inject({
    method: "POST",
    url: `${BASE}${query}`,
    headers: auth,
    payload: body as never,
  });
}

/** Posts the Alertmanager fixture to a registration's trigger URL, as a monitoring system would. */
const trigger = (h: Harness, registration: { platform_webhook_url: string }) =>
  deliver(h, triggerPathOf(registration), ALERTMANAGER_FIRING);

const ownedUrl = async (h: Harness, owner: { auth: Auth }) => {
  const body = await registerAlerts(h, owner.auth, { source: "grafana", integration: randomUUID() });
  return `${BASE}/${body.id}`;
};

describeEachEngine(
  "alert webhook registrations",
  (harness) => {
    it("creates a registration with every default filled in and a working trigger URL", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const response = await create(h, auth, { source: "alertmanager" });
      expect(response.statusCode).toBe(201);
      const body = response.json();
      expect(body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        platform_webhook_id: body.id,
        platform_webhook_url: expect.stringMatching(TOKEN_URL),
        trigger_url: `${PUBLIC_URL}/platform${body.platform_webhook_url}`,
        app_name: "sre",
        source: "alertmanager",
        integration: "",
        auto_investigate: false,
        classify_mode: "batch",
        classify_batch_window_seconds: 60,
        classify_bucket_by: "storm_scope",
        classify_critical_bypass: true,
        severity_overrides: {},
        sns_auto_confirm: false,
        enabled: true,
        org_id: null,
        created_at: expect.any(String),
        updated_at: body.created_at,
      });
      expect(new Date(body.created_at).toISOString()).toBe(body.created_at);

      const triggered = await trigger(h, body);
      expect(triggered.statusCode, triggered.body).toBe(202);
      expect(triggered.json()).toMatchObject({ webhook_id: body.id, target_name: "sre/alertmanager/" });
    });

    it("keeps every setting given at create", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const settings = {
        source: "cloudwatch",
        integration: "prod-eu.aws_1~x",
        auto_investigate: true,
        classify_mode: "immediate",
        classify_batch_window_seconds: 300,
        classify_bucket_by: "service",
        classify_critical_bypass: false,
        severity_overrides: { sev2: "High", "P5-low": "info" },
        sns_auto_confirm: true,
        enabled: false,
      };
      const body = await registerAlerts(h, auth, settings);
      expect(body).toEqual({
        ...settings,
        id: expect.any(String),
        platform_webhook_id: body.id,
        platform_webhook_url: expect.stringMatching(TOKEN_URL),
        trigger_url: `${PUBLIC_URL}/platform${body.platform_webhook_url}`,
        app_name: "sre",
        org_id: null,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      // Created disabled: the trigger answers 404 until it is enabled.
      expect((await trigger(h, body)).statusCode).toBe(404);
    });

    it("takes the whole resource as the body: app_name at create, unchanged identity at update", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const response = await create(h, auth, { app_name: "sre", source: "grafana", integration: "whole" });
      expect(response.statusCode, response.body).toBe(201);
      const created = response.json();
      expect(created).toMatchObject({ app_name: "sre", source: "grafana", integration: "whole" });
      const updated = await h.vigil.app.inject({
        method: "PUT",
        url: `${BASE}/${created.id}`,
        headers: auth,
        payload: { app_name: "sre", source: "grafana", integration: "whole", auto_investigate: true },
      });
      expect(updated.statusCode, updated.body).toBe(200);
      expect(updated.json()).toEqual({ ...created, auto_investigate: true, updated_at: expect.any(String) });
    });

    it("reads a registration by id, and answers 404 for an unknown id", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await registerAlerts(h, auth, { source: "datadog", integration: "main" });
      const read = await h.vigil.app.inject({ url: `${BASE}/${created.id}`, headers: auth });
      expect(read.statusCode).toBe(200);
      expect(read.json()).toEqual(created);

      const unknownId = randomUUID();
      const missing = await h.vigil.app.inject({ url: `${BASE}/${unknownId}`, headers: auth });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({
        error: "alert webhook not found",
        code: "NOT_FOUND",
        details: { id: unknownId },
      });

      const notUuid = await h.vigil.app.inject({ url: `${BASE}/not-a-uuid`, headers: auth });
      expect(notUuid.statusCode).toBe(400);
      expect(notUuid.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "id" } });

      // A key that may only read alerts reads the registration without its token.
      const userName = `reader-${randomUUID()}`;
      const owner = await h.createKey({ userName });
      const reader = await h.createKey({ userName, scopes: ["sre_alerts_read"] });
      const own = await registerAlerts(h, owner.auth, { source: "grafana", integration: "wall" });
      expect(own.trigger_url).not.toContain(`apiKey=${HIDDEN_TOKEN}`);
      for (const url of [`${BASE}/${own.id}`, BASE]) {
        const shown = await h.vigil.app.inject({ url, headers: reader.auth });
        expect(shown.statusCode, url).toBe(200);
        const [row] = [shown.json()].flat();
        expect(row.id).toBe(own.id);
        expect(row.trigger_url).toBe(
          String(own.trigger_url).replace(/apiKey=[^&]*/, `apiKey=${HIDDEN_TOKEN}`),
        );
        expect(row.platform_webhook_url).toBe(
          String(own.platform_webhook_url).replace(/apiKey=[^&]*/, `apiKey=${HIDDEN_TOKEN}`),
        );
      }
    });

    it("lists registrations and resolves an import id {app_name}/{source}/{integration}", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const amDefault = await registerAlerts(h, auth, { source: "alertmanager" });
      const amProd = await registerAlerts(h, auth, { source: "alertmanager", integration: "prod" });
      const grafanaProd = await registerAlerts(h, auth, { source: "grafana", integration: "prod" });
      const list = async (query = "") => {
        const response = await h.vigil.app.inject({ url: `${BASE}${query}`, headers: auth });
        expect(response.statusCode, response.body).toBe(200);
        return response.json();
      };

      // Ordered by source, then integration.
      expect(await list()).toEqual([amDefault, amProd, grafanaProd]);
      expect(await list("?source=alertmanager")).toEqual([amDefault, amProd]);
      expect(await list("?integration=prod")).toEqual([amProd, grafanaProd]);
      // Import id sre/alertmanager/prod
      expect(await list("?source=alertmanager&integration=prod")).toEqual([amProd]);
      // Import id sre/alertmanager (empty integration segment)
      expect(await list("?source=alertmanager&integration=")).toEqual([amDefault]);
      expect(await list("?source=grafana&integration=")).toEqual([]);
      expect(await list("?source=zabbix")).toEqual([]);

      const badSource = await h.vigil.app.inject({ url: `${BASE}?source=nagios`, headers: auth });
      expect(badSource.statusCode).toBe(400);
      expect(badSource.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "source" } });
      const badIntegration = await h.vigil.app.inject({ url: `${BASE}?integration=a%2Fb`, headers: auth });
      expect(badIntegration.statusCode).toBe(400);
      expect(badIntegration.json()).toMatchObject({
        code: "VALIDATION_FAILED",
        details: { field: "integration" },
      });

      // Another tenant sees none of them.
      const stranger = await h.createKey();
      const theirs = await h.vigil.app.inject({ url: BASE, headers: stranger.auth });
      expect(theirs.json()).toEqual([]);
    });

    it("updates settings, and disabling makes the trigger answer 404 until enabled again", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await registerAlerts(h, auth, { source: "alertmanager", integration: "upd" });
      const update = (payload: object) =>
        h.vigil.app.inject({ method: "PUT", url: `${BASE}/${created.id}`, headers: auth, payload });

      const changed = await update({
        classify_mode: "immediate",
        classify_batch_window_seconds: 15,
        auto_investigate: true,
        severity_overrides: { critical: "High" },
      });
      expect(changed.statusCode, changed.body).toBe(200);
      const changedBody = changed.json();
      expect(changedBody).toEqual({
        ...created,
        classify_mode: "immediate",
        classify_batch_window_seconds: 15,
        auto_investigate: true,
        severity_overrides: { critical: "High" },
        updated_at: expect.any(String),
      });
      // Settings not named keep their value; the read sees the change.
      const read = await h.vigil.app.inject({ url: `${BASE}/${created.id}`, headers: auth });
      expect(read.json()).toEqual(changedBody);

      const disabled = await update({ enabled: false });
      expect(disabled.statusCode).toBe(200);
      expect(disabled.json()).toEqual({ ...changedBody, enabled: false, updated_at: expect.any(String) });
      const refused = await trigger(h, created);
      expect(refused.statusCode).toBe(404);
      expect(refused.json()).toEqual({
        msg: "webhook not found or disabled",
        errCode: "NOT_FOUND",
        extras: [{ webhook_id: created.id }],
      });

      const enabled = await update({ enabled: true });
      expect(enabled.json()).toMatchObject({ enabled: true });
      const accepted = await trigger(h, created);
      expect(accepted.statusCode, accepted.body).toBe(202);

      // The override set by the update is applied at ingest: critical -> High.
      const alertId = accepted.json().alerts[0].id;
      expect(await readAlert(h, auth, alertId)).toMatchObject({
        source_severity: "critical",
        signal_severity: "High",
      });

      // source and integration identify the registration: they cannot change.
      const moved = await update({ source: "grafana" });
      expect(moved.statusCode).toBe(400);
      expect(moved.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field: "source" } });
      for (const [field, value] of [
        ["integration", "other"],
        ["app_name", "other"],
      ]) {
        const renamed = await update({ [field as string]: value });
        expect(renamed.statusCode, renamed.body).toBe(400);
        expect(renamed.json()).toMatchObject({ code: "VALIDATION_FAILED", details: { field } });
      }

      const unknown = await h.vigil.app.inject({
        method: "PUT",
        url: `${BASE}/${randomUUID()}`,
        headers: auth,
        payload: { enabled: true },
      });
      expect(unknown.statusCode).toBe(404);
    });

    it("rotates the token: the old trigger URL answers 401, the new one works", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await registerAlerts(h, auth, { source: "alertmanager", integration: "rot" });
      const rotated = await h.vigil.app.inject({
        method: "POST",
        url: `${BASE}/${created.id}/rotate-token`,
        headers: auth,
      });
      expect(rotated.statusCode).toBe(200);
      const body = rotated.json();
      expect(body).toEqual({
        ...created,
        platform_webhook_url: expect.stringMatching(TOKEN_URL),
        trigger_url: `${PUBLIC_URL}/platform${body.platform_webhook_url}`,
        updated_at: expect.any(String),
      });
      expect(body.platform_webhook_url).not.toBe(created.platform_webhook_url);

      const old = await trigger(h, created);
      expect(old.statusCode).toBe(401);
      expect(old.json()).toEqual({ msg: "invalid webhook token", errCode: "UNAUTHENTICATED", extras: [] });
      expect((await trigger(h, body)).statusCode).toBe(202);

      const read = await h.vigil.app.inject({ url: `${BASE}/${created.id}`, headers: auth });
      expect(read.json().platform_webhook_url).toBe(body.platform_webhook_url);
    });

    it("deletes a registration: get is 404, the old trigger URL is 404 (not 401), and the key is free again", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await registerAlerts(h, auth, { source: "alertmanager", integration: "del" });
      const removed = await h.vigil.app.inject({
        method: "DELETE",
        url: `${BASE}/${created.id}`,
        headers: auth,
      });
      expect(removed.statusCode).toBe(204);
      expect(removed.body).toBe("");

      const gone = await h.vigil.app.inject({ url: `${BASE}/${created.id}`, headers: auth });
      expect(gone.statusCode).toBe(404);
      expect(gone.json()).toEqual({
        error: "alert webhook not found",
        code: "NOT_FOUND",
        details: { id: created.id },
      });
      const again = await h.vigil.app.inject({
        method: "DELETE",
        url: `${BASE}/${created.id}`,
        headers: auth,
      });
      expect(again.statusCode).toBe(404);
      const rotate = await h.vigil.app.inject({
        method: "POST",
        url: `${BASE}/${created.id}/rotate-token`,
        headers: auth,
      });
      expect(rotate.statusCode).toBe(404);

      const triggered = await trigger(h, created);
      expect(triggered.statusCode).toBe(404);
      expect(triggered.json()).toMatchObject({ errCode: "NOT_FOUND" });

      const list = await h.vigil.app.inject({ url: `${BASE}?integration=del`, headers: auth });
      expect(list.json()).toEqual([]);
      const recreated = await registerAlerts(h, auth, { source: "alertmanager", integration: "del" });
      expect(recreated.id).not.toBe(created.id);
    });

    it("answers 409 for a second registration of the same (tenant, app, source, integration)", async () => {
      const h = harness();
      const orgId = await h.createOrg("payments");
      const alice = await h.createKey({ orgIds: [orgId] });
      const bob = await h.createKey({ orgIds: [orgId] });
      await registerAlerts(h, alice.auth, { source: "sentry", integration: "web" });

      const second = await create(h, alice.auth, {
        source: "sentry",
        integration: "web",
        auto_investigate: true,
      });
      expect(second.statusCode).toBe(409);
      expect(second.json()).toEqual({
        error: "an alert webhook for sre/sentry/web already exists",
        code: "CONFLICT",
        details: { app_name: "sre", source: "sentry", integration: "web" },
      });
      // No half-created webhook was left behind.
      const list = await h.vigil.app.inject({ url: `${BASE}?source=sentry`, headers: alice.auth });
      expect(list.json()).toHaveLength(1);

      // Same source, other integration (including the default one): fine.
      await registerAlerts(h, alice.auth, { source: "sentry", integration: "mobile" });
      await registerAlerts(h, alice.auth, { source: "sentry" });
      const defaultAgain = await create(h, alice.auth, { source: "sentry", integration: "" });
      expect(defaultAgain.statusCode).toBe(409);

      // Another tenant (bob's personal namespace, or an org) may use the same key.
      await registerAlerts(h, bob.auth, { source: "sentry", integration: "web" });
      const inOrg = await registerAlerts(
        h,
        alice.auth,
        { source: "sentry", integration: "web" },
        `?orgId=${orgId}`,
      );
      expect(inOrg.org_id).toBe(orgId);
      // Inside the org the key belongs to the org, whoever asks.
      const bobInOrg = await create(h, bob.auth, { source: "sentry", integration: "web" }, `?orgId=${orgId}`);
      expect(bobInOrg.statusCode).toBe(409);
      const bobList = await h.vigil.app.inject({ url: `${BASE}?orgId=${orgId}`, headers: bob.auth });
      expect(bobList.json()).toEqual([inOrg]);
    });

    it("answers 404 for an app without alert ingest", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await registerAlerts(h, auth, { source: "zabbix" });
      const expected = { error: "app not found", code: "NOT_FOUND", details: { app_name: "billing" } };
      const calls = [
        { method: "POST" as const, url: "/app/billing/api/v1/alerts/webhook", payload: { source: "zabbix" } },
        { method: "GET" as const, url: "/app/billing/api/v1/alerts/webhook" },
        { method: "GET" as const, url: `/app/billing/api/v1/alerts/webhook/${created.id}` },
        { method: "PUT" as const, url: `/app/billing/api/v1/alerts/webhook/${created.id}`, payload: {} },
        { method: "POST" as const, url: `/app/billing/api/v1/alerts/webhook/${created.id}/rotate-token` },
        { method: "DELETE" as const, url: `/app/billing/api/v1/alerts/webhook/${created.id}` },
      ];
      for (const call of calls) {
        const response = await h.vigil.app.inject({ ...call, headers: auth });
        expect(response.statusCode, `${call.method} ${call.url}`).toBe(404);
        expect(response.json()).toEqual(expected);
      }
      // Nothing happened to the sre registration.
      const read = await h.vigil.app.inject({ url: `${BASE}/${created.id}`, headers: auth });
      expect(read.json()).toEqual(created);
    });

    describe("invalid input", () => {
      const createCases: [string, unknown, string][] = [
        ["missing source", {}, "source"],
        ["unknown source", { source: "nagios" }, "source"],
        ["classify_mode", { source: "grafana", classify_mode: "later" }, "classify_mode"],
        [
          "window 14",
          { source: "grafana", classify_batch_window_seconds: 14 },
          "classify_batch_window_seconds",
        ],
        [
          "window 301",
          { source: "grafana", classify_batch_window_seconds: 301 },
          "classify_batch_window_seconds",
        ],
        [
          "window 30.5",
          { source: "grafana", classify_batch_window_seconds: 30.5 },
          "classify_batch_window_seconds",
        ],
        ["classify_bucket_by", { source: "grafana", classify_bucket_by: "host" }, "classify_bucket_by"],
        [
          "severity_overrides bucket",
          { source: "grafana", severity_overrides: { sev1: "Urgent" } },
          "severity_overrides.sev1",
        ],
        [
          "severity_overrides lower-case bucket",
          { source: "grafana", severity_overrides: { sev1: "critical" } },
          "severity_overrides.sev1",
        ],
        [
          "severity_overrides empty key",
          { source: "grafana", severity_overrides: { "": "High" } },
          "severity_overrides.",
        ],
        [
          "severity_overrides key over 128 characters",
          { source: "grafana", severity_overrides: { ["s".repeat(129)]: "High" } },
          `severity_overrides.${"s".repeat(129)}`,
        ],
        ["unknown field", { source: "grafana", color: "red" }, "color"],
        ['"true" for a boolean', { source: "grafana", auto_investigate: "true" }, "auto_investigate"],
        ["1 for a boolean", { source: "grafana", enabled: 1 }, "enabled"],
        [
          '"60" for an integer',
          { source: "grafana", classify_batch_window_seconds: "60" },
          "classify_batch_window_seconds",
        ],
        ["integration with a slash", { source: "grafana", integration: "a/b" }, "integration"],
        ["integration with a space", { source: "grafana", integration: "a b" }, "integration"],
        ["integration .", { source: "grafana", integration: "." }, "integration"],
        ["integration ..", { source: "grafana", integration: ".." }, "integration"],
        ["integration not a string", { source: "grafana", integration: 7 }, "integration"],
        ["integration too long", { source: "grafana", integration: "x".repeat(129) }, "integration"],
        ["id is computed", { source: "grafana", id: randomUUID() }, "id"],
        ["app_name of another app", { source: "grafana", app_name: "other" }, "app_name"],
      ];

      it.each(createCases)("create: %s is 400 naming the field", async (_name, body, field) => {
        const h = harness();
        const { auth } = await h.createKey();
        const response = await create(h, auth, body);
        expect(response.statusCode, response.body).toBe(400);
        expect(response.json()).toEqual({
          error: expect.stringContaining(field),
          code: "VALIDATION_FAILED",
          details: { field, location: "body", rule: expect.any(String) },
        });
        const list = await h.vigil.app.inject({ url: BASE, headers: auth });
        expect(list.json()).toEqual([]);
      });

      it("create: a body that is not JSON is 400", async () => {
        const h = harness();
        const { auth } = await h.createKey();
        const response = await h.vigil.app.inject({
          method: "POST",
          url: BASE,
          headers: { ...auth, "content-type": "application/json" },
          payload: '{"source": "grafana"',
        });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({ code: "INVALID_JSON" });
      });

      const updateCases: [string, unknown, string][] = [
        ["window 14", { classify_batch_window_seconds: 14 }, "classify_batch_window_seconds"],
        ["window 301", { classify_batch_window_seconds: 301 }, "classify_batch_window_seconds"],
        ["classify_mode", { classify_mode: "BATCH" }, "classify_mode"],
        ["classify_bucket_by", { classify_bucket_by: "" }, "classify_bucket_by"],
        ["severity_overrides bucket", { severity_overrides: { p1: "P1" } }, "severity_overrides.p1"],
        ['"false" for a boolean', { enabled: "false" }, "enabled"],
        ["integration cannot change", { integration: "other" }, "integration"],
        ["unknown field", { paused: true }, "paused"],
      ];

      it.each(updateCases)(
        "update: %s is 400 naming the field and changes nothing",
        async (_name, body, field) => {
          const h = harness();
          const { auth } = await h.createKey();
          const created = await registerAlerts(h, auth, { source: "grafana" });
          const response = await h.vigil.app.inject({
            method: "PUT",
            url: `${BASE}/${created.id}`,
            headers: auth,
            payload: body as never,
          });
          expect(response.statusCode, response.body).toBe(400);
          expect(response.json()).toEqual({
            error: expect.stringContaining(field),
            code: "VALIDATION_FAILED",
            details: { field, location: "body", rule: expect.any(String) },
          });
          const read = await h.vigil.app.inject({ url: `${BASE}/${created.id}`, headers: auth });
          expect(read.json()).toEqual(created);
        },
      );
    });

    itEnforcesAuth(harness, {
      method: "POST",
      scope: "sre_alerts_write",
      url: BASE,
      body: { source: "grafana", integration: "auth-matrix" },
    });
    itEnforcesAuth(harness, { method: "GET", scope: "sre_alerts_read", url: BASE });
    itEnforcesAuth(harness, { method: "GET", scope: "sre_alerts_read", url: ownedUrl, ownedResource: true });
    itEnforcesAuth(harness, {
      method: "PUT",
      scope: "sre_alerts_write",
      url: ownedUrl,
      body: { auto_investigate: true },
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "POST",
      scope: "sre_alerts_write",
      url: async (h, owner) => `${await ownedUrl(h, owner)}/rotate-token`,
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "DELETE",
      scope: "sre_alerts_write",
      url: ownedUrl,
      ownedResource: true,
    });
  },
  { publicUrl: PUBLIC_URL },
);

// The clock Vigil reads, moved by the tests: updated_at is compared without waiting for time to pass.
const clock = { now: Date.parse("2026-03-01T12:00:00.000Z") };

describeEachEngine(
  "alert webhook registrations: updated_at and concurrent deletes",
  (harness) => {
    it("keeps updated_at on a PUT that changes nothing, and moves it on a change and on a token rotation", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await registerAlerts(h, auth, { source: "alertmanager", integration: "stamps" });
      const url = `${BASE}/${created.id}`;
      const update = (payload: object) => h.vigil.app.inject({ method: "PUT", url, headers: auth, payload });
      const readBack = async () => (await h.vigil.app.inject({ url, headers: auth })).json();

      clock.now += 60_000;
      for (const unchanged of [
        {},
        { classify_mode: "batch", enabled: true, severity_overrides: {} },
        { source: "alertmanager", integration: "stamps", app_name: "sre" },
      ]) {
        const answered = await update(unchanged);
        expect(answered.statusCode, answered.body).toBe(200);
        expect(answered.json()).toEqual(created);
        expect(await readBack()).toEqual(created);
      }

      clock.now += 60_000;
      const changed = await update({ severity_overrides: { b: "High", a: "Low" } });
      expect(changed.json()).toEqual({
        ...created,
        severity_overrides: { b: "High", a: "Low" },
        updated_at: new Date(clock.now).toISOString(),
      });
      // The same overrides in another key order change nothing.
      clock.now += 60_000;
      expect((await update({ severity_overrides: { a: "Low", b: "High" } })).json()).toEqual(changed.json());

      const disabled = await update({ enabled: false });
      expect(disabled.json()).toEqual({
        ...changed.json(),
        enabled: false,
        updated_at: new Date(clock.now).toISOString(),
      });

      clock.now += 60_000;
      const rotated = await h.vigil.app.inject({ method: "POST", url: `${url}/rotate-token`, headers: auth });
      expect(rotated.statusCode).toBe(200);
      expect(rotated.json()).toEqual({
        ...disabled.json(),
        platform_webhook_url: expect.stringMatching(TOKEN_URL),
        trigger_url: expect.stringContaining(`${PUBLIC_URL}/platform/api/v1/webhooks/trigger?apiKey=`),
        updated_at: new Date(clock.now).toISOString(),
      });
      expect(rotated.json().trigger_url).not.toBe(disabled.json().trigger_url);
      expect(await readBack()).toEqual(rotated.json());
    });

    it("answers one of concurrent DELETEs 204 and the others 404", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const created = await registerAlerts(h, auth, { source: "alertmanager", integration: "race" });
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          h.vigil.app.inject({ method: "DELETE", url: `${BASE}/${created.id}`, headers: auth }),
        ),
      );
      expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, ...Array(7).fill(404)]);
      const gone = await h.vigil.app.inject({ url: `${BASE}/${created.id}`, headers: auth });
      expect(gone.statusCode).toBe(404);
    });
  },
  { publicUrl: PUBLIC_URL },
  { now: () => new Date(clock.now) },
);
