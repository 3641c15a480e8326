// Writing sessions: creating one, recording its messages, and keeping its search text current.
// Every run, webhook or Ask, lives in a session; these helpers are the only writers of its row.
import { randomUUID } from "node:crypto";
import { and, asc, eq, sql } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import { notFound } from "../../core/errors.ts";
import { isUuid } from "../../core/ids.ts";
import { sessionMessages, sessions } from "../tables.ts";

const TITLE_MAX_CHARS = 200;

/** Lower case, words separated by single spaces, surrounding punctuation dropped: `Restart  X!` -> `restart x`. */
export function normalizePrompt(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[\s]+/g, " ")
    .replace(/^[\s\p{P}]+|[\s\p{P}]+$/gu, "")
    .trim();
}

export interface NewSession {
  title?: string;
  firstPrompt?: string;
  initiator: string;
  sourceApp?: string | null;
  sourceMetadata?: Record<string, string>;
}

export async function createSession(db: Executor, tenant: Tenant, input: NewSession, now: Date) {
  const id = randomUUID();
  const prompt = input.firstPrompt ?? "";
  const title = (input.title ?? prompt).slice(0, TITLE_MAX_CHARS) || "session";
  await db.insert(sessions).values({
    id,
    orgId: tenant.orgId,
    ownerId: tenant.ownerId,
    title,
    initiator: input.initiator,
    sourceApp: input.sourceApp ?? null,
    sourceMetadata: input.sourceMetadata ?? {},
    firstPrompt: prompt || title,
    promptKey: prompt ? normalizePrompt(prompt) : null,
    createdAt: now,
    updatedAt: now,
  });
  await refreshSearchText(db, id);
  return id;
}

/** The tenant's session, its activity time moved to `now`; 404 when it is not the tenant's. */
export async function touchSession(db: Executor, tenant: Tenant, sessionId: string, now: Date) {
  if (!isUuid(sessionId)) throw notFound("session", { session_id: sessionId });
  const [row] = await db
    .update(sessions)
    .set({ updatedAt: now })
    .where(and(inTenant(sessions, tenant), eq(sessions.id, sessionId)))
    .returning();
  if (!row) throw notFound("session", { session_id: sessionId });
  return row;
}

/** The session's id when it belongs to the tenant; 404 otherwise. */
export async function ownedSession(db: Executor, tenant: Tenant, sessionId: string) {
  if (!isUuid(sessionId)) throw notFound("session", { session_id: sessionId });
  const [row] = await db
    .select()
    .from(sessions)
    .where(and(inTenant(sessions, tenant), eq(sessions.id, sessionId)));
  if (!row) throw notFound("session", { session_id: sessionId });
  return row;
}

/** Oldest first; within one Ask (one timestamp) the user's message before the answer. */
export const messageOrder = [
  asc(sessionMessages.createdAt),
  asc(sql`${sessionMessages.role} = 'assistant'`),
  asc(sessionMessages.id),
];

export async function addMessage(
  db: Executor,
  message: {
    sessionId: string;
    role: "user" | "assistant";
    content: string;
    traceId?: string | null;
    data?: Record<string, unknown> | null;
  },
  now: Date,
): Promise<void> {
  await db.insert(sessionMessages).values({
    id: randomUUID(),
    sessionId: message.sessionId,
    role: message.role,
    content: message.content,
    traceId: message.traceId ?? null,
    data: message.data ?? null,
    createdAt: now,
  });
}

/** Sets the responder to a run's target and recomputes the search text; called when a run starts. */
export async function recordResponder(
  db: Executor,
  sessionId: string,
  responder: { type: string; name: string },
): Promise<void> {
  await db
    .update(sessions)
    .set({ responderType: responder.type, responderName: responder.name })
    .where(eq(sessions.id, sessionId));
  await refreshSearchText(db, sessionId);
}

/**
 * What `q` matches, lower-cased: id, title, first prompt, initiator, source app, source metadata
 * (keys and values), the responder and every agent or workflow that ran in the session.
 */
export async function refreshSearchText(db: Executor, sessionId: string): Promise<void> {
  await db.execute(sql`
    update sessions s set search_text = lower(concat_ws(' ', s.id::text, s.title, s.first_prompt,
      s.initiator, s.source_app, s.responder_name,
      (select string_agg(m.key || ' ' || m.value, ' ') from jsonb_each_text(s.source_metadata) m),
      (select string_agg(distinct e.agent_name, ' ') from executions e where e.session_id = s.id)))
    where s.id = ${sessionId}`);
}
