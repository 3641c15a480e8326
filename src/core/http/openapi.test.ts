// The API document as a client generated from /openapi.json sees it: inputs the spec gives a default
// or calls optional are optional (and leaving them out works), and the spec's records are named
// schemas under the spec's names.
import { expect, it } from "vitest";
import { amBody, deliverIds, registerTrigger } from "../../../test/alerts.ts";
import { call, describeEachEngine } from "../../../test/harness.ts";

interface Operation {
  operationId: string;
  parameters?: { in: string; name: string; required: boolean }[];
  requestBody?: { required?: boolean };
}

describeEachEngine("API document", (harness) => {
  async function operation(path: string, method: string): Promise<Operation> {
    const document = (await harness().vigil.app.inject({ url: "/openapi.json" })).json();
    return document.paths[path][method];
  }

  const required = (op: Operation) =>
    (op.parameters ?? []).filter((parameter) => parameter.required).map((parameter) => parameter.name);

  it("listAlerts: every query parameter is optional, the defaulted ones included", async () => {
    const op = await operation("/app/sre/api/v1/alerts", "get");
    expect(op.operationId).toBe("listAlerts");
    expect(op.parameters?.map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(["status", "sort_by", "page", "page_size"]),
    );
    expect(required(op)).toEqual([]);
  });

  it("listInvestigations: page and page_size are optional", async () => {
    const op = await operation("/app/sre/api/v1/investigations", "get");
    expect(op.parameters?.map((parameter) => parameter.name)).toEqual(
      expect.arrayContaining(["page", "page_size"]),
    );
    expect(required(op)).toEqual([]);
  });

  it("investigateAlert: the body is optional; path id is required", async () => {
    const op = await operation("/app/sre/api/v1/alerts/{id}/investigate", "post");
    expect(op.operationId).toBe("investigateAlert");
    expect(op.requestBody?.required).toBe(false);
    expect(required(op)).toEqual(["id"]);
  });

  it("the spec's response records are named schemas of the document, as the spec names them", async () => {
    const document = (await harness().vigil.app.inject({ url: "/openapi.json" })).json();
    const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
    const answer = (path: string, method: string) =>
      document.paths[path][method].responses["200"].content["application/json"].schema;
    expect(answer("/app/sre/api/v1/alerts", "get")).toEqual(ref("ListAlertsResponse"));
    expect(answer("/app/sre/api/v1/alerts/categorization/summary", "get")).toEqual(
      ref("AlertCategorizationSummary"),
    );
    expect(answer("/app/sre/api/v1/alerts/{id}/investigate", "post")).toEqual(ref("InvestigateResponse"));
    expect(answer("/app/sre/api/v1/investigations", "get")).toEqual(ref("ListInvestigationsResponse"));
    const { schemas } = document.components;
    expect(schemas.ListAlertsResponse.properties.summary).toEqual(ref("AlertSummary"));
    expect(schemas.AlertSummary.required).toEqual([
      "total_active",
      "needs_attention",
      "others",
      "needs_review",
      "false_positive",
    ]);
    expect(schemas.InvestigateResponse.properties.investigation).toEqual(ref("InvestigationRef"));
    expect(schemas.InvestigateResponse.required).toEqual(["investigation"]);
    expect(schemas.ListInvestigationsResponse.required).toContain("total");
  });

  it("declares every tag its operations use, and the secrets area the spec declares, each described", async () => {
    const document = (await harness().vigil.app.inject({ url: "/openapi.json" })).json();
    const declared = new Map<string, string>(
      document.tags.map((tag: { name: string; description: string }) => [tag.name, tag.description]),
    );
    const used = new Set<string>(
      Object.values(document.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap((path) =>
        Object.values(path).flatMap((op) => op.tags ?? []),
      ),
    );
    const undeclared = [...used, "secrets"].filter((tag) => !/\w/.test(declared.get(tag) ?? ""));
    expect(undeclared).toEqual([]);
  });

  it("every 401 documents its bearer challenge header", async () => {
    const document = (await harness().vigil.app.inject({ url: "/openapi.json" })).json();
    type Responses = { responses: Record<string, { headers?: object }> };
    const unauthenticated = Object.values(document.paths as Record<string, Record<string, Responses>>)
      .flatMap((methods) => Object.values(methods))
      .map((op) => op.responses["401"])
      .filter((response) => response !== undefined);
    expect(unauthenticated.length).toBeGreaterThan(50);
    for (const response of unauthenticated) {
      expect(response.headers).toHaveProperty("WWW-Authenticate.schema.type", "string");
    }
  });

  it("every operation with credentials documents 415 and 503, which any of them may answer", async () => {
    const document = (await harness().vigil.app.inject({ url: "/openapi.json" })).json();
    type Responses = { operationId: string; responses: Record<string, unknown> };
    const operations = Object.values(document.paths as Record<string, Record<string, Responses>>)
      .flatMap((methods) => Object.values(methods))
      .filter((op) => op.responses["401"] !== undefined);
    expect(operations.length).toBeGreaterThan(50);
    for (const op of operations) {
      // The webhook trigger takes a body of any type.
      const statuses = op.operationId === "triggerWebhook" ? ["503"] : ["415", "503"];
      expect(Object.keys(op.responses), op.operationId).toEqual(expect.arrayContaining(statuses));
    }
    // An operation without a body answers 415 for one of another content type, as documented.
    const { auth } = await harness().createKey();
    const revoke = await harness().vigil.app.inject({
      method: "POST",
      url: "/api/v1/keys/00000000-0000-4000-8000-000000000000/revoke",
      headers: { ...auth, "content-type": "text/plain" },
      payload: "please",
    });
    expect(revoke.statusCode).toBe(415);
  });

  it("a body that is required stays required", async () => {
    const op = await operation("/app/sre/api/v1/alerts/{id}", "patch");
    expect(op.requestBody?.required).toBe(true);
  });

  it("the calls work without the optional inputs, an empty body under a JSON content type included", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const list = await call(h, auth, "GET", "/app/sre/api/v1/alerts");
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json()).toMatchObject({ page: 1, page_size: 20 });
    const investigations = await call(h, auth, "GET", "/app/sre/api/v1/investigations");
    expect(investigations.json()).toEqual({ investigations: [], page: 1, page_size: 20, total: 0 });
    const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "doc" });
    const [alertId] = await deliverIds(
      h,
      trigger,
      amBody([
        {
          status: "firing",
          fingerprint: "doc-1",
          startsAt: "2026-11-22T10:00:00Z",
          labels: { alertname: "Doc" },
        },
      ]),
    );
    const started = await call(h, auth, "POST", `/app/sre/api/v1/alerts/${alertId}/investigate`);
    expect(started.statusCode, started.body).toBe(200);
    expect(started.json().investigation.status).toBe("queued");
    // Clients that send a JSON content type on every request send it with no body too.
    const again = await h.vigil.app.inject({
      method: "POST",
      url: `/app/sre/api/v1/alerts/${alertId}/investigate`,
      headers: { ...auth, "content-type": "application/json" },
      payload: "",
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().investigation.id).toBe(started.json().investigation.id);
    // Where the body is required, an empty one is still refused.
    const patch = await h.vigil.app.inject({
      method: "PATCH",
      url: `/app/sre/api/v1/alerts/${alertId}`,
      headers: { ...auth, "content-type": "application/json" },
      payload: "",
    });
    expect(patch.statusCode).toBe(400);
    expect(patch.json().code).toBe("INVALID_JSON");
  });
});
