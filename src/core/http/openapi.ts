// The API document is generated from the route schemas, never kept by hand.
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { COMMON_ERROR_STATUSES, ErrorResponse, JsonError, takesOptionalBody } from "./schemas.ts";

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid input: the message names the field",
  401: "Missing, malformed, unknown or revoked credentials",
  403: "The API key lacks the route's scope",
  404: "Not found, or not owned by the caller",
  413: "Request body larger than the limit",
  // An operation without a body refuses one of another content type too (input-rules.ts).
  415: "The body is not application/json in UTF-8",
  500: "Unexpected error",
  503: "The database cannot be reached, refuses Vigil's connections or is at its connection limit, or Vigil is shutting down: send the request again (Retry-After)",
};

const BEARER_CHALLENGE = {
  description:
    'The bearer challenge: `Bearer realm="vigil"`, with `error="invalid_token"` when credentials were sent',
  schema: { type: "string" },
};

type Operation = {
  operationId?: string;
  parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[];
  requestBody?: { required?: boolean };
  responses?: Record<string, unknown>;
};

/**
 * What the generator cannot see in a route schema: a query parameter with a default may be left out
 * (its schema lists it as required only so that the handler's type has the value), and so may the
 * body of a route that takes none as `{}` (optionalBody). Every platform operation has a default
 * response for unexpected errors, in JsonError.
 */
function finishDocument(document: { paths?: object }, optionalBodies: Set<string>): void {
  for (const [path, methods] of Object.entries(document.paths ?? {}) as [
    string,
    Record<string, Operation>,
  ][]) {
    for (const operation of Object.values(methods)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === "query" && parameter.schema?.default !== undefined) parameter.required = false;
      }
      if (operation.requestBody && optionalBodies.has(operation.operationId ?? "")) {
        operation.requestBody.required = false;
      }
      const unauthenticated = operation.responses?.["401"] as { headers?: object } | undefined;
      if (unauthenticated) unauthenticated.headers = { "WWW-Authenticate": BEARER_CHALLENGE };
      if (path.startsWith("/platform/") && operation.responses && !operation.responses.default) {
        operation.responses.default = {
          description: "Unexpected error",
          content: { "application/json": { schema: { $ref: "#/components/schemas/JsonError" } } },
        };
      }
    }
  }
}

export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  app.addSchema(ErrorResponse);
  app.addSchema(JsonError);
  const optionalBodies = new Set<string>();
  app.addHook("onRoute", (route) => {
    const operationId = route.schema?.operationId;
    if (operationId && takesOptionalBody(route)) optionalBodies.add(operationId);
  });
  // Declare the error statuses on every route, in the body its family answers with.
  app.addHook("onRoute", (route) => {
    if (!route.schema || route.config?.public === true || route.schema.hide) return;
    const url = route.url;
    const ref = { $ref: url.startsWith("/platform/") ? "JsonError#" : "ErrorResponse#" };
    const response = (route.schema.response ?? {}) as Record<string | number, unknown>;
    for (const status of COMMON_ERROR_STATUSES) {
      if (!(status in response)) response[status] = { ...ref, description: ERROR_DESCRIPTIONS[status] };
    }
    route.schema.response = response;
    route.schema.security ??= [{ apiKey: [] }];
  });
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Vigil",
        version: "0.1.0",
        description: "SRE alert and automation service. API description version 0.1.0.",
      },
      servers: [{ url: publicUrl }],
      tags: [
        { name: "alerts", description: "The alert console: lists, one alert, triage, history, summaries" },
        { name: "alert webhooks", description: "Alert-ingest registrations (svc_sre_alert_webhook)" },
        { name: "alert sync", description: "Pull sync of alerts from an Alertmanager integration" },
        { name: "investigations", description: "Investigations of alerts and their records" },
        { name: "webhooks", description: "The webhook trigger, named webhooks and their runs" },
        { name: "ask", description: "Ask: a message routed to an agent or a workflow" },
        { name: "sessions", description: "Sessions, their artifacts and exports" },
        { name: "executions", description: "Execution traces" },
        { name: "agents", description: "Agents" },
        { name: "workflows", description: "Versioned workflows" },
        { name: "apps", description: "Catalog apps, their bindings (svc_app), discovery and setup" },
        { name: "integrations", description: "Connections to monitoring and tooling systems" },
        { name: "keys", description: "API keys" },
        { name: "orgs", description: "Organizations" },
        { name: "severity", description: "Severity mappings" },
        {
          name: "secrets",
          description:
            "No operation reads a secret back: integration credentials are write-only (sealed with SECRET_KEY; an integration says has_credentials), API keys, webhook tokens and app tokens are shown when created or rotated, and only the trigger URL and app_token are shown again, to keys that may write them (the app token only to a key that also holds every scope it carries)",
        },
        { name: "operations", description: "Health, readiness and metrics" },
      ],
      components: {
        securitySchemes: {
          apiKey: {
            type: "http",
            scheme: "bearer",
            description: "Vigil API key: Authorization: Bearer <key>",
          },
          WebhookToken: {
            type: "apiKey",
            in: "query",
            name: "apiKey",
            description: "Webhook token, or Authorization: Bearer <WEBHOOK_TOKEN>",
          },
        },
      },
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) => {
      const document =
        "openapiObject" in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      finishDocument(document, optionalBodies);
      return document;
    },
  });
  app.get("/openapi.json", { schema: { hide: true }, config: { public: true } }, async () => app.swagger());
  // The reference page is public like the document it renders.
  app.addHook("onRoute", (route) => {
    if (route.url.startsWith("/docs")) route.config = { ...route.config, public: true };
  });
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { url: "/openapi.json" } });
}
