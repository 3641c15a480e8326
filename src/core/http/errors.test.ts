// The error contract of every route family, proven through real HTTP requests on routes that
// declare their schemas like any domain route does, and on the domains' own routes.
import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { Type } from "@sinclair/typebox";
import { sql } from "drizzle-orm";
import type { FastifyInstance, InjectOptions } from "fastify";
import pino from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { readFixture } from "../../../test/fixtures.ts";
import { describeEachEngine } from "../../../test/harness.ts";
import { AppError } from "../errors.ts";

// The spec's enumerations, written out rather than imported: core does not reach into the domains.
const ALERT_STATUSES = ["active", "resolved", "ignored"];
const SEVERITY_BUCKETS = ["Critical", "High", "Medium", "Low", "info"];
const SOURCE_TYPES = [
  "alertmanager",
  "grafana",
  "datadog",
  "pagerduty",
  "opsgenie",
  "cloudwatch",
  "azure-monitor",
  "gcp-monitoring",
  "newrelic",
  "sentry",
  "zabbix",
  "dynatrace",
  "elastic",
  "splunk",
  "uptime-kuma",
  "checkmk",
];

const Echo = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    count: Type.Integer({ minimum: 1 }),
    mode: Type.Optional(Type.Union([Type.Union([Type.Literal("fast"), Type.Literal("safe")]), Type.Null()])),
  },
  {
    additionalProperties: false,
  },
);

// Error lines of the Vigil under test, as JSON.
const errorLines: Record<string, unknown>[] = [];
const logger = pino(
  { level: "error" },
  new Writable({
    write(chunk, _encoding, done) {
      errorLines.push(JSON.parse(String(chunk)));
      done();
    },
  }),
);

const JSON_TYPE = { "content-type": "application/json" };

async function probeRoutes(app: FastifyInstance) {
  for (const prefix of ["/platform/api/v1", "/app/sre/api/v1"]) {
    app.post(
      `${prefix}/probe`,
      {
        config: { public: true },
        schema: {
          querystring: Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1 })) }),
          body: Echo,
        },
      },
      async (request) => ({ received: request.body }),
    );
    app.get(`${prefix}/probe/crash`, { config: { public: true } }, async () => {
      throw new Error("connection to db-primary:5432 refused, password=hunter2");
    });
    app.get(`${prefix}/probe/conflict`, { config: { public: true } }, async () => {
      throw new AppError("CONFLICT", "already there", { name: "x" });
    });
    app.get(`${prefix}/probe/db-failure`, { config: { public: true } }, async () => {
      await app.services.database.db.execute(sql`select 1 / 0`);
      return {};
    });
  }
}

describeEachEngine(
  "error bodies",
  (harness) => {
    const inject = (options: InjectOptions) => harness().vigil.app.inject(options);
    const families = [
      { prefix: "/platform/api/v1", shape: (msg: string, errCode: string) => ({ msg, errCode, extras: [] }) },
      { prefix: "/app/sre/api/v1", shape: (error: string, code: string) => ({ error, code, details: {} }) },
    ];
    /** A 400 VALIDATION_FAILED as the route's family renders it. */
    const invalid = (url: string, message: string, details: Record<string, unknown>) =>
      url.startsWith("/platform/")
        ? { msg: message, errCode: "VALIDATION_FAILED", extras: [details] }
        : { error: message, code: "VALIDATION_FAILED", details };

    for (const { prefix, shape } of families) {
      it(`${prefix}: a valid request passes`, async () => {
        const response = await inject({
          method: "POST",
          url: `${prefix}/probe`,
          payload: { name: "a", count: 2 },
        });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ received: { name: "a", count: 2 } });
      });

      it(`${prefix}: a schema violation is 400 naming the field`, async () => {
        const cases: [unknown, string, string][] = [
          [{ count: 1 }, "name", "name: is required"],
          [{ name: "a", count: 0 }, "count", "count: must be >= 1"],
          [{ name: "a", count: "3" }, "count", "count: must be integer"],
          [{ name: "a", count: 1, colour: "red" }, "colour", "colour: is not a known field"],
        ];
        for (const [payload, field, message] of cases) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            payload: payload as object,
          });
          expect(response.statusCode).toBe(400);
          const body = response.json();
          const details = { field, location: "body", rule: expect.any(String) };
          if (prefix.startsWith("/platform")) {
            expect(body).toEqual({ msg: message, errCode: "VALIDATION_FAILED", extras: [details] });
          } else {
            expect(body).toEqual({ error: message, code: "VALIDATION_FAILED", details });
          }
        }
      });

      it(`${prefix}: a bad query parameter is 400 naming it`, async () => {
        const response = await inject({
          method: "POST",
          url: `${prefix}/probe?page=zero`,
          payload: { name: "a", count: 1 },
        });
        expect(response.statusCode).toBe(400);
        expect(JSON.stringify(response.json())).toContain("page: must be integer");
      });

      it(`${prefix}: malformed, empty and hostile JSON is 400`, async () => {
        for (const payload of ['{"name": "a", "count": 1', "", '{"__proto__": {"admin": true}}', "[1,2"]) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: { "content-type": "application/json" },
            payload,
          });
          expect(response.statusCode, payload).toBe(400);
          const body = response.json();
          expect(body.code ?? body.errCode).toMatch(/^(INVALID_JSON|BAD_REQUEST)$/);
        }
      });

      it(`${prefix}: JSON nested deeper than 256 levels is 400 naming where it starts, not a 500`, async () => {
        const nested = (levels: number) =>
          `{"name":"a","count":1,"colour":${"[".repeat(levels)}${"]".repeat(levels)}}`;
        // The body itself is one level: 255 arrays inside it are 256 levels, the most there may be.
        const deepest = await inject({
          method: "POST",
          url: `${prefix}/probe`,
          headers: JSON_TYPE,
          payload: nested(255),
        });
        expect(JSON.stringify(deepest.json())).toContain("colour: is not a known field");
        for (const levels of [256, 900]) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: JSON_TYPE,
            payload: nested(levels),
          });
          expect(response.statusCode, String(levels)).toBe(400);
          expect(JSON.stringify(response.json())).toContain("colour.0.0: nests deeper than 256 levels");
        }
      });

      it(`${prefix}: malformed JSON is 400 saying once where it fails, without quoting the body`, async () => {
        const cases: [string, RegExp][] = [
          ['{"name": "a", "count": 1', /^body is not valid JSON: Expected ',' or '}' .*position 24/],
          ["whk_secret", /^body is not valid JSON: Unexpected token 'w'$/],
          ["", /^body is empty: send a JSON value$/],
          ['{"__proto__": {"admin": true}}', /^body is not valid JSON: a __proto__ .* key is not allowed$/],
        ];
        for (const [payload, message] of cases) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: { "content-type": "application/json" },
            payload,
          });
          expect(response.statusCode, payload).toBe(400);
          expect(response.json(), payload).toEqual(shape(expect.stringMatching(message), "INVALID_JSON"));
        }
      });

      it(`${prefix}: a JSON body in a charset other than UTF-8 is 415 naming it`, async () => {
        const latin1 = Buffer.from('{"name": "caf\xe9", "count": 1}', "latin1");
        for (const charset of ["latin1", '"ISO-8859-1"']) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: { "content-type": `application/json; charset=${charset}` },
            payload: latin1,
          });
          expect(response.statusCode, charset).toBe(415);
          const named = charset.replaceAll('"', "");
          expect(response.json(), charset).toEqual(
            shape(
              `unsupported charset ${named}: send the JSON body as UTF-8 (application/json; charset=utf-8)`,
              "UNSUPPORTED_MEDIA_TYPE",
            ),
          );
        }
        for (const charset of ["utf-8", "UTF-8", "utf8", '"utf-8"']) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: { "content-type": `application/json;charset=${charset}` },
            payload: Buffer.from('{"name": "café", "count": 1}', "utf8"),
          });
          expect(response.statusCode, charset).toBe(200);
          expect(response.json(), charset).toEqual({ received: { name: "café", count: 1 } });
        }
      });

      it(`${prefix}: a body that is not valid UTF-8 is 400, not text with U+FFFD`, async () => {
        for (const contentType of ["application/json", "application/json; charset=utf-8"]) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: { "content-type": contentType },
            payload: Buffer.from('{"name": "caf\xe9", "count": 1}', "latin1"),
          });
          expect(response.statusCode, contentType).toBe(400);
          expect(response.json(), contentType).toEqual(
            shape("body is not valid UTF-8: send JSON encoded as UTF-8", "INVALID_JSON"),
          );
        }
      });

      it(`${prefix}: a body over the limit is 413`, async () => {
        const response = await inject({
          method: "POST",
          url: `${prefix}/probe`,
          payload: { name: "x".repeat(5000), count: 1 },
        });
        expect(response.statusCode).toBe(413);
        expect(response.json()).toEqual(
          shape("request body is larger than the limit of 2048 bytes", "PAYLOAD_TOO_LARGE"),
        );
      });

      it(`${prefix}: an unsupported content type is 415`, async () => {
        const response = await inject({
          method: "POST",
          url: `${prefix}/probe`,
          headers: { "content-type": "application/xml" },
          payload: "<a/>",
        });
        expect(response.statusCode).toBe(415);
        expect(response.json()).toEqual(
          shape("unsupported content type: send the body as application/json", "UNSUPPORTED_MEDIA_TYPE"),
        );
      });

      it(`${prefix}: a text/plain body on a JSON route is 415, not a schema violation`, async () => {
        for (const payload of ['{"name": "a", "count": 1}', "plain words"]) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: { "content-type": "text/plain; charset=utf-8" },
            payload,
          });
          expect(response.statusCode, payload).toBe(415);
          expect(response.json()).toEqual(
            shape("unsupported content type: send the body as application/json", "UNSUPPORTED_MEDIA_TYPE"),
          );
        }
      });

      it(`${prefix}: a value outside a union of literals is 400 listing the allowed values`, async () => {
        for (const mode of ["slow", 3]) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            payload: { name: "a", count: 1, mode },
          });
          expect(response.statusCode).toBe(400);
          expect(response.json()).toEqual(
            invalid(prefix, "mode: must be one of fast, safe, null", {
              field: "mode",
              location: "body",
              rule: "enum",
            }),
          );
        }
      });

      it(`${prefix}: text PostgreSQL cannot store is 400 naming the field`, async () => {
        // JSON escapes: the request text is plain ASCII, the parsed strings hold U+0000 or a lone surrogate.
        const cases: [string, string, string][] = [
          ['{"name": "a\\u0000b", "count": 1}', "name", "name: must not contain"],
          ['{"name": "a\\ud800", "count": 1}', "name", "name: must not contain"],
          ['{"name": "\\udfffa", "count": 1}', "name", "name: must not contain"],
          ['{"name": "a", "count": 1, "x\\u0000": 1}', "body", "body: keys must not contain"],
        ];
        for (const [payload, field, start] of cases) {
          const response = await inject({
            method: "POST",
            url: `${prefix}/probe`,
            headers: { "content-type": "application/json" },
            payload,
          });
          expect(response.statusCode, payload).toBe(400);
          expect(response.json(), payload).toEqual(
            invalid(prefix, `${start} U+0000 or unpaired surrogates`, {
              field,
              location: "body",
              rule: "storable_text",
            }),
          );
        }
        // A surrogate pair is one character (U+1F600), stored like any other.
        const paired = await inject({
          method: "POST",
          url: `${prefix}/probe`,
          headers: { "content-type": "application/json" },
          payload: '{"name": "\\ud83d\\ude00", "count": 1}',
        });
        expect(paired.statusCode).toBe(200);
        expect(paired.json()).toEqual({ received: { name: "\u{1F600}", count: 1 } });
      });

      it(`${prefix}: a failing query is 500, and its log line carries the database's message`, async () => {
        const requestId = `db-failure.${harness().engine}${prefix.replaceAll("/", ".")}`;
        const response = await inject({
          method: "GET",
          url: `${prefix}/probe/db-failure`,
          headers: { "x-request-id": requestId },
        });
        expect(response.statusCode).toBe(500);
        expect(response.json()).toEqual(shape("internal error", "INTERNAL"));
        const lines = errorLines.filter((line) => line.reqId === requestId);
        expect(lines.map(({ msg, database }) => ({ msg, database }))).toEqual([
          { msg: "request failed", database: { message: "division by zero", code: "22012" } },
        ]);
      });

      it(`${prefix}: an unknown route is 404`, async () => {
        const response = await inject({ method: "GET", url: `${prefix}/nothing-here?x=1` });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual(shape(`no route GET ${prefix}/nothing-here`, "ROUTE_NOT_FOUND"));
        // A long path is not repeated whole.
        const long = await inject({ method: "GET", url: `${prefix}/${"a".repeat(3000)}` });
        expect(long.statusCode).toBe(404);
        const message = (long.json().error ?? long.json().msg) as string;
        expect(message.length).toBeLessThan(300);
        expect(message).toMatch(/^no route GET .*a\.\.\.$/);
      });

      it(`${prefix}: an unexpected failure is 500 and hides its details`, async () => {
        const response = await inject({ method: "GET", url: `${prefix}/probe/crash` });
        expect(response.statusCode).toBe(500);
        expect(response.json()).toEqual(shape("internal error", "INTERNAL"));
        expect(response.body).not.toContain("hunter2");
      });

      it(`${prefix}: an expected failure keeps its code and details`, async () => {
        const response = await inject({ method: "GET", url: `${prefix}/probe/conflict` });
        expect(response.statusCode).toBe(409);
        const body = response.json();
        if (prefix.startsWith("/platform"))
          expect(body).toEqual({ msg: "already there", errCode: "CONFLICT", extras: [{ name: "x" }] });
        else expect(body).toEqual({ error: "already there", code: "CONFLICT", details: { name: "x" } });
      });
    }

    describe("on the domains' routes", () => {
      let auth: { authorization: string };
      beforeAll(async () => {
        auth = (await harness().createKey()).auth;
      });
      const call = (options: InjectOptions) =>
        inject({ ...options, headers: { ...auth, ...(options.headers as object) } });
      /** Each request is a 400 naming its field and where it was, with `message` and `rule`. */
      const expectRefused = async (
        cases: [InjectOptions, string, string][],
        message: string,
        rule: string,
      ) => {
        for (const [options, field, location] of cases) {
          const url = options.url as string;
          const response = await call(options);
          expect(response.statusCode, url).toBe(400);
          expect(response.json(), url).toEqual(
            invalid(url, `${field}: ${message}`, { field, location, rule }),
          );
        }
      };

      it("a value outside a name's pattern is told in words, not as the regular expression", async () => {
        const cases: [InjectOptions, string, string][] = [
          [
            {
              method: "POST",
              url: "/api/v1/integrations",
              payload: { name: "Bad Name", type: "prometheus" },
            },
            "name",
            "lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters",
          ],
          [
            {
              method: "POST",
              url: "/app/sre/api/v1/alerts/webhook",
              payload: { source: "grafana", integration: ".." },
            },
            "integration",
            "letters, digits, '.', '_', '~' and '-', and neither . nor ..",
          ],
        ];
        for (const [options, field, words] of cases) {
          const response = await call(options);
          expect(response.statusCode, options.url as string).toBe(400);
          expect(response.json(), options.url as string).toEqual(
            invalid(options.url as string, `${field}: must be ${words}`, {
              field,
              location: "body",
              rule: "pattern",
            }),
          );
        }
      });

      it("a query parameter given twice is named as given twice, not as a wrong type or value", async () => {
        const cases: [string, string][] = [
          ["/app/sre/api/v1/alerts?status=active&status=ignored", "status"],
          ["/app/sre/api/v1/alerts?page_size=1&page_size=2&page_size=3", "page_size"],
          ["/platform/api/v1/workflows?limit=1&limit=1", "limit"],
          [`/app/sre/api/v1/alerts?orgId=${randomUUID()}&orgId=${randomUUID()}`, "orgId"],
        ];
        for (const [url, field] of cases) {
          const response = await call({ method: "GET", url });
          expect(response.statusCode, url).toBe(400);
          const times = new URL(url, "http://x").searchParams.getAll(field).length;
          expect(response.json(), url).toEqual(
            invalid(url, `${field}: given ${times} times: give it once`, { field, location: "querystring" }),
          );
        }
      });

      it("a query string with bad percent-encoding is 400, not searched for as literal text", async () => {
        for (const url of [
          "/app/sre/api/v1/alerts?q=%FF",
          "/app/sre/api/v1/alerts?q=%ED%A0%80",
          "/app/sre/api/v1/alerts?q=50%",
          "/platform/api/v1/sessions?q=%zz",
        ]) {
          const response = await call({ method: "GET", url });
          expect(response.statusCode, url).toBe(400);
          const message =
            "the query string cannot be read: bad percent-encoding (a % must start a UTF-8 byte as %XX)";
          expect(response.json(), url).toEqual(
            url.startsWith("/platform/")
              ? { msg: message, errCode: "BAD_REQUEST", extras: [] }
              : { error: message, code: "BAD_REQUEST", details: {} },
          );
        }
        // Encoded text, a literal % given as %25 and a + are read as meant.
        for (const q of ["caf%C3%A9", "50%25", "a+b"]) {
          const response = await call({ method: "GET", url: `/app/sre/api/v1/alerts?q=${q}` });
          expect(response.statusCode, q).toBe(200);
        }
      });

      it("a value outside an enumeration names the field and lists the allowed values", async () => {
        const cases: [InjectOptions, string, string, readonly unknown[]][] = [
          [
            { method: "GET", url: "/app/sre/api/v1/alerts?status=bogus" },
            "status",
            "querystring",
            ALERT_STATUSES,
          ],
          [
            { method: "GET", url: "/app/sre/api/v1/alerts?signal_severity=critical" },
            "signal_severity",
            "querystring",
            SEVERITY_BUCKETS,
          ],
          [
            { method: "POST", url: "/app/sre/api/v1/alerts/webhook", payload: { source: "nagios" } },
            "source",
            "body",
            SOURCE_TYPES,
          ],
          // A number fails each literal on its type, and is answered the same way.
          [
            { method: "POST", url: "/app/sre/api/v1/alerts/webhook", payload: { source: 5 } },
            "source",
            "body",
            SOURCE_TYPES,
          ],
          [
            { method: "GET", url: "/platform/api/v1/webhooks?target_type=alert" },
            "target_type",
            "querystring",
            ["agent", "workflow"],
          ],
          // A literal inside an object that may also be null (Nullable): the literal's own answer.
          [
            {
              method: "POST",
              url: "/platform/api/v1/platform/ask/start",
              payload: { message: "x", prior_session: { enabled: true, match_mode: "fuzzy" } },
            },
            "prior_session.match_mode",
            "body",
            ["exact_normalized_text"],
          ],
        ];
        for (const [options, field, location, allowed] of cases) {
          const url = options.url as string;
          const response = await call(options);
          expect(response.statusCode, url).toBe(400);
          expect(response.json(), url).toEqual(
            invalid(url, `${field}: must be one of ${allowed.join(", ")}`, {
              field,
              location,
              rule: "enum",
            }),
          );
        }
      });

      it("an integer beyond the database's range is 400 naming the field", async () => {
        const cases: [InjectOptions, string, string][] = [
          [{ method: "GET", url: "/app/sre/api/v1/alerts?page=2147483648" }, "page", "querystring"],
          [
            { method: "GET", url: "/platform/api/v1/executions?offset=9223372036854775808" },
            "offset",
            "querystring",
          ],
          [
            { method: "PUT", url: "/platform/api/v1/workflows/wf-range/versions/2147483648", payload: {} },
            "version",
            "params",
          ],
        ];
        await expectRefused(cases, "must be <= 2147483647", "maximum");
        // The largest integer the database holds is still a valid request.
        const largest = await call({ method: "GET", url: "/platform/api/v1/executions?offset=2147483647" });
        expect(largest.statusCode).toBe(200);
        expect(largest.json()).toEqual([]);
      });

      it("a number not written as a plain decimal is 400 naming the field", async () => {
        // JavaScript's Number() reads all of these; Infinity then passed every bound.
        const cases: [InjectOptions, string, string][] = [
          [{ method: "GET", url: "/platform/api/v1/executions?limit=Infinity" }, "limit", "querystring"],
          [{ method: "GET", url: "/platform/api/v1/executions?offset=1e400" }, "offset", "querystring"],
          [{ method: "GET", url: "/platform/api/v1/sessions?limit=-Infinity" }, "limit", "querystring"],
          [{ method: "GET", url: "/platform/api/v1/executions?limit=0x10" }, "limit", "querystring"],
          [{ method: "GET", url: "/app/sre/api/v1/alerts?page=1e30" }, "page", "querystring"],
          [{ method: "GET", url: "/app/sre/api/v1/alerts?page_size=2e0" }, "page_size", "querystring"],
          [{ method: "GET", url: "/app/sre/api/v1/alerts?page=%205" }, "page", "querystring"],
          [
            { method: "PUT", url: "/platform/api/v1/workflows/wf-text/versions/Infinity", payload: {} },
            "version",
            "params",
          ],
          [
            { method: "POST", url: "/platform/api/v1/workflows/wf-text/versions/0b1/approve" },
            "version",
            "params",
          ],
        ];
        await expectRefused(cases, "must be integer", "type");
        const written = await call({ method: "GET", url: "/platform/api/v1/executions?limit=007&offset=0" });
        expect(written.statusCode, written.body).toBe(200);
      });

      it("the OpenAPI document shows the bounds every input integer gets", async () => {
        const document = (await inject({ method: "GET", url: "/openapi.json" })).json();
        const parameter = (path: string, method: string, name: string) =>
          document.paths[path][method].parameters.find((p: { name: string }) => p.name === name).schema;
        expect(parameter("/app/sre/api/v1/alerts", "get", "page")).toEqual({
          type: "integer",
          minimum: 1,
          maximum: 2147483647,
          default: 1,
        });
        expect(parameter("/platform/api/v1/workflows/{name}/versions/{version}", "put", "version")).toEqual({
          type: "integer",
          minimum: 1,
          maximum: 2147483647,
        });
        // Explicit bounds stay as the route declares them.
        expect(parameter("/platform/api/v1/executions", "get", "limit")).toMatchObject({
          minimum: 1,
          maximum: 100,
        });
      });

      it("text PostgreSQL cannot store in a body, query or path is 400 naming the field", async () => {
        const cases: [InjectOptions, string, string][] = [
          [
            {
              method: "POST",
              url: "/platform/api/v1/workflows",
              headers: { "content-type": "application/json" },
              payload: '{"name": "wf-text", "description": "disk\\u0000full"}',
            },
            "description",
            "body",
          ],
          [
            {
              method: "POST",
              url: "/platform/api/v1/workflows",
              headers: { "content-type": "application/json" },
              payload: '{"name": "wf-text", "routing_examples": ["fine", "half \\ud83d"]}',
            },
            "routing_examples.1",
            "body",
          ],
          [{ method: "GET", url: "/app/sre/api/v1/alerts?q=disk%00full" }, "q", "querystring"],
          [{ method: "GET", url: "/app/sre/api/v1/alerts/disk%00full" }, "id", "params"],
        ];
        for (const [options, field, location] of cases) {
          const url = options.url as string;
          const response = await call(options);
          expect(response.statusCode, url).toBe(400);
          expect(response.json(), url).toEqual(
            invalid(url, `${field}: must not contain U+0000 or unpaired surrogates`, {
              field,
              location,
              rule: "storable_text",
            }),
          );
        }
        const listed = await call({ method: "GET", url: "/platform/api/v1/workflows" });
        expect(listed.json()).toEqual([]);
      });

      it("a body in latin1, or not valid UTF-8, creates nothing: 415 or 400, never U+FFFD stored", async () => {
        const bytes = Buffer.from('{"name": "caf\xe9"}', "latin1");
        const latin1 = await call({
          method: "POST",
          url: "/api/v1/orgs",
          headers: { "content-type": "application/json; charset=latin1" },
          payload: bytes,
        });
        expect(latin1.statusCode).toBe(415);
        expect(latin1.json()).toEqual({
          error: "unsupported charset latin1: send the JSON body as UTF-8 (application/json; charset=utf-8)",
          code: "UNSUPPORTED_MEDIA_TYPE",
          details: {},
        });
        const notUtf8 = await call({
          method: "POST",
          url: "/api/v1/orgs",
          headers: { "content-type": "application/json" },
          payload: bytes,
        });
        expect(notUtf8.statusCode).toBe(400);
        expect(notUtf8.json()).toEqual({
          error: "body is not valid UTF-8: send JSON encoded as UTF-8",
          code: "INVALID_JSON",
          details: {},
        });
        const me = await call({ method: "GET", url: "/api/v1/me" });
        expect(me.json().orgs).toEqual([]);
      });

      it("a text/plain body on a JSON route is 415; the webhook trigger still takes it", async () => {
        const refused = await call({
          method: "POST",
          url: "/platform/api/v1/workflows",
          headers: { "content-type": "text/plain" },
          payload: '{"name": "wf-plain"}',
        });
        expect(refused.statusCode).toBe(415);
        expect(refused.json()).toEqual({
          msg: "unsupported content type: send the body as application/json",
          errCode: "UNSUPPORTED_MEDIA_TYPE",
          extras: [],
        });

        // SNS posts CloudWatch alarms as text/plain.
        const registered = await call({
          method: "POST",
          url: "/app/sre/api/v1/alerts/webhook",
          payload: { source: "cloudwatch" },
        });
        expect(registered.statusCode).toBe(201);
        const { id, platform_webhook_url } = registered.json();
        const accepted = await inject({
          method: "POST",
          url: `/platform${platform_webhook_url}`,
          headers: { "content-type": "text/plain; charset=UTF-8", "x-amz-sns-message-type": "Notification" },
          payload: readFixture("cloudwatch", "sns-alarm-s3-bucket-size.json"),
        });
        expect(accepted.statusCode, accepted.body).toBe(202);
        expect(accepted.json()).toMatchObject({ webhook_id: id, events: 1 });
        const alerts = await call({ method: "GET", url: "/app/sre/api/v1/alerts" });
        expect(alerts.json().alerts.map((alert: { title: string }) => alert.title)).toEqual([
          "bucketbytesAlarm",
        ]);
      });
    });

    it("echoes a sane x-request-id and invents one otherwise", async () => {
      const given = await inject({
        method: "GET",
        url: "/healthz",
        headers: { "x-request-id": "trace-abc.123" },
      });
      expect(given.headers["x-request-id"]).toBe("trace-abc.123");
      const invented = await inject({
        method: "GET",
        url: "/healthz",
        headers: { "x-request-id": "bad id\n" },
      });
      expect(invented.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    });
  },
  { bodyLimitBytes: 2048 },
  { extraRoutes: [probeRoutes], logger },
);
