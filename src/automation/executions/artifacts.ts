// Session artifacts: files a run wrote (write_report), listed and downloaded by the session's owner.
import { and, asc, desc, eq, sql } from "drizzle-orm";
import { inTenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { notFound } from "../../core/errors.ts";
import type { ArtifactInfo } from "../schemas.ts";
import { sessionArtifacts, sessions } from "../tables.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Session ids are uuids; anything else is simply not found (never a database error). */
export const isUuid = (value: string) => UUID.test(value);

async function ownedSession(ctx: CallerCtx, sessionId: string): Promise<string> {
  if (!UUID.test(sessionId)) throw notFound("session", { session_id: sessionId });
  const [row] = await ctx.db
    .select({ id: sessions.id })
    .from(sessions)
    .where(and(inTenant(sessions, tenantOf(ctx.actor)), eq(sessions.id, sessionId)));
  if (!row) throw notFound("session", { session_id: sessionId });
  return row.id;
}

export async function listSessionArtifacts({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { sessionId: string };
}): Promise<ArtifactInfo[]> {
  const sessionId = await ownedSession(ctx, input.sessionId);
  const rows = await ctx.db
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

/** By artifact id, or by file name (case-insensitive; the newest of that name). */
export async function downloadSessionArtifact({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { sessionId: string; artifactId: string };
}): Promise<{ name: string; mimeType: string; content: Buffer }> {
  const sessionId = await ownedSession(ctx, input.sessionId);
  const match = UUID.test(input.artifactId)
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
