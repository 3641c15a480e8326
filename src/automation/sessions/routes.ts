import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { contextOf } from "../../core/context.ts";
import { JSON_ERROR_REF as jsonError, OrgQuery, OrgOnlyQuery as Query } from "../../core/http/schemas.ts";
import {
  ARTIFACT_MAX_BYTES,
  contentDisposition,
  downloadSessionArtifact,
  listSessionArtifacts,
} from "./artifacts.ts";
import { exportSession } from "./export.ts";
import { ListSessionsQuery } from "./schemas.ts";
import { getSession, listSessions } from "./sessions.ts";
import { terminateSession } from "./terminate.ts";

const SessionParams = Type.Object({ session_id: Type.String({ maxLength: 100 }) });
const ArtifactParams = Type.Object({
  session_id: Type.String({ maxLength: 100 }),
  artifact_id: Type.String({
    minLength: 1,
    maxLength: 200,
    description: "The artifact's uuid, or its file name (case-insensitive)",
  }),
});
const ExportQuery = Type.Object({
  ...OrgQuery,
  parts: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        "Comma-separated kinds: notes, report, evidence; omitted means all three; unknown kinds are ignored",
    }),
  ),
  format: Type.Union([Type.Literal("json")], { default: "json", description: "Only json" }),
});
const TerminateQuery = Type.Object({
  ...OrgQuery,
  reason: Type.Optional(Type.String({ maxLength: 1000 })),
});
const read = { scope: "aios_automation_read" } as const;
const write = { scope: "aios_automation_write" } as const;
const tags = ["sessions"];

/** Sessions: list and search, one in full, export, artifacts, terminate. */
export async function sessionRoutes(instance: FastifyInstance) {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    "/platform/api/v1/sessions",
    {
      config: read,
      schema: {
        operationId: "listSessions",
        description: "The caller's sessions, most recent activity first",
        tags,
        querystring: ListSessionsQuery,
        response: { 200: Type.Ref("SessionListResponse") },
      },
    },
    async (request) => listSessions({ ctx: contextOf(request), input: request.query }),
  );
  app.get(
    "/platform/api/v1/sessions/:session_id",
    {
      config: read,
      schema: {
        operationId: "getSessionByID",
        description: "The session with its messages, runs, artifacts, computed values, costs and summary",
        tags,
        params: SessionParams,
        querystring: Query,
        response: { 200: Type.Ref("Session"), 404: { ...jsonError, description: "Not found or not owned" } },
      },
    },
    async (request) =>
      getSession({ ctx: contextOf(request), input: { sessionId: request.params.session_id } }),
  );
  app.get(
    "/platform/api/v1/sessions/:session_id/export",
    {
      config: read,
      schema: {
        operationId: "exportSession",
        description: "A JSON manifest with the chosen parts inline",
        tags,
        params: SessionParams,
        querystring: ExportQuery,
        response: {
          200: Type.Ref("SessionExport"),
          400: { ...jsonError, description: "Unsupported format" },
          404: { ...jsonError, description: "Not found or not owned" },
        },
      },
    },
    async (request) =>
      exportSession({
        ctx: contextOf(request),
        input: { sessionId: request.params.session_id, parts: request.query.parts },
      }),
  );
  app.post(
    "/platform/api/v1/sessions/:session_id/terminate",
    {
      config: write,
      schema: {
        operationId: "terminateSession",
        description:
          "Cancels the session's running executions; idempotent (0 when nothing runs). A step under way sees it within about a second and drops an http_request or model call still waiting",
        tags,
        params: SessionParams,
        querystring: TerminateQuery,
        response: {
          200: Type.Ref("TerminateSessionResponse"),
          404: { ...jsonError, description: "Not found or not owned" },
          503: {
            ...jsonError,
            description:
              "A running execution could not be cancelled (its run stayed locked); the others are cancelled and extras name it. Retry",
          },
        },
      },
    },
    async (request) =>
      terminateSession({
        ctx: contextOf(request),
        input: { sessionId: request.params.session_id, reason: request.query.reason ?? null },
      }),
  );
  app.get(
    "/platform/api/v1/sessions/:session_id/artifacts",
    {
      config: read,
      schema: {
        operationId: "listSessionArtifacts",
        tags,
        params: SessionParams,
        querystring: Query,
        response: { 200: Type.Array(Type.Ref("ArtifactInfo")) },
      },
    },
    async (request) =>
      listSessionArtifacts({ ctx: contextOf(request), input: { sessionId: request.params.session_id } }),
  );
  app.get(
    "/platform/api/v1/sessions/:session_id/artifacts/:artifact_id/download",
    {
      config: read,
      schema: {
        operationId: "downloadSessionArtifact",
        description: `The artifact's bytes exactly as written (at most ${ARTIFACT_MAX_BYTES} bytes)`,
        tags,
        params: ArtifactParams,
        querystring: Query,
        response: {
          200: {
            description: "The artifact's bytes",
            content: { "application/octet-stream": { schema: Type.String({ format: "binary" }) } },
          },
          404: { ...jsonError, description: "Artifact not found" },
        },
      },
    },
    async (request, reply) => {
      const artifact = await downloadSessionArtifact({
        ctx: contextOf(request),
        input: { sessionId: request.params.session_id, artifactId: request.params.artifact_id },
      });
      return reply
        .type("application/octet-stream")
        .header("content-disposition", contentDisposition(artifact.name))
        .send(artifact.content);
    },
  );
}
