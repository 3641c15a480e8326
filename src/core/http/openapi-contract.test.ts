// The API description against the spec's words for the platform area: a query parameter with a
// default may be left out, and every platform operation has a default response for unexpected
// errors (JsonError), the public webhook trigger included.
import { expect, it } from "vitest";
import { describeEachEngine } from "../../../test/harness.ts";

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema: { default?: unknown };
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}

const JSON_ERROR = { "application/json": { schema: { $ref: "#/components/schemas/JsonError" } } };

describeEachEngine("API description", (harness) => {
  async function operations(): Promise<Map<string, Operation & { path: string }>> {
    const response = await harness().vigil.app.inject({ method: "GET", url: "/openapi.json" });
    expect(response.statusCode).toBe(200);
    const byId = new Map<string, Operation & { path: string }>();
    const paths = response.json().paths as Record<string, Record<string, Operation>>;
    for (const [path, item] of Object.entries(paths)) {
      for (const operation of Object.values(item)) byId.set(operation.operationId, { ...operation, path });
    }
    return byId;
  }

  it("shows limit, offset, includeDrafts and format as optional, with the spec's defaults and bounds", async () => {
    const byId = await operations();
    const query = (operationId: string) =>
      Object.fromEntries(
        (byId.get(operationId)?.parameters ?? [])
          .filter((parameter) => parameter.in === "query")
          .map((parameter) => [parameter.name, parameter]),
      );
    const optional = (schema: object) =>
      expect.objectContaining({ required: false, schema: expect.objectContaining(schema) });
    const page = (limit: number) => ({
      limit: optional({ type: "integer", default: limit, minimum: 1, maximum: 100 }),
      offset: optional({ type: "integer", default: 0, minimum: 0 }),
    });
    expect(query("listSessions")).toMatchObject(page(20));
    expect(query("listExecutions")).toMatchObject(page(20));
    expect(query("listWebhookRuns")).toMatchObject(page(10));
    expect(query("getWorkflow")).toMatchObject({
      includeDrafts: optional({ type: "boolean", default: true }),
    });
    expect(query("exportSession")).toMatchObject({ format: optional({ default: "json", enum: ["json"] }) });
    // No query parameter of any operation is required only because it has a default.
    for (const [operationId, operation] of byId) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === "query" && parameter.schema.default !== undefined) {
          expect(parameter.required, `${operationId} ${parameter.name}`).not.toBe(true);
        }
      }
    }
  });

  it("gives every platform operation a default response in JsonError, the webhook trigger too", async () => {
    const byId = await operations();
    const platform = [...byId.values()].filter((operation) => operation.path.startsWith("/platform/"));
    expect(platform.map((operation) => operation.operationId)).toEqual(
      expect.arrayContaining([
        "listSessions",
        "getSessionByID",
        "listSessionArtifacts",
        "downloadSessionArtifact",
        "exportSession",
        "terminateSession",
        "triggerWebhook",
        "listWebhookRuns",
        "getWebhookRun",
        "startAskPlatform",
        "listExecutions",
        "getExecutionTrace",
        "registerAgent",
        "updateAgent",
        "createWorkflow",
        "getWorkflow",
        "updateWorkflow",
        "createWorkflowVersion",
        "updateWorkflowVersion",
        "approveWorkflowVersion",
      ]),
    );
    for (const operation of platform) {
      expect(operation.responses.default?.content, operation.operationId).toEqual(JSON_ERROR);
    }
    const trigger = byId.get("triggerWebhook");
    for (const status of ["401", "404", "423", "500"]) {
      expect(trigger?.responses[status]?.content, `triggerWebhook ${status}`).toEqual(JSON_ERROR);
    }
  });

  it("shows the trigger's body as optional and of any content type, and 415 wherever a JSON body is read", async () => {
    const byId = await operations();
    const trigger = byId.get("triggerWebhook");
    expect(trigger?.requestBody?.required).toBe(false);
    expect(Object.keys(trigger?.requestBody?.content ?? {})).toEqual(
      expect.arrayContaining(["application/json", "text/plain", "*/*"]),
    );
    // The trigger reads any content type, so it never answers 415.
    expect(trigger?.responses["415"]).toBeUndefined();
    const withJsonBody = [...byId.values()].filter(
      (operation) => operation.operationId !== "triggerWebhook" && operation.requestBody,
    );
    expect(withJsonBody.map((operation) => operation.operationId)).toEqual(
      expect.arrayContaining(["createApiKey", "registerAgent", "updateAlert", "startAskPlatform"]),
    );
    for (const operation of withJsonBody) {
      expect(operation.responses["415"], operation.operationId).toBeDefined();
    }
  });
});

describeEachEngine("API description formats", (harness) => {
  it("gives the spec's int64 and double formats to durations, sizes, costs and confidences", async () => {
    const response = await harness().vigil.app.inject({ method: "GET", url: "/openapi.json" });
    const schemas = response.json().components.schemas;
    expect(schemas.ExecutionMeta.properties.duration_ms).toMatchObject({ type: "integer", format: "int64" });
    expect(schemas.ExecutionMeta.properties.total_cost).toMatchObject({ type: "number", format: "double" });
    expect(schemas.ArtifactInfo.properties.size_bytes).toMatchObject({ type: "integer", format: "int64" });
    expect(schemas.AskStartResponse.properties.candidates.items.properties.confidence).toMatchObject({
      type: "number",
      format: "double",
    });
  });
});
