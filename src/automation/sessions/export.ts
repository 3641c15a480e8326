// A session's export: one JSON manifest holding the chosen parts inline. notes: the conversation
// and its summary; report: the runs' structured outputs and their text artifacts; evidence: each
// run's input and steps with their outputs, and every artifact's hash.
import { asc, eq, sql } from "drizzle-orm";
import { tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { executionNodes, executions, sessionArtifacts, sessionMessages } from "../tables.ts";
import { EXPORT_PARTS, type ExportPart, type SessionExport } from "./schemas.ts";
import { messageOrder, ownedSession } from "./session-rows.ts";
import { sessionSummary } from "./sessions.ts";

/** Text artifacts larger than this are listed in the report without their content inline. */
export const EXPORT_TEXT_MAX_BYTES = 1024 * 1024;

/** `parts` as a set of known kinds: omitted or empty means all three; unknown kinds are ignored. */
export function parseParts(parts: string | undefined): ExportPart[] {
  if (parts === undefined || parts.trim() === "") return [...EXPORT_PARTS];
  const asked = new Set(parts.split(",").map((part) => part.trim().toLowerCase()));
  return EXPORT_PARTS.filter((part) => asked.has(part));
}

export async function exportSession({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { sessionId: string; parts?: string };
}): Promise<SessionExport> {
  const session = await ownedSession(ctx.db, tenantOf(ctx.actor), input.sessionId);
  const parts = parseParts(input.parts);
  const manifest: SessionExport = {
    session_id: session.id,
    format: "json",
    generated_at: ctx.now().toISOString(),
    title: session.title,
    parts,
  };
  const runs = await ctx.db
    .select()
    .from(executions)
    .where(eq(executions.sessionId, session.id))
    .orderBy(asc(executions.startedAt), asc(executions.traceId));
  const artifacts =
    parts.includes("report") || parts.includes("evidence")
      ? await ctx.db
          .select({
            id: sessionArtifacts.id,
            name: sessionArtifacts.name,
            mimeType: sessionArtifacts.mimeType,
            sizeBytes: sessionArtifacts.sizeBytes,
            sha256: sql<string>`encode(sha256(${sessionArtifacts.content}), 'hex')`,
            bytes: sql<Uint8Array | null>`case when ${sessionArtifacts.mimeType} like 'text/%' and ${sessionArtifacts.sizeBytes} <= ${EXPORT_TEXT_MAX_BYTES} then ${sessionArtifacts.content} end`,
          })
          .from(sessionArtifacts)
          .where(eq(sessionArtifacts.sessionId, session.id))
          .orderBy(asc(sessionArtifacts.createdAt), asc(sessionArtifacts.name))
      : [];
  if (parts.includes("notes")) {
    const messages = await ctx.db
      .select()
      .from(sessionMessages)
      .where(eq(sessionMessages.sessionId, session.id))
      .orderBy(...messageOrder);
    manifest.notes = {
      summary: await sessionSummary(ctx.db, session),
      messages: messages.map((message) => ({
        id: message.id,
        role: message.role as "user" | "assistant",
        content: message.content,
        trace_id: message.traceId,
        data: message.data,
        created_at: message.createdAt.toISOString(),
      })),
    };
  }
  if (parts.includes("report")) {
    manifest.report = {
      structured_outputs: runs
        .filter((run) => run.structuredOutput)
        .map((run) => ({
          trace_id: run.traceId,
          target_name: run.targetName,
          ...(run.structuredOutput ?? emptyOutput),
        })),
      documents: artifacts
        .filter((artifact) => artifact.bytes !== null)
        .map((artifact) => ({
          artifact_id: artifact.id,
          name: artifact.name,
          mime_type: artifact.mimeType,
          sha256: artifact.sha256,
          content: artifact.bytes ? utf8.decode(artifact.bytes) : "",
        })),
    };
  }
  if (parts.includes("evidence")) {
    const steps = runs.length
      ? await ctx.db
          .select()
          .from(executionNodes)
          .innerJoin(executions, eq(executions.traceId, executionNodes.traceId))
          .where(eq(executions.sessionId, session.id))
          .orderBy(asc(executionNodes.depth), asc(executionNodes.stagePosition), asc(executionNodes.position))
      : [];
    manifest.evidence = {
      executions: runs.map((run) => ({
        trace_id: run.traceId,
        target_type: run.targetType,
        target_name: run.targetName,
        status: run.status,
        input: run.input ?? null,
        steps: steps
          .filter((step) => step.execution_nodes.traceId === run.traceId)
          .map(({ execution_nodes: node }) => ({
            id: node.key,
            type: node.type,
            label: node.label,
            state: node.status,
            output: node.output ?? null,
            error: node.error,
          })),
      })),
      artifacts: artifacts.map((artifact) => ({
        id: artifact.id,
        name: artifact.name,
        mime_type: artifact.mimeType,
        size_bytes: artifact.sizeBytes,
        sha256: artifact.sha256,
      })),
    };
  }
  return manifest;
}

/** Text as UTF-8; a byte sequence that is not UTF-8 becomes U+FFFD, never an error. */
const utf8 = new TextDecoder("utf-8");
const emptyOutput = { summary: "", impact: "", recommendations: "", confidence: "" };
