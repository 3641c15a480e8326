// Webhook tokens and API keys never reach the logs or the metrics. A whole ingest scenario runs with
// the service's own logger (createLogger) writing to a captured stream, at info and at debug: alert
// registrations and named webhooks created, deliveries with the token in the query and in the
// Authorization header, bad and rotated tokens, an API key passed where a token belongs, refusals,
// and an error whose message quotes its URL. Then the captured lines and /metrics are searched for
// every credential the scenario made.
import { randomBytes } from "node:crypto";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse as Response } from "fastify";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.ts";
import { createLogger } from "../src/start.ts";
import { readFixture } from "./fixtures.ts";
import { type Auth, describeEachEngine, type Harness } from "./harness.ts";

const TRIGGER = "/platform/api/v1/webhooks/trigger";

/** A route that fails with an error quoting its own URL, as an upstream client's error would. */
async function failingRoute(app: FastifyInstance) {
  app.get("/test/upstream", { config: { public: true } }, async (request) => {
    throw new Error(`upstream call failed: GET https://upstream.example${request.url}`);
  });
}

const tokenOf = (platformWebhookUrl: string) =>
  decodeURIComponent(new URL(platformWebhookUrl, "http://vigil").searchParams.get("apiKey") ?? "");

async function expectStatus(response: { statusCode: number; body: string }, status: number) {
  expect(response.statusCode, response.body).toBe(status);
}

/** Everything the scenario created or sent that must stay out of the logs. */
interface Secrets {
  values: Set<string>;
  add(value: string): string;
}

function secretsBag(): Secrets {
  const values = new Set<string>();
  return {
    values,
    add(value) {
      expect(value.length).toBeGreaterThanOrEqual(16);
      values.add(value);
      return value;
    },
  };
}

/** Runs the scenario; answers every response it got, for the error answers to be searched too. */
async function runScenario(h: Harness, secrets: Secrets): Promise<Response[]> {
  const responses: Response[] = [];
  const app = {
    inject: async (options: InjectOptions) => {
      const response = await h.vigil.app.inject(options);
      responses.push(response);
      return response;
    },
  };
  const { key, auth } = await h.createKey();
  secrets.add(key);
  const call = (method: "GET" | "POST" | "PUT", url: string, payload?: object, headers: Auth = auth) =>
    app.inject({ method, url, headers, payload: payload as never });

  // Alert registrations: their tokens live in the trigger URL.
  const alertmanager = await call("POST", "/app/sre/api/v1/alerts/webhook", {
    source: "alertmanager",
    integration: "logs",
  });
  await expectStatus(alertmanager, 201);
  const registration = alertmanager.json();
  let registrationToken = secrets.add(tokenOf(registration.platform_webhook_url));
  const body = readFixture("alertmanager", "firing-single-critical.json");
  const json = { "content-type": "application/json" };
  const deliver = (url: string, headers: Record<string, string> = {}, payload: string = body) =>
    app.inject({ method: "POST", url, headers: { ...json, ...headers }, payload });

  await expectStatus(await deliver(`${TRIGGER}?apiKey=${registrationToken}`), 202);
  await expectStatus(await deliver(TRIGGER, { authorization: `Bearer ${registrationToken}` }), 202);
  // The trigger URL exactly as the registration gives it, with a query the schema refuses.
  await expectStatus(await deliver(`/platform${registration.platform_webhook_url}&orgId=not-a-uuid`), 400);
  // Refusals: a body the source cannot read, a bad token, an API key where a token belongs.
  await expectStatus(await deliver(`${TRIGGER}?apiKey=${registrationToken}`, {}, "not json"), 400);
  await expectStatus(
    await deliver(`${TRIGGER}?apiKey=${secrets.add(`whk_${randomBytes(24).toString("base64url")}`)}`),
    401,
  );
  await expectStatus(await deliver(`${TRIGGER}?apiKey=${key}`), 401);
  await expectStatus(await deliver(TRIGGER, { authorization: `Bearer ${key}` }), 401);
  await expectStatus(await deliver(`${TRIGGER}/extra?apiKey=${registrationToken}`), 404);

  // Rotation: the old token answers 401, the new one works.
  const rotated = await call("POST", `/app/sre/api/v1/alerts/webhook/${registration.id}/rotate-token`);
  await expectStatus(rotated, 200);
  const oldToken = registrationToken;
  registrationToken = secrets.add(tokenOf(rotated.json().platform_webhook_url));
  await expectStatus(await deliver(`${TRIGGER}?apiKey=${oldToken}`), 401);
  await expectStatus(await deliver(`${TRIGGER}?apiKey=${registrationToken}`), 202);
  // Disabled: a known token of a webhook that no longer takes deliveries.
  await expectStatus(
    await call("PUT", `/app/sre/api/v1/alerts/webhook/${registration.id}`, { enabled: false }),
    200,
  );
  await expectStatus(await deliver(`${TRIGGER}?apiKey=${registrationToken}`), 404);

  // A named webhook (agent target): the token is in the creation answer only.
  const integration = `grafana-${Math.random().toString(36).slice(2, 8)}`;
  await expectStatus(await call("POST", "/api/v1/integrations", { name: integration, type: "grafana" }), 201);
  const agent = `agent-${Math.random().toString(36).slice(2, 8)}`;
  await expectStatus(
    await call("POST", "/platform/api/v1/agents", {
      name: agent,
      kind: "builtin",
      instructions: "looked at {{input.message}}",
      integrations: [integration],
    }),
    201,
  );
  const named = await call("POST", "/platform/api/v1/webhooks", {
    name: `hook-${agent}`,
    target_type: "agent",
    target_name: agent,
  });
  await expectStatus(named, 201);
  const namedToken = secrets.add(named.json().token);
  const text = { "content-type": "text/plain" };
  await expectStatus(await deliver(`${TRIGGER}?apiKey=${namedToken}`, text, "checkout is down"), 202);
  await expectStatus(
    await deliver(TRIGGER, { ...text, authorization: `Bearer ${namedToken}` }, "again"),
    202,
  );
  const rotatedNamed = await call("POST", `/platform/api/v1/webhooks/${named.json().id}/rotate-token`);
  await expectStatus(rotatedNamed, 200);
  await expectStatus(await deliver(`${TRIGGER}?apiKey=${namedToken}`, text, "old token"), 401);
  await expectStatus(
    await deliver(`${TRIGGER}?apiKey=${secrets.add(rotatedNamed.json().token)}`, text, "new"),
    202,
  );

  // Credentials pasted into other URLs: refused without a key, or ignored beside a valid one.
  const mistaken = secrets.add(`tok-${randomBytes(18).toString("base64url")}`);
  const accessToken = secrets.add(`ya29.${randomBytes(18).toString("base64url")}`);
  await expectStatus(await app.inject({ url: `/platform/api/v1/webhooks?api_key=${key}` }), 401);
  await expectStatus(
    await call("GET", `/platform/api/v1/webhooks?token=${mistaken}&access_token=${accessToken}`),
    200,
  );
  // URLs the router cannot take: Fastify's answer would quote them whole.
  await expectStatus(await deliver(`${TRIGGER}%zz?apiKey=${registrationToken}`), 400);
  await expectStatus(await deliver(`/platform/api/v1/webhooks/%E0%A4%A?apiKey=${registrationToken}`), 400);
  // An error whose message quotes the URL it failed on.
  await expectStatus(
    await app.inject({ url: `/test/upstream?apiKey=${registrationToken}&token=${mistaken}` }),
    500,
  );
  return responses;
}

for (const level of ["info", "debug"] as const) {
  const lines: string[] = [];
  const logger = createLogger(loadConfig({ LOG_LEVEL: level }), {
    write: (line: string) => {
      lines.push(line);
    },
  });

  describe(`credentials at LOG_LEVEL=${level}`, () => {
    describeEachEngine(
      "a whole ingest scenario",
      (harness) => {
        it("writes no webhook token or API key to a log line, an error answer or a metric label", async () => {
          const h = harness();
          const secrets = secretsBag();
          const before = lines.length;
          const responses = await runScenario(h, secrets);
          const errors = responses.filter((response) => response.statusCode >= 400);
          const logged = lines.slice(before);
          const metrics = (await h.vigil.app.inject({ url: "/metrics" })).body;

          // The lines are there, and are what they say: not a silent or broken logger.
          const records = logged.map((line) => JSON.parse(line));
          const urls = records.flatMap((record) => (record.req?.url ? [record.req.url as string] : []));
          expect(urls).toContain(`${TRIGGER}?apiKey=[REDACTED]`);
          expect(urls).toContain(`${TRIGGER}/extra?apiKey=[REDACTED]`);
          expect(urls).toContain("/platform/api/v1/webhooks?token=[REDACTED]&access_token=[REDACTED]");
          const failure = records.find((record) => record.msg === "request failed");
          expect(failure?.err.message).toBe(
            "upstream call failed: GET https://upstream.example/test/upstream?apiKey=[REDACTED]&token=[REDACTED]",
          );
          expect(metrics).toContain(`route="${TRIGGER}",status_code="202"`);
          expect(metrics).toContain('route="unmatched",status_code="404"');
          // A refusal's reason has a key of its own: beside pino's own `msg`, a second `msg` was lost
          // by every log reader that keeps the last of two equal keys.
          const rejected = records.filter((record) => record.msg === "request rejected");
          expect(rejected.length).toBeGreaterThan(0);
          for (const record of rejected) expect(typeof record.reason, JSON.stringify(record)).toBe("string");
          expect(logged.filter((line) => line.split('"msg":').length > 2)).toEqual([]);
          // The URL is not echoed at all: not even its path, redacted or not.
          const badUrl = errors.find((response) => response.json().msg?.startsWith("the request URL"));
          expect(badUrl?.json()).toEqual({
            msg: "the request URL cannot be read: bad percent-encoding, or a part too long",
            errCode: "BAD_REQUEST",
            extras: [],
          });
          expect(badUrl?.body).not.toContain("%zz");

          for (const secret of secrets.values) {
            // The secret whole, and enough of it to matter (a redaction that kept a prefix leaks).
            for (const part of [secret, secret.slice(4, 20), encodeURIComponent(secret)]) {
              const leaks = logged.filter((line) => line.includes(part));
              expect(leaks, `${part} in the logs`).toEqual([]);
              expect(metrics.includes(part), `${part} in /metrics`).toBe(false);
              const answers = errors.filter((response) => response.body.includes(part));
              expect(
                answers.map((response) => response.body),
                `${part} in an error answer`,
              ).toEqual([]);
            }
          }
        });
      },
      { role: "api" },
      { logger, extraRoutes: [failingRoute] },
    );
  });
}
