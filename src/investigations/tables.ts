import { sql } from "drizzle-orm";
import { bigserial, boolean, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { ownedColumns } from "../core/db/owned.ts";
import type {
  InvestigationHypothesis,
  InvestigationPriorIncident,
  InvestigationRemediation,
  InvestigationStructuredRCA,
  InvestigationTriageMetadata,
} from "./schemas.ts";

/** One deep dive into one alert: a workflow run (guild_trace_id) and what it concluded. */
export const investigations = pgTable(
  "investigations",
  {
    ...ownedColumns(),
    alertId: uuid("alert_id").notNull(),
    /** queued, running, completed, failed or cancelled (schemas.ts). */
    status: text("status").notNull(),
    traceId: uuid("trace_id").notNull().unique(),
    sessionId: uuid("session_id"),
    workflowName: text("workflow_name").notNull(),
    parentInvestigationId: uuid("parent_investigation_id"),
    resultSummary: text("result_summary"),
    structuredRca: jsonb("structured_rca").$type<InvestigationStructuredRCA>(),
    hypotheses: jsonb("hypotheses").$type<InvestigationHypothesis[]>().notNull(),
    priorIncidents: jsonb("prior_incidents").$type<InvestigationPriorIncident[]>().notNull(),
    triageMetadata: jsonb("triage_metadata").$type<InvestigationTriageMetadata>(),
    remediationRequested: boolean("remediation_requested").notNull().default(false),
    operatorMessage: text("operator_message"),
    /** A proposed change and its approval; null when none was asked for (schemas.ts). */
    remediation: jsonb("remediation").$type<InvestigationRemediation>(),
    error: text("error"),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    // listInvestigations: a tenant's investigations newest first, optionally of one alert.
    index("investigations_org_started")
      .on(table.orgId, table.startedAt.desc(), table.id)
      .where(sql`${table.orgId} is not null`),
    index("investigations_personal_started")
      .on(table.ownerId, table.startedAt.desc(), table.id)
      .where(sql`${table.orgId} is null`),
    index("investigations_alert").on(table.alertId, table.startedAt),
  ],
);

/** Cited evidence, in capture order. `verified` and `captured_at` are set by Vigil, never the caller. */
export const investigationEvidence = pgTable(
  "investigation_evidence",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    investigationId: uuid("investigation_id")
      .notNull()
      .references(() => investigations.id, { onDelete: "cascade" }),
    kind: text("kind").notNull(),
    title: text("title").notNull(),
    url: text("url").notNull(),
    description: text("description"),
    source: text("source").notNull(),
    toolName: text("tool_name"),
    verified: boolean("verified").notNull(),
    capturedAt: timestamp("captured_at", { withTimezone: true }).notNull(),
  },
  (table) => [index("investigation_evidence_investigation").on(table.investigationId, table.seq)],
);
