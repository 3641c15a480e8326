import { randomUUID } from "node:crypto";
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { readAlert, registerAlerts } from "../../test/alerts.ts";
import { itEnforcesAuth } from "../../test/auth-matrix.ts";
import { readFixture } from "../../test/fixtures.ts";
import { type Auth, describeEachEngine, type Harness } from "../../test/harness.ts";

const fixture = (path: string) => readFixture(...(path.split("/") as [string, string]));

const AM_FIRING = fixture("alertmanager/firing-single-critical.json");
const AM_FIRING_UID = "5f3c1a2b9d8e7f60";
const DATADOG_TRIGGERED = fixture("datadog/default-template-triggered-p1.json");
const DATADOG_TRIGGERED_UID = "4836aed9c3d6d24f072b852736e4e4c2";
const SNS_ALARM = fixture("cloudwatch/sns-alarm-s3-bucket-size.json");
const SNS_ALARM_UID = "4ee4ca049dc27e2a08b5fe01c8c31935";
const SNS_SUBSCRIPTION = fixture("cloudwatch/sns-subscription-confirmation.json");
const UPTIME_KUMA_DOWN = fixture("uptime-kuma/v1.23-http-down.json");

const BODY_LIMIT_BYTES = 2048;
const WEBHOOK_BODY_LIMIT_BYTES = 16 * 1024;
const TRIGGER = "/platform/api/v1/webhooks/trigger";

// A clock the tests set: received_at is then known exactly, and several deliveries can share one
// millisecond, as they do under load.
const clock = { now: new Date("2024-06-01T12:00:00.000Z") };

type Registration = { id: string; platform_webhook_url: string };

function tokenOf(registration: Registration): string {
  const token = new URL(registration.platform_webhook_url, "http://x").searchParams.get("apiKey");
  if (!token) throw new Error("no apiKey in platform_webhook_url");
  return token;
}

interface TriggerOptions {
  query?: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

async function trigger(h: Harness, { query = "", headers = {}, payload = AM_FIRING }: TriggerOptions) {
  return h.vigil.app.inject({ method: "POST", url: `${TRIGGER}${query}`, headers, payload });
}

/** A fresh registration and a way to trigger it with its token in the query. */
async function setup(h: Harness, body: object = { source: "alertmanager" }) {
  const owner = await h.createKey();
  const registration = await registerAlerts(h, owner.auth, body);
  const token = tokenOf(registration);
  const post = (options: TriggerOptions = {}) =>
    trigger(h, {
      ...options,
      query: `?apiKey=${encodeURIComponent(token)}${options.query ?? ""}`,
      headers: { "content-type": "application/json", ...options.headers },
    });
  const runsUrl = `/platform/api/v1/webhooks/${registration.id}/runs`;
  return { owner, registration, token, post, runsUrl };
}

const runsRoute = async (h: Harness, owner: { auth: Auth }) => {
  const registration = await registerAlerts(h, owner.auth, {
    source: "alertmanager",
    integration: randomUUID(),
  });
  return `/platform/api/v1/webhooks/${registration.id}/runs`;
};

const runRoute = async (h: Harness, owner: { auth: Auth }) => {
  const registration = await registerAlerts(h, owner.auth, {
    source: "alertmanager",
    integration: randomUUID(),
  });
  const accepted = await trigger(h, { query: `?apiKey=${encodeURIComponent(tokenOf(registration))}` });
  expect(accepted.statusCode).toBe(202);
  return `/platform/api/v1/webhooks/${registration.id}/runs/${accepted.json().invocation_id}`;
};

describeEachEngine(
  "webhook trigger and runs",
  (harness) => {
    describe("trigger authentication", () => {
      it("answers 401 without a token", async () => {
        const h = harness();
        const expected = {
          msg: "missing webhook token: pass ?apiKey=<token> or Authorization: Bearer <token>",
          errCode: "UNAUTHENTICATED",
          extras: [],
        };
        for (const query of ["", "?apiKey="]) {
          const response = await trigger(h, { query });
          expect(response.statusCode, query).toBe(401);
          expect(response.json()).toEqual(expected);
        }
        const emptyBearer = await trigger(h, { headers: { authorization: "Bearer " } });
        expect(emptyBearer.statusCode).toBe(401);
        expect(emptyBearer.json()).toEqual(expected);
      });

      it("answers 401 with a wrong token, in the query or the header, and with an API key", async () => {
        const h = harness();
        const { owner, token } = await setup(h);
        const expected = { msg: "invalid webhook token", errCode: "UNAUTHENTICATED", extras: [] };
        const attempts: TriggerOptions[] = [
          { query: "?apiKey=whk_wrong" },
          { query: `?apiKey=${encodeURIComponent(`${token}x`)}` },
          { headers: { authorization: `Bearer ${token.slice(0, -1)}` } },
          // An API key is not a webhook token, even the key of the webhook's owner.
          { headers: owner.auth },
          { query: `?apiKey=${encodeURIComponent(owner.auth.authorization.slice(7))}` },
        ];
        for (const attempt of attempts) {
          const response = await trigger(h, attempt);
          expect(response.statusCode, JSON.stringify(attempt)).toBe(401);
          expect(response.json()).toEqual(expected);
        }
      });

      it("answers 400 naming apiKey when the token is given twice in the query", async () => {
        const h = harness();
        const { token } = await setup(h);
        const key = encodeURIComponent(token);
        const response = await trigger(h, { query: `?apiKey=${key}&apiKey=${key}` });
        expect(response.statusCode).toBe(400);
        expect(response.json()).toMatchObject({
          msg: "apiKey: given 2 times: give it once",
          errCode: "VALIDATION_FAILED",
          extras: [expect.objectContaining({ field: "apiKey" })],
        });
      });

      it("takes the token from Authorization: Bearer as well as from ?apiKey=", async () => {
        const h = harness();
        const { registration, token } = await setup(h);
        for (const authorization of [`Bearer ${token}`, `bearer  ${token}`]) {
          const response = await trigger(h, {
            headers: { authorization, "content-type": "application/json" },
          });
          expect(response.statusCode, response.body).toBe(202);
          expect(response.json().webhook_id).toBe(registration.id);
        }
        const byQuery = await trigger(h, { query: `?apiKey=${encodeURIComponent(token)}` });
        expect(byQuery.statusCode).toBe(202);
      });

      it("answers 404 for an orgId that is not the webhook's org", async () => {
        const h = harness();
        const orgId = await h.createOrg("sre");
        const owner = await h.createKey({ orgIds: [orgId] });
        const inOrg = await registerAlerts(h, owner.auth, { source: "alertmanager" }, `?orgId=${orgId}`);
        const personal = await registerAlerts(h, owner.auth, { source: "alertmanager" });
        const post = (registration: Registration, org: string) =>
          trigger(h, { query: `?apiKey=${encodeURIComponent(tokenOf(registration))}&orgId=${org}` });

        const otherOrg = await post(inOrg, randomUUID());
        expect(otherOrg.statusCode).toBe(404);
        expect(otherOrg.json()).toEqual({
          msg: "webhook not found or disabled",
          errCode: "NOT_FOUND",
          extras: [{ webhook_id: inOrg.id }],
        });
        const personalWithOrg = await post(personal, orgId);
        expect(personalWithOrg.statusCode).toBe(404);
        expect(personalWithOrg.json()).toMatchObject({ errCode: "NOT_FOUND" });

        const sameOrg = await post(inOrg, orgId);
        expect(sameOrg.statusCode, sameOrg.body).toBe(202);
        expect(sameOrg.json().webhook_id).toBe(inOrg.id);
        // An id is read in any case.
        const upperCase = await post(inOrg, orgId.toUpperCase());
        expect(upperCase.statusCode, upperCase.body).toBe(202);
        const malformed = await post(inOrg, "not-a-uuid");
        expect(malformed.statusCode).toBe(400);
        expect(malformed.json()).toMatchObject({
          errCode: "VALIDATION_FAILED",
          extras: [{ field: "orgId" }],
        });
      });

      it("answers 404 for a disabled or deleted webhook, and records nothing", async () => {
        const h = harness();
        const { owner, registration, post, runsUrl } = await setup(h);
        const url = `/app/sre/api/v1/alerts/webhook/${registration.id}`;
        const notFound = {
          msg: "webhook not found or disabled",
          errCode: "NOT_FOUND",
          extras: [{ webhook_id: registration.id }],
        };

        await h.vigil.app.inject({ method: "PUT", url, headers: owner.auth, payload: { enabled: false } });
        const disabled = await post();
        expect(disabled.statusCode).toBe(404);
        expect(disabled.json()).toEqual(notFound);
        const runs = await h.vigil.app.inject({ url: runsUrl, headers: owner.auth });
        expect(runs.json()).toEqual({ runs: [], total: 0, limit: 10, offset: 0 });

        await h.vigil.app.inject({ method: "DELETE", url, headers: owner.auth });
        const deleted = await post();
        expect(deleted.statusCode).toBe(404);
        expect(deleted.json()).toEqual(notFound);
      });
    });

    describe("trigger body", () => {
      it("answers 202 with the target identity and the outcome of each alert, which is readable at once", async () => {
        const h = harness();
        const { owner, registration, post } = await setup(h, { source: "alertmanager", integration: "prod" });
        const first = await post({ payload: AM_FIRING });
        expect(first.statusCode, first.body).toBe(202);
        const body = first.json();
        expect(body).toEqual({
          webhook_id: registration.id,
          invocation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          target_type: "alert_ingest",
          target_name: "sre/alertmanager/prod",
          events: 1,
          alerts: [
            { id: expect.stringMatching(/^[0-9a-f-]{36}$/), external_uid: AM_FIRING_UID, outcome: "created" },
          ],
          note: null,
        });
        expect(await readAlert(h, owner.auth, body.alerts[0].id)).toMatchObject({
          id: body.alerts[0].id,
          external_uid: AM_FIRING_UID,
          source_type: "alertmanager",
          integration_name: "prod",
          status: "active",
          ingested_via: "push",
          raw_payload: AM_FIRING,
        });

        // The sender retries: the same delivery again changes nothing.
        const again = await post({ payload: AM_FIRING });
        expect(again.json()).toEqual({
          ...body,
          invocation_id: expect.any(String),
          alerts: [{ ...body.alerts[0], outcome: "duplicate" }],
        });
        expect(again.json().invocation_id).not.toBe(body.invocation_id);
      });

      it("accepts SNS text/plain, a form-encoded body and a body without a content type", async () => {
        const h = harness();
        const cloudwatch = await setup(h, { source: "cloudwatch" });
        const sns = await cloudwatch.post({
          payload: SNS_ALARM,
          headers: { "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": "Notification" },
        });
        expect(sns.statusCode, sns.body).toBe(202);
        expect(sns.json()).toMatchObject({
          target_name: "sre/cloudwatch/",
          events: 1,
          alerts: [{ external_uid: SNS_ALARM_UID, outcome: "created" }],
        });
        const handshake = await cloudwatch.post({
          payload: SNS_SUBSCRIPTION,
          headers: { "content-type": "text/plain; charset=UTF-8" },
        });
        expect(handshake.statusCode, handshake.body).toBe(202);
        expect(handshake.json()).toEqual({
          webhook_id: cloudwatch.registration.id,
          invocation_id: expect.any(String),
          target_type: "alert_ingest",
          target_name: "sre/cloudwatch/",
          events: 0,
          alerts: [],
          note: "SNS SubscriptionConfirmation for arn:aws:sns:eu-west-1:1234567890:alerta-test: a subscription handshake, not an alarm; auto-confirm is off: open its SubscribeURL to confirm the subscription",
        });

        // Datadog's "Encode as form": the fixture's fields as form fields.
        const datadog = await setup(h, { source: "datadog" });
        const fields = Object.entries(JSON.parse(DATADOG_TRIGGERED) as Record<string, unknown>).map(
          ([key, value]): [string, string] => [
            key,
            typeof value === "string" ? value : JSON.stringify(value),
          ],
        );
        const form = await datadog.post({
          payload: new URLSearchParams(fields).toString(),
          headers: { "content-type": "application/x-www-form-urlencoded" },
        });
        expect(form.statusCode, form.body).toBe(202);
        expect(form.json()).toMatchObject({
          events: 1,
          alerts: [{ external_uid: DATADOG_TRIGGERED_UID, outcome: "created" }],
        });

        // No content type at all, and one no JSON parser would claim.
        const alertmanager = await setup(h, { source: "alertmanager" });
        const bare = await trigger(h, {
          query: `?apiKey=${encodeURIComponent(alertmanager.token)}`,
          payload: AM_FIRING,
        });
        expect(bare.statusCode, bare.body).toBe(202);
        expect(bare.json()).toMatchObject({ alerts: [{ external_uid: AM_FIRING_UID, outcome: "created" }] });
        const octets = await alertmanager.post({
          payload: AM_FIRING,
          headers: { "content-type": "application/octet-stream" },
        });
        expect(octets.statusCode, octets.body).toBe(202);
        expect(octets.json()).toMatchObject({ alerts: [{ outcome: "duplicate" }] });
        // A Content-Type no parser reads is kept as sent, and the token is still what decides.
        const malformed = await alertmanager.post({
          payload: AM_FIRING,
          headers: { "content-type": "a/b/c" },
        });
        expect(malformed.statusCode, malformed.body).toBe(202);
        const noToken = await trigger(h, { payload: AM_FIRING, headers: { "content-type": "foo" } });
        expect(noToken.statusCode, noToken.body).toBe(401);

        const runs = await h.vigil.app.inject({
          url: `${alertmanager.runsUrl}`,
          headers: alertmanager.owner.auth,
        });
        expect(runs.json().runs.map((run: { content_type: string | null }) => run.content_type)).toEqual([
          "a/b/c",
          "application/octet-stream",
          null,
        ]);
      });

      it("decodes gzip, deflate and br bodies, records them decoded, and answers 413 when one decodes past the limit", async () => {
        const h = harness();
        const { owner, post, runsUrl } = await setup(h);
        const bodies: [string, Buffer][] = [
          ["gzip", gzipSync(AM_FIRING)],
          ["x-gzip", gzipSync(AM_FIRING)],
          ["deflate", deflateSync(AM_FIRING)],
          ["deflate", deflateRawSync(AM_FIRING)],
          ["br", brotliCompressSync(AM_FIRING)],
          ["deflate, gzip", gzipSync(deflateSync(AM_FIRING))],
        ];
        const outcomes: string[] = [];
        for (const [coding, payload] of bodies) {
          const response = await post({ payload, headers: { "content-encoding": coding } });
          expect(response.statusCode, `${coding}: ${response.body}`).toBe(202);
          outcomes.push(response.json().alerts[0].outcome);
        }
        expect(outcomes).toEqual([
          "created",
          "duplicate",
          "duplicate",
          "duplicate",
          "duplicate",
          "duplicate",
        ]);

        // Bytes that do not decode are recorded as received, and the parser says it cannot read them.
        const corrupt = await post({ payload: "not gzip at all", headers: { "content-encoding": "gzip" } });
        expect(corrupt.statusCode).toBe(400);
        expect(corrupt.json()).toMatchObject({ errCode: "INVALID_PAYLOAD" });

        // A small body that expands past the webhook limit is refused before it fills memory.
        const bomb = await post({
          payload: gzipSync(AM_FIRING + " ".repeat(WEBHOOK_BODY_LIMIT_BYTES)),
          headers: { "content-encoding": "gzip" },
        });
        expect(bomb.statusCode).toBe(413);
        expect(bomb.json()).toMatchObject({
          msg: `request body is larger than the limit of ${WEBHOOK_BODY_LIMIT_BYTES} bytes once decoded`,
          errCode: "PAYLOAD_TOO_LARGE",
        });

        const runs = (await h.vigil.app.inject({ url: runsUrl, headers: owner.auth })).json().runs;
        expect(runs).toHaveLength(7);
        const first = await h.vigil.app.inject({
          url: `${runsUrl}/${runs.at(-1).invocation_id}`,
          headers: owner.auth,
        });
        expect(first.json()).toMatchObject({
          payload: AM_FIRING,
          payload_bytes: Buffer.byteLength(AM_FIRING),
        });
        expect(first.json().headers).not.toHaveProperty("content-encoding");
        const undecoded = await h.vigil.app.inject({
          url: `${runsUrl}/${runs[0].invocation_id}`,
          headers: owner.auth,
        });
        expect(undecoded.json()).toMatchObject({ status: "failed", payload: "not gzip at all" });
        expect(undecoded.json().headers).toMatchObject({ "content-encoding": "gzip" });
      });

      it("answers 413 over the webhook body limit; the API body limit does not apply", async () => {
        const h = harness();
        const { owner, post, runsUrl } = await setup(h);
        // JSON allows whitespace after the document: the fixture padded to an exact size.
        const padded = (bytes: number) => AM_FIRING + " ".repeat(bytes - Buffer.byteLength(AM_FIRING));

        const overApiLimit = await post({ payload: padded(BODY_LIMIT_BYTES * 4) });
        expect(overApiLimit.statusCode, overApiLimit.body).toBe(202);
        const atLimit = await post({ payload: padded(WEBHOOK_BODY_LIMIT_BYTES) });
        expect(atLimit.statusCode, atLimit.body).toBe(202);

        const tooLarge = await post({ payload: padded(WEBHOOK_BODY_LIMIT_BYTES + 1) });
        expect(tooLarge.statusCode).toBe(413);
        expect(tooLarge.json()).toEqual({
          msg: `request body is larger than the limit of ${WEBHOOK_BODY_LIMIT_BYTES} bytes`,
          errCode: "PAYLOAD_TOO_LARGE",
          extras: [],
        });
        const asText = await post({
          payload: padded(WEBHOOK_BODY_LIMIT_BYTES + 1),
          headers: { "content-type": "text/plain" },
        });
        expect(asText.statusCode).toBe(413);

        const runs = await h.vigil.app.inject({ url: runsUrl, headers: owner.auth });
        expect(runs.json().runs.map((run: { payload_bytes: number }) => run.payload_bytes)).toEqual([
          WEBHOOK_BODY_LIMIT_BYTES,
          BODY_LIMIT_BYTES * 4,
        ]);

        // Other routes keep the API limit (so the case above did cross it).
        const api = await h.vigil.app.inject({
          method: "POST",
          url: "/app/sre/api/v1/alerts/webhook",
          headers: { ...owner.auth, "content-type": "application/json" },
          payload: JSON.stringify({ source: "grafana" }) + " ".repeat(BODY_LIMIT_BYTES),
        });
        expect(api.statusCode).toBe(413);
      });

      it("answers 400 INVALID_PAYLOAD for a body the parser cannot read, and still records it", async () => {
        const h = harness();
        const { owner, registration, post, runsUrl } = await setup(h, {
          source: "alertmanager",
          integration: "x",
        });
        const identity = {
          webhook_id: registration.id,
          invocation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          target_type: "alert_ingest",
          target_name: "sre/alertmanager/x",
        };
        // A Datadog body sent to an Alertmanager webhook.
        const wrongShape = await post({ payload: DATADOG_TRIGGERED });
        expect(wrongShape.statusCode).toBe(400);
        expect(wrongShape.json()).toEqual({
          msg: "alertmanager: not an Alertmanager webhook: expected a JSON object with an alerts array",
          errCode: "INVALID_PAYLOAD",
          extras: [identity],
        });

        const truncated = AM_FIRING.slice(0, 100);
        const notJson = await post({ payload: truncated });
        expect(notJson.statusCode).toBe(400);
        expect(notJson.json()).toMatchObject({
          msg: expect.stringMatching(/^alertmanager: body is not JSON/),
          errCode: "INVALID_PAYLOAD",
        });

        const empty = await trigger(h, {
          query: `?apiKey=${encodeURIComponent(tokenOf(registration))}`,
          payload: "",
        });
        expect(empty.statusCode).toBe(400);
        expect(empty.json()).toMatchObject({
          msg: "alertmanager: body is empty",
          errCode: "INVALID_PAYLOAD",
        });

        const invocationId = wrongShape.json().extras[0].invocation_id;
        const run = await h.vigil.app.inject({ url: `${runsUrl}/${invocationId}`, headers: owner.auth });
        expect(run.statusCode).toBe(200);
        expect(run.json()).toEqual({
          invocation_id: invocationId,
          webhook_id: registration.id,
          target_type: "alert_ingest",
          target_name: "sre/alertmanager/x",
          status: "failed",
          received_at: clock.now.toISOString(),
          finished_at: clock.now.toISOString(),
          content_type: "application/json",
          payload_bytes: Buffer.byteLength(DATADOG_TRIGGERED),
          error: "alertmanager: not an Alertmanager webhook: expected a JSON object with an alerts array",
          note: null,
          session_id: null,
          trace_id: null,
          run_id: null,
          outcome: null,
          headers: expect.objectContaining({ "content-type": "application/json" }),
          payload: DATADOG_TRIGGERED,
          payload_encoding: "utf8",
        });
        const list = await h.vigil.app.inject({ url: runsUrl, headers: owner.auth });
        expect(list.json()).toMatchObject({
          total: 3,
          runs: [
            { status: "failed", payload_bytes: 0, error: "alertmanager: body is empty" },
            { status: "failed", payload_bytes: 100 },
            { status: "failed", invocation_id: invocationId },
          ],
        });
        // Nothing was ingested.
        const alerts = await h.vigil.app.inject({ url: "/app/sre/api/v1/alerts", headers: owner.auth });
        expect(alerts.json().total).toBe(0);
      });

      it("quotes nothing of a body that is not JSON in the answer, the record or the run list", async () => {
        const h = harness();
        const { owner, post, runsUrl } = await setup(h, { source: "alertmanager", integration: "x" });
        // Form-like text where JSON was due, holding a credential: JSON.parse's own message quotes it.
        const secret = "s3cr3t-credential";
        const refused = await post({ payload: `password=${secret}&user=ops` });
        expect(refused.statusCode).toBe(400);
        expect(refused.json().msg).toMatch(/^alertmanager: body is not JSON: .*not valid JSON/);
        const list = await h.vigil.app.inject({ url: runsUrl, headers: owner.auth });
        expect(list.json().runs).toEqual([expect.objectContaining({ status: "failed" })]);
        for (const text of [refused.body, list.body]) {
          expect(text).not.toContain("password");
          expect(text).not.toContain(secret.slice(0, 4));
        }
      });
    });

    describe("invocation history", () => {
      it("lists runs newest first, without payloads, with limit, offset and total", async () => {
        const h = harness();
        const { owner, registration, post, runsUrl } = await setup(h);
        // Three deliveries within one millisecond, then two later ones.
        const ids: string[] = [];
        for (let n = 0; n < 3; n += 1) ids.push((await post()).json().invocation_id);
        clock.now = new Date(clock.now.getTime() + 1000);
        ids.push((await post({ payload: DATADOG_TRIGGERED })).json().extras[0].invocation_id);
        clock.now = new Date(clock.now.getTime() + 1000);
        ids.push((await post()).json().invocation_id);
        const newestFirst = [...ids].reverse();

        const list = await h.vigil.app.inject({ url: runsUrl, headers: owner.auth });
        expect(list.statusCode).toBe(200);
        const body = list.json();
        expect(body).toMatchObject({ total: 5, limit: 10, offset: 0 });
        expect(body.runs.map((run: { invocation_id: string }) => run.invocation_id)).toEqual(newestFirst);
        expect(body.runs[0]).toEqual({
          invocation_id: ids[4],
          webhook_id: registration.id,
          target_type: "alert_ingest",
          target_name: "sre/alertmanager/",
          status: "accepted",
          received_at: clock.now.toISOString(),
          finished_at: clock.now.toISOString(),
          content_type: "application/json",
          payload_bytes: Buffer.byteLength(AM_FIRING),
          error: null,
          note: null,
          session_id: null,
          trace_id: null,
          run_id: null,
          outcome: {
            events: 1,
            alerts: [{ id: expect.any(String), external_uid: AM_FIRING_UID, outcome: "duplicate" }],
            note: null,
          },
        });
        expect(body.runs[1]).toMatchObject({ status: "failed", outcome: null, error: expect.any(String) });
        for (const run of body.runs) {
          expect(run).not.toHaveProperty("payload");
          expect(run).not.toHaveProperty("headers");
        }

        const page = await h.vigil.app.inject({ url: `${runsUrl}?limit=2&offset=1`, headers: owner.auth });
        expect(page.json()).toEqual({ runs: body.runs.slice(1, 3), total: 5, limit: 2, offset: 1 });
        const pastEnd = await h.vigil.app.inject({ url: `${runsUrl}?offset=5`, headers: owner.auth });
        expect(pastEnd.json()).toEqual({ runs: [], total: 5, limit: 10, offset: 5 });
        const hundred = await h.vigil.app.inject({ url: `${runsUrl}?limit=100`, headers: owner.auth });
        expect(hundred.json()).toEqual({ ...body, limit: 100 });

        // The spec's polling rule names the path without the platform prefix: it serves the same.
        const bare = runsUrl.replace("/platform/api/v1/", "/api/v1/");
        expect((await h.vigil.app.inject({ url: bare, headers: owner.auth })).json()).toEqual(body);
        const one = await h.vigil.app.inject({ url: `${bare}/${ids[4]}`, headers: owner.auth });
        expect(one.statusCode).toBe(200);
        expect(one.json()).toMatchObject(body.runs[0]);
      });

      it("answers 400 naming limit or offset outside their range", async () => {
        const h = harness();
        const { owner, runsUrl } = await setup(h);
        const cases: [string, string][] = [
          ["limit=0", "limit"],
          ["limit=101", "limit"],
          ["limit=abc", "limit"],
          ["limit=2.5", "limit"],
          ["offset=-1", "offset"],
          ["offset=x", "offset"],
        ];
        for (const [query, field] of cases) {
          const response = await h.vigil.app.inject({ url: `${runsUrl}?${query}`, headers: owner.auth });
          expect(response.statusCode, query).toBe(400);
          expect(response.json()).toEqual({
            msg: expect.stringContaining(field),
            errCode: "VALIDATION_FAILED",
            extras: [{ field, location: "querystring", rule: expect.any(String) }],
          });
        }
      });

      it("returns one run with the payload exactly as sent and the headers without credentials", async () => {
        const h = harness();
        const { owner, registration, token, runsUrl } = await setup(h, { source: "uptime-kuma" });
        // Whitespace, CRLF and non-ASCII text as the sender wrote them.
        const payload = ` \r\n\t${UPTIME_KUMA_DOWN}\n\n  `;
        const accepted = await trigger(h, {
          payload,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json; charset=utf-8",
            cookie: "session=secret",
            "x-api-key": "secret",
            "x-request-source": "uptime-kuma",
          },
        });
        expect(accepted.statusCode, accepted.body).toBe(202);
        const invocationId = accepted.json().invocation_id;

        const run = await h.vigil.app.inject({ url: `${runsUrl}/${invocationId}`, headers: owner.auth });
        expect(run.statusCode).toBe(200);
        const body = run.json();
        expect(body.payload).toBe(payload);
        expect(body.payload_bytes).toBe(Buffer.byteLength(payload, "utf8"));
        expect(body).toEqual({
          invocation_id: invocationId,
          webhook_id: registration.id,
          target_type: "alert_ingest",
          target_name: "sre/uptime-kuma/",
          status: "accepted",
          received_at: clock.now.toISOString(),
          finished_at: clock.now.toISOString(),
          content_type: "application/json; charset=utf-8",
          payload_bytes: Buffer.byteLength(payload, "utf8"),
          error: null,
          note: null,
          session_id: null,
          trace_id: null,
          run_id: null,
          outcome: {
            events: 1,
            alerts: [{ id: expect.any(String), external_uid: "29", outcome: "created" }],
            note: null,
          },
          headers: {
            "content-type": "application/json; charset=utf-8",
            "content-length": String(Buffer.byteLength(payload, "utf8")),
            "x-request-source": "uptime-kuma",
            host: expect.any(String),
            "user-agent": expect.any(String),
          },
          payload,
          payload_encoding: "utf8",
        });
        expect(run.body).not.toContain(token);
        expect(run.body).not.toContain("secret");
      });

      it("answers 404 for an unknown run, another webhook's run and another tenant's webhook", async () => {
        const h = harness();
        const first = await setup(h);
        const accepted = await first.post();
        const invocationId = accepted.json().invocation_id;
        const second = await registerAlerts(h, first.owner.auth, { source: "grafana" });
        const get = (url: string, auth: Auth = first.owner.auth) =>
          h.vigil.app.inject({ url, headers: auth });

        const unknownId = randomUUID();
        const unknown = await get(`${first.runsUrl}/${unknownId}`);
        expect(unknown.statusCode).toBe(404);
        expect(unknown.json()).toEqual({
          msg: "webhook run not found",
          errCode: "NOT_FOUND",
          extras: [{ webhook_id: first.registration.id, run_id: unknownId }],
        });
        // Not a uuid: could be an execution run id; none matches.
        const executionId = await get(`${first.runsUrl}/exec-123`);
        expect(executionId.statusCode).toBe(404);
        expect(executionId.json()).toMatchObject({ errCode: "NOT_FOUND" });

        const wrongWebhook = await get(`/platform/api/v1/webhooks/${second.id}/runs/${invocationId}`);
        expect(wrongWebhook.statusCode).toBe(404);
        expect(wrongWebhook.json()).toMatchObject({ errCode: "NOT_FOUND" });

        const unknownWebhookId = randomUUID();
        const unknownWebhook = await get(`/platform/api/v1/webhooks/${unknownWebhookId}/runs`);
        expect(unknownWebhook.statusCode).toBe(404);
        expect(unknownWebhook.json()).toEqual({
          msg: "webhook not found",
          errCode: "NOT_FOUND",
          extras: [{ webhook_id: unknownWebhookId }],
        });

        const stranger = await h.createKey();
        const theirList = await get(first.runsUrl, stranger.auth);
        expect(theirList.statusCode).toBe(404);
        const theirRun = await get(`${first.runsUrl}/${invocationId}`, stranger.auth);
        expect(theirRun.statusCode).toBe(404);
        expect(theirRun.json()).toMatchObject({ errCode: "NOT_FOUND" });

        const notUuid = await get("/platform/api/v1/webhooks/abc/runs");
        expect(notUuid.statusCode).toBe(400);
        expect(notUuid.json()).toMatchObject({
          errCode: "VALIDATION_FAILED",
          extras: [{ field: "webhook_id" }],
        });
      });
    });

    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: runsRoute,
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: runRoute,
      ownedResource: true,
    });
  },
  { bodyLimitBytes: BODY_LIMIT_BYTES, webhookBodyLimitBytes: WEBHOOK_BODY_LIMIT_BYTES },
  { now: () => new Date(clock.now) },
);
