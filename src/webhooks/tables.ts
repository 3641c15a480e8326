import { sql } from "drizzle-orm";
import {
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uuid,
} from "drizzle-orm/pg-core";

/** Raw bytes: a body is kept exactly as received, even when it is not text (NUL bytes, bad UTF-8). */
const bytea = customType<{ data: Buffer; driverData: Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (value) => Buffer.from(value),
});

/** A platform webhook: a token that starts something (alert ingest, an agent, a workflow). */
export const webhooks = pgTable("webhooks", {
  id: uuid("id").primaryKey(),
  orgId: uuid("org_id"),
  ownerId: uuid("owner_id").notNull(),
  name: text("name").notNull(),
  targetType: text("target_type").notNull(),
  targetName: text("target_name").notNull(),
  description: text("description").notNull().default(""),
  enabled: boolean("enabled").notNull().default(true),
  /** Looked up by hash; the sealed copy exists only so the trigger URL can be shown again. */
  tokenHash: text("token_hash").notNull().unique(),
  tokenSealed: text("token_sealed").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  /** Deleted webhooks keep their row so that their token answers 404, not 401. */
  deletedAt: timestamp("deleted_at", { withTimezone: true }),
});

/** Every trigger of a webhook, with the body exactly as received: nothing accepted is lost. */
export const webhookInvocations = pgTable(
  "webhook_invocations",
  {
    id: uuid("id").primaryKey(),
    webhookId: uuid("webhook_id").notNull(),
    orgId: uuid("org_id"),
    ownerId: uuid("owner_id").notNull(),
    receivedAt: timestamp("received_at", { withTimezone: true }).notNull(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    /** accepted, failed (the target refused the payload) or error (Vigil failed). */
    status: text("status").notNull(),
    contentType: text("content_type"),
    headers: jsonb("headers").$type<Record<string, string>>().notNull(),
    payload: bytea("payload").notNull(),
    payloadBytes: integer("payload_bytes").notNull(),
    error: text("error"),
    note: text("note"),
    outcome: jsonb("outcome").$type<Record<string, unknown>>(),
    sessionId: text("session_id"),
    traceId: text("trace_id"),
    runId: text("run_id"),
    /**
     * The target the trigger went to, for webhooks that can be pointed elsewhere (agents and
     * workflows): the record keeps what ran. Null where the target cannot change (alert ingest).
     */
    targetType: text("target_type"),
    targetName: text("target_name"),
  },
  (table) => [
    index("webhook_invocations_webhook_received").on(table.webhookId, table.receivedAt),
    // Only deliveries that started a run (agents, workflows) have a run id: alert deliveries, nearly
    // all of them, then write no entry here.
    index("webhook_invocations_run").on(table.runId).where(sql`${table.runId} is not null`),
  ],
);
