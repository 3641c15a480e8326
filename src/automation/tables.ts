import { sql } from "drizzle-orm";
import {
  boolean,
  customType,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { ownedColumns, timestampColumns, uniquePerTenant } from "../core/db/owned.ts";
import type { AgentInput, PendingAsk, Stage, StructuredOutput, WorkflowInput } from "./schemas.ts";

export const agents = pgTable(
  "agents",
  {
    ...ownedColumns(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    kind: text("kind").notNull(),
    instructions: text("instructions").notNull(),
    model: text("model"),
    integrations: jsonb("integrations").$type<string[]>().notNull(),
    tools: jsonb("tools").$type<string[]>().notNull(),
    inputs: jsonb("inputs").$type<AgentInput[]>().notNull(),
    maxSteps: integer("max_steps").notNull(),
    ...timestampColumns(),
  },
  (table) => [
    ...uniquePerTenant(table, { org: "agents_org_name", personal: "agents_personal_name" }, table.name),
  ],
);

export const workflows = pgTable(
  "workflows",
  {
    ...ownedColumns(),
    name: text("name").notNull(),
    routingStatus: text("routing_status").notNull(),
    ...timestampColumns(),
  },
  (table) => [
    ...uniquePerTenant(table, { org: "workflows_org_name", personal: "workflows_personal_name" }, table.name),
  ],
);

/** Versions are immutable once approved; at most one draft per workflow. */
export const workflowVersions = pgTable(
  "workflow_versions",
  {
    id: uuid("id").primaryKey(),
    workflowId: uuid("workflow_id")
      .notNull()
      .references(() => workflows.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    status: text("status").notNull(),
    description: text("description").notNull(),
    inputs: jsonb("inputs").$type<WorkflowInput[]>().notNull(),
    stages: jsonb("stages").$type<Stage[]>().notNull(),
    routingExamples: jsonb("routing_examples").$type<string[]>().notNull(),
    ...timestampColumns(),
    approvedAt: timestamp("approved_at", { withTimezone: true }),
    approvedBy: uuid("approved_by"),
  },
  (table) => [
    uniqueIndex("workflow_versions_number").on(table.workflowId, table.version),
    uniqueIndex("workflow_versions_one_draft").on(table.workflowId).where(sql`${table.status} = 'draft'`),
  ],
);

/** Raw bytes: an artifact is served exactly as it was written. */
const bytea = customType<{ data: Buffer; driverData: Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (value) => Buffer.from(value),
});

/** A conversation or an unattended run: the container of executions and their artifacts. */
export const sessions = pgTable(
  "sessions",
  {
    ...ownedColumns(),
    title: text("title").notNull(),
    /** Who started it: `user:<id>`, `webhook:<id>`, ... */
    initiator: text("initiator").notNull(),
    sourceApp: text("source_app"),
    sourceMetadata: jsonb("source_metadata").$type<Record<string, string>>().notNull(),
    /** The first user message (Ask), or the title for sessions a webhook started. */
    firstPrompt: text("first_prompt").notNull().default(""),
    /** The first prompt normalized (lower case, single spaces): prior-session reuse matches on it. */
    promptKey: text("prompt_key"),
    /** Who answers: the target of the latest run (agent or workflow), or the installed app. */
    responderType: text("responder_type"),
    responderName: text("responder_name"),
    /** An Ask waiting for inputs: the chosen target and what was collected so far. */
    pending: jsonb("pending").$type<PendingAsk>(),
    /** Lower-cased text `q` searches: title, prompt, initiator, responders, id, source metadata. */
    searchText: text("search_text").notNull().default(""),
    ...timestampColumns(),
  },
  (table) => [
    index("sessions_tenant").on(table.orgId, table.ownerId, table.createdAt),
    // The list's order, per namespace: `org_id is null` does not let PostgreSQL read an index on
    // (org_id, owner_id, updated_at) in updated_at order, so the personal namespace has its own.
    index("sessions_activity_personal")
      .on(table.ownerId, table.updatedAt, table.id)
      .where(sql`${table.orgId} is null`),
    index("sessions_activity_org")
      .on(table.orgId, table.updatedAt, table.id)
      .where(sql`${table.orgId} is not null`),
    // By the prompt's hash: a B-tree entry holds at most 2,704 bytes, and a first prompt may be a
    // pasted log of 10,000 characters (ask.ts compares the text itself too).
    index("sessions_prompt_key").on(table.ownerId, sql`md5(${table.promptKey})`),
    // pg_trgm is created by the 0000_extensions migration, before the tables.
    index("sessions_search").using("gin", sql`${table.searchText} gin_trgm_ops`),
  ],
);

/** The conversation of a session: what the caller asked and what Ask answered. */
export const sessionMessages = pgTable(
  "session_messages",
  {
    id: uuid("id").primaryKey(),
    sessionId: uuid("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    /** user or assistant. */
    role: text("role").notNull(),
    content: text("content").notNull(),
    /** The run this message started, if any. */
    traceId: uuid("trace_id"),
    /** What Ask decided (routed, fallback, ambiguous, no_match, inputs_required), with its details. */
    data: jsonb("data").$type<Record<string, unknown>>(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (table) => [index("session_messages_session").on(table.sessionId, table.createdAt)],
);

/**
 * One run of an agent or a workflow. `stages` is the pinned plan (the approved version's stages, or
 * one synthetic stage for an agent target), so a later version or edit never changes a run.
 */
export const executions = pgTable(
  "executions",
  {
    traceId: uuid("trace_id").primaryKey(),
    runId: uuid("run_id").notNull().unique(),
    sessionId: uuid("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    orgId: uuid("org_id"),
    ownerId: uuid("owner_id").notNull(),
    targetType: text("target_type").notNull(),
    targetName: text("target_name").notNull(),
    workflowVersion: integer("workflow_version"),
    /** The responder: the agent's name, or the workflow's for a workflow run. */
    agentName: text("agent_name").notNull(),
    stages: jsonb("stages").$type<Stage[]>().notNull(),
    /** running, completed or error. */
    status: text("status").notNull(),
    /**
     * Started by Vigil itself (an automatic investigation, a triage run): its stages wait behind
     * those of runs a person or a sender waits for (API, Ask, webhooks, an investigation asked for).
     */
    background: boolean("background").notNull().default(false),
    cancelled: boolean("cancelled").notNull().default(false),
    cancelReason: text("cancel_reason"),
    input: jsonb("input").$type<unknown>(),
    structuredOutput: jsonb("structured_output").$type<StructuredOutput>(),
    error: text("error"),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    /** True once every node is final and every cost recorded: set with the final status. */
    settled: boolean("settled").notNull().default(false),
    promptTokens: integer("prompt_tokens").notNull().default(0),
    completionTokens: integer("completion_tokens").notNull().default(0),
    totalCost: doublePrecision("total_cost").notNull().default(0),
  },
  (table) => [
    index("executions_tenant").on(table.orgId, table.ownerId, table.startedAt),
    index("executions_session").on(table.sessionId),
    index("executions_running").on(table.status).where(sql`${table.status} = 'running'`),
  ],
);

/**
 * A step of a run: a stage (depth 0), an agent or an action in it (1), a tool call of an agent (2).
 * `key` is readable and unique per run (`stage:collect/agent:probe/tool:1:http_request`); it is the
 * node id the trace shows.
 */
export const executionNodes = pgTable(
  "execution_nodes",
  {
    id: uuid("id").primaryKey(),
    traceId: uuid("trace_id")
      .notNull()
      .references(() => executions.traceId, { onDelete: "cascade" }),
    key: text("key").notNull(),
    parentKey: text("parent_key"),
    stageId: text("stage_id").notNull(),
    depth: integer("depth").notNull(),
    /** Order in the trace: by depth, then the stage's index in the plan, then position in the stage. */
    stagePosition: integer("stage_position").notNull(),
    position: integer("position").notNull(),
    /** stage, agent, action or tool. */
    type: text("type").notNull(),
    label: text("label").notNull(),
    /** pending, running, success, error or skipped. */
    status: text("status").notNull(),
    attempt: integer("attempt").notNull().default(0),
    /** The pg-boss job that runs a stage, set when it is sent; the sweeper follows it. */
    jobId: uuid("job_id"),
    enqueuedAt: timestamp("enqueued_at", { withTimezone: true }),
    startedAt: timestamp("started_at", { withTimezone: true }),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    output: jsonb("output").$type<unknown>(),
    error: text("error"),
    model: text("model"),
    promptTokens: integer("prompt_tokens").notNull().default(0),
    completionTokens: integer("completion_tokens").notNull().default(0),
    cost: doublePrecision("cost").notNull().default(0),
  },
  (table) => [uniqueIndex("execution_nodes_key").on(table.traceId, table.key)],
);

export const sessionArtifacts = pgTable(
  "session_artifacts",
  {
    id: uuid("id").primaryKey(),
    sessionId: uuid("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    /** The run that wrote it. */
    traceId: uuid("trace_id"),
    name: text("name").notNull(),
    mimeType: text("mime_type").notNull(),
    sizeBytes: integer("size_bytes").notNull(),
    content: bytea("content").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
  },
  (table) => [index("session_artifacts_session").on(table.sessionId, table.createdAt)],
);
