// The error contract of every route family, proven through real HTTP requests on routes that
// declare their schemas like any domain route does.
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, InjectOptions } from "fastify";
import { expect, it } from "vitest";
import { describeEachEngine } from "../../../test/harness.ts";
import { AppError } from "../errors.ts";

const Echo = Type.Object(
  { name: Type.String({ minLength: 1 }), count: Type.Integer({ minimum: 1 }) },
  {
    additionalProperties: false,
  },
);

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

      it(`${prefix}: a body over the limit is 413`, async () => {
        const response = await inject({
          method: "POST",
          url: `${prefix}/probe`,
          payload: { name: "x".repeat(5000), count: 1 },
        });
        expect(response.statusCode).toBe(413);
        expect(response.json()).toEqual(shape("request body is larger than the limit", "PAYLOAD_TOO_LARGE"));
      });

      it(`${prefix}: an unsupported content type is 415`, async () => {
        const response = await inject({
          method: "POST",
          url: `${prefix}/probe`,
          headers: { "content-type": "application/xml" },
          payload: "<a/>",
        });
        expect(response.statusCode).toBe(415);
        expect(response.json()).toMatchObject(
          prefix.startsWith("/platform")
            ? { errCode: "UNSUPPORTED_MEDIA_TYPE" }
            : {
                code: "UNSUPPORTED_MEDIA_TYPE",
              },
        );
      });

      it(`${prefix}: an unknown route is 404`, async () => {
        const response = await inject({ method: "GET", url: `${prefix}/nothing-here?x=1` });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual(shape(`no route GET ${prefix}/nothing-here`, "ROUTE_NOT_FOUND"));
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
  { extraRoutes: [probeRoutes] },
);
