import { sql } from "drizzle-orm";
import { integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import type { AgentInput, Stage, WorkflowInput } from "./schemas.ts";

export const agents = pgTable(
  "agents",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id"),
    ownerId: uuid("owner_id").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    kind: text("kind").notNull(),
    instructions: text("instructions").notNull(),
    model: text("model"),
    integrations: jsonb("integrations").$type<string[]>().notNull(),
    tools: jsonb("tools").$type<string[]>().notNull(),
    inputs: jsonb("inputs").$type<AgentInput[]>().notNull(),
    maxSteps: integer("max_steps").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    uniqueIndex("agents_org_name").on(table.orgId, table.name).where(sql`${table.orgId} is not null`),
    uniqueIndex("agents_personal_name").on(table.ownerId, table.name).where(sql`${table.orgId} is null`),
  ],
);

export const workflows = pgTable(
  "workflows",
  {
    id: uuid("id").primaryKey(),
    orgId: uuid("org_id"),
    ownerId: uuid("owner_id").notNull(),
    name: text("name").notNull(),
    routingStatus: text("routing_status").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    uniqueIndex("workflows_org_name").on(table.orgId, table.name).where(sql`${table.orgId} is not null`),
    uniqueIndex("workflows_personal_name").on(table.ownerId, table.name).where(sql`${table.orgId} is null`),
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
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
    approvedAt: timestamp("approved_at", { withTimezone: true }),
    approvedBy: uuid("approved_by"),
  },
  (table) => [
    uniqueIndex("workflow_versions_number").on(table.workflowId, table.version),
    uniqueIndex("workflow_versions_one_draft").on(table.workflowId).where(sql`${table.status} = 'draft'`),
  ],
);
