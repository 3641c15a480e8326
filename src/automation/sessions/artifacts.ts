// Session artifacts: files a run wrote (write_report), listed and downloaded by the session's owner.
// Bytes are stored as written (bytea) and served unchanged, up to ARTIFACT_MAX_BYTES each.
import { randomUUID } from "node:crypto";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import type { Executor } from "../../core/db/database.ts";
import { AppError, notFound } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import type { ArtifactInfo } from "../schemas.ts";
import { sessionArtifacts } from "../tables.ts";
import { ownedSession } from "./session-rows.ts";

/** The largest artifact a run may write: 10 MiB. */
export const ARTIFACT_MAX_BYTES = 10 * 1024 * 1024;

/** A file a step wrote, stored with the step's completion. */
export interface ArtifactDraft {
  name: string;
  mimeType: string;
  content: Buffer;
}

/** Stores one artifact of a run in its session; larger than ARTIFACT_MAX_BYTES is refused. */
export async function storeArtifact(
  db: Executor,
  target: { sessionId: string; traceId: string | null },
  artifact: ArtifactDraft,
  now: Date,
): Promise<string> {
  if (artifact.content.byteLength > ARTIFACT_MAX_BYTES) {
    throw new AppError(
      "PAYLOAD_TOO_LARGE",
      `artifact ${artifact.name}: ${artifact.content.byteLength} bytes, more than ${ARTIFACT_MAX_BYTES}`,
      { name: artifact.name, size_bytes: artifact.content.byteLength, limit_bytes: ARTIFACT_MAX_BYTES },
    );
  }
  const id = randomUUID();
  await db.insert(sessionArtifacts).values({
    id,
    sessionId: target.sessionId,
    traceId: target.traceId,
    name: artifact.name,
    mimeType: artifact.mimeType,
    sizeBytes: artifact.content.byteLength,
    content: artifact.content,
    createdAt: now,
  });
  return id;
}

/** The session's artifacts, oldest first, without their bytes. */
export async function artifactsOf(db: Executor, sessionId: string): Promise<ArtifactInfo[]> {
  const rows = await db
    .select({
      id: sessionArtifacts.id,
      name: sessionArtifacts.name,
      mimeType: sessionArtifacts.mimeType,
      sizeBytes: sessionArtifacts.sizeBytes,
      createdAt: sessionArtifacts.createdAt,
    })
    .from(sessionArtifacts)
    .where(eq(sessionArtifacts.sessionId, sessionId))
    .orderBy(asc(sessionArtifacts.createdAt), asc(sessionArtifacts.name));
  return rows.map((row) => ({
    id: row.id,
    session_id: sessionId,
    name: row.name,
    mime_type: row.mimeType,
    size_bytes: row.sizeBytes,
    created_at: row.createdAt.toISOString(),
  }));
}

export async function listSessionArtifacts({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { sessionId: string };
}): Promise<ArtifactInfo[]> {
  const session = await ownedSession(ctx.db, tenantOf(ctx.actor), input.sessionId);
  return artifactsOf(ctx.db, session.id);
}

/** By artifact id, or by file name (case-insensitive; the newest of that name). */
export async function downloadSessionArtifact({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { sessionId: string; artifactId: string };
}): Promise<{ name: string; mimeType: string; content: Buffer }> {
  const { id: sessionId } = await ownedSession(ctx.db, tenantOf(ctx.actor), input.sessionId);
  const match = isUuid(input.artifactId)
    ? sql`(${sessionArtifacts.id} = ${input.artifactId} or lower(${sessionArtifacts.name}) = lower(${input.artifactId}))`
    : sql`lower(${sessionArtifacts.name}) = lower(${input.artifactId})`;
  const [row] = await ctx.db
    .select()
    .from(sessionArtifacts)
    .where(and(eq(sessionArtifacts.sessionId, sessionId), match))
    .orderBy(desc(sessionArtifacts.createdAt))
    .limit(1);
  if (!row) throw notFound("artifact", { session_id: sessionId, artifact_id: input.artifactId });
  return { name: row.name, mimeType: row.mimeType, content: row.content };
}

/** `attachment` with the file name; a name beyond printable ASCII also in RFC 5987 form. */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  if (ascii === name) return `attachment; filename="${name}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}
