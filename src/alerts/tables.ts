import { type SQL, sql } from "drizzle-orm";
import {
  type AnyPgColumn,
  bigserial,
  boolean,
  check,
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
import { timestamptz } from "../core/db/timestamptz.ts";
import type { Timeline } from "./ingest/lifecycle.ts";
import { ANALYSIS_STATUSES, ATTENTIONS, type InvestigationRef } from "./schemas.ts";
import { DISPLAY_PRIORITY } from "./sources/normalize/severity.ts";
import type { AlertLink, SeverityBucket } from "./sources/types.ts";

/** `'a', 'b'`: a closed list as SQL literals, for a check constraint (which takes no parameters). */
function valuesOf(values: readonly string[]) {
  return sql.raw(values.map((value) => `'${value}'`).join(", "));
}

/** An alert-ingest registration of the SRE app; its id is the id of the platform webhook it owns. */
export const alertWebhooks = pgTable(
  "alert_webhooks",
  {
    ...ownedColumns(),
    appName: text("app_name").notNull(),
    source: text("source").notNull(),
    integration: text("integration").notNull(),
    autoInvestigate: boolean("auto_investigate").notNull(),
    classifyMode: text("classify_mode").notNull(),
    classifyBatchWindowSeconds: integer("classify_batch_window_seconds").notNull(),
    classifyBucketBy: text("classify_bucket_by").notNull(),
    classifyCriticalBypass: boolean("classify_critical_bypass").notNull(),
    severityOverrides: jsonb("severity_overrides").$type<Record<string, SeverityBucket>>().notNull(),
    snsAutoConfirm: boolean("sns_auto_confirm").notNull(),
    ...timestampColumns(),
  },
  (table) => [
    ...uniquePerTenant(
      table,
      { org: "alert_webhooks_org_key", personal: "alert_webhooks_personal_key" },
      table.appName,
      table.source,
      table.integration,
    ),
  ],
);

export const alerts = pgTable(
  "alerts",
  {
    ...ownedColumns(),
    webhookId: uuid("webhook_id"),
    sourceType: text("source_type").notNull(),
    integrationName: text("integration_name").notNull(),
    externalUid: text("external_uid").notNull(),
    title: text("title").notNull(),
    description: text("description").notNull(),
    sourceSeverity: text("source_severity").notNull(),
    severity: text("severity").$type<SeverityBucket>().notNull(),
    displayPriority: integer("display_priority").notNull(),
    severityMapping: text("severity_mapping").notNull(),
    impactScore: integer("impact_score").notNull().default(0),
    impactExplanation: text("impact_explanation"),
    status: text("status").notNull(),
    /** Who ignored it: `source` (muted, silenced, in downtime) or `operator`. */
    ignoredBy: text("ignored_by"),
    ignoreReason: text("ignore_reason"),
    analysisStatus: text("analysis_status").notNull().default("none"),
    /** The classification bucket an alert waits in while queued (triage.ts). */
    triageBucket: text("triage_bucket"),
    attention: text("attention").notNull().default("needs_review"),
    attentionReason: text("attention_reason"),
    /**
     * An analyst set `attention` in this episode (since the alert was created, re-fired or sent to
     * be classified again): a classification then keeps it. Kept on the row, not read from the
     * history, whose trim may drop the analyst's event in a long episode.
     */
    attentionByOperator: boolean("attention_by_operator").notNull().default(false),
    /**
     * The alert is resolved because a pull sync no longer listed it, not because its source said so:
     * a later listing of the same episode (an Alertmanager restarted empty, then refilled) undoes it.
     */
    resolveInferred: boolean("resolve_inferred").notNull().default(false),
    shortSummary: text("short_summary"),
    initialInvestigation: text("initial_investigation"),
    // A source's times, years 1 to 9999: drizzle's timestamp misreads years before 100 (timestamptz.ts).
    triggeredAt: timestamptz("triggered_at").notNull(),
    ...timestampColumns(),
    resolvedAt: timestamptz("resolved_at"),
    refireCount: integer("refire_count").notNull().default(0),
    lastResolvedAt: timestamptz("last_resolved_at"),
    /** Source time of the last status change applied: older status events are stale. */
    lastStatusChangeAt: timestamptz("last_status_change_at").notNull(),
    labels: jsonb("labels").$type<Record<string, string>>().notNull(),
    links: jsonb("links").$type<AlertLink[]>().notNull(),
    isTest: boolean("is_test").notNull().default(false),
    alertRole: text("alert_role").notNull().default("unknown"),
    stormId: uuid("storm_id"),
    /** What the alert's labels scope it to for storms (correlate.ts), such as `cluster:prod-eu-1`. */
    stormScope: text("storm_scope"),
    likelyUpstream: text("likely_upstream"),
    ingestedVia: text("ingested_via"),
    /**
     * The body of the delivery that last changed the alert, stored once however many alerts it
     * holds: the id of its webhook invocation record (a push) or of its alert_payloads row (a pull,
     * and pushes stored before the invocation record held the body). See console/raw-payload.ts.
     */
    rawPayloadId: uuid("raw_payload_id"),
    /** Hash of the last event applied: the same delivery twice changes nothing. */
    lastEventHash: text("last_event_hash"),
    /** Number of history events written; bounds the history. */
    eventSeq: integer("event_seq").notNull().default(0),
    /** The firing and resolve times the alert's events carried (lifecycle.ts); null on alerts stored before. */
    timeline: jsonb("timeline").$type<Timeline>(),
    /** The newest investigation's summary (InvestigationRef), written by the investigations domain. */
    investigation: jsonb("investigation").$type<InvestigationRef>(),
  },
  (table) => [
    // The identity of an alert, unique per tenant (an org, or an owner's personal namespace: org and
    // user ids are distinct uuids, so coalesce names the tenant). external_uid leads because ingest
    // looks alerts up by a list of uids (ingest.ts, loadAlerts): only this index can serve that
    // lookup, so its plan does not depend on statistics. With the tenant column leading, a table not
    // yet analyzed made the planner scan a tenant's whole count index instead (7 ms per lookup at
    // 5,000 alerts, growing with the table). Also serves getAlertV1 by external_uid.
    uniqueIndex("alerts_key").on(
      table.externalUid,
      tenantKey(table),
      table.sourceType,
      table.integrationName,
    ),
    // The console (list-alerts.ts): one tenant's alerts of one status in each sort order, so a page
    // is read in index order and its total counted from the index alone; org and personal
    // namespaces apart, as in uniquePerTenant, so the tenant column is an equality.
    index("alerts_org_by_severity")
      .on(table.orgId, table.status, table.displayPriority, table.triggeredAt.desc().nullsFirst(), table.id)
      .where(sql`${table.orgId} is not null`),
    index("alerts_personal_by_severity")
      .on(table.ownerId, table.status, table.displayPriority, table.triggeredAt.desc().nullsFirst(), table.id)
      .where(sql`${table.orgId} is null`),
    index("alerts_org_by_impact")
      .on(
        table.orgId,
        table.status,
        table.impactScore.desc().nullsFirst(),
        table.displayPriority,
        table.triggeredAt.desc().nullsFirst(),
        table.id,
      )
      .where(sql`${table.orgId} is not null`),
    index("alerts_personal_by_impact")
      .on(
        table.ownerId,
        table.status,
        table.impactScore.desc().nullsFirst(),
        table.displayPriority,
        table.triggeredAt.desc().nullsFirst(),
        table.id,
      )
      .where(sql`${table.orgId} is null`),
    // Counts (list-alerts.ts): the `total` of a list and the summaries, read from an index alone.
    // Only low-cardinality columns, so each run of equal keys is a posting list in heap order and a
    // count reads the visibility map in order (the sort indexes, in trigger-time order, jump across
    // it at every row). An index-only scan decodes every column of every row it counts, so the
    // largest counts (the lists by status alone, the summaries) have a narrow index, and the other
    // filters a wider one.
    // attention before integration_name: every list request counts the active alerts of each
    // attention value (the summary), and each count then reads only its own entries (4 counts of
    // 202k active alerts: 35 ms with attention after integration_name, 15 ms now).
    index("alerts_org_status_by_attention")
      .on(table.orgId, table.status, table.attention, table.integrationName, table.analysisStatus)
      .where(sql`${table.orgId} is not null`),
    index("alerts_personal_status_by_attention")
      .on(table.ownerId, table.status, table.attention, table.integrationName, table.analysisStatus)
      .where(sql`${table.orgId} is null`),
    index("alerts_org_filter_count")
      .on(
        table.orgId,
        table.status,
        table.displayPriority,
        table.alertRole,
        table.sourceType,
        table.attention,
        table.integrationName,
      )
      .where(sql`${table.orgId} is not null`),
    index("alerts_personal_filter_count")
      .on(
        table.ownerId,
        table.status,
        table.displayPriority,
        table.alertRole,
        table.sourceType,
        table.attention,
        table.integrationName,
      )
      .where(sql`${table.orgId} is null`),
    // The summaries count each value of these closed lists and add the counts up.
    check("alerts_attention_known", sql`${table.attention} in (${valuesOf(ATTENTIONS)})`),
    check("alerts_analysis_status_known", sql`${table.analysisStatus} in (${valuesOf(ANALYSIS_STATUSES)})`),
    // The list filters signal_severity on display_priority, a column of the sort and count indexes.
    check(
      "alerts_display_priority_of_severity",
      sql`(${table.severity}, ${table.displayPriority}) in (${sql.raw(
        Object.entries(DISPLAY_PRIORITY)
          .map(([bucket, priority]) => `('${bucket}', ${priority})`)
          .join(", "),
      )})`,
    ),
    index("alerts_triage_bucket")
      .on(table.triageBucket)
      .where(sql`${table.analysisStatus} in ('queued', 'running')`),
    // Storm correlation (storms.ts): the storms and loose alerts of a scope near a trigger time,
    // and the members of a storm.
    index("alerts_storm_scope")
      .on(table.stormScope, table.stormId, table.triggeredAt)
      .where(sql`${table.status} = 'active' and not ${table.isTest} and ${table.stormScope} is not null`),
    index("alerts_storm").on(table.stormId).where(sql`${table.stormId} is not null`),
  ],
);

export const SEARCH_SEPARATOR = "\u001f";

/** The tenant of an owned row: its org, or its owner's personal namespace (alerts_key). */
export function tenantKey(table: { orgId: AnyPgColumn; ownerId: AnyPgColumn }): SQL {
  return sql`coalesce(${table.orgId}, ${table.ownerId})`;
}

/**
 * The storm correlator's queue (correlation/storms.ts): alerts storms must look at again, because
 * they are new, changed or left, with their tenant and storm scope at that moment. A narrow table
 * and not a flag on the alert: clearing a flag rewrote the whole alert row and every one of its
 * index entries, the search index's included, though most looks change nothing.
 */
export const alertStormQueue = pgTable(
  "alert_storm_queue",
  {
    alertId: uuid("alert_id").notNull(),
    /** The alert's event_seq when queued: with alert_id, the entry the correlator removes once seen. */
    seq: integer("seq").notNull(),
    orgId: uuid("org_id"),
    ownerId: uuid("owner_id").notNull(),
    /** The alert's storm scope when queued; '' for none. */
    stormScope: text("storm_scope").notNull(),
    /**
     * The alert's trigger time when queued: the correlator takes a backlog in trigger order, and
     * picks a round's entries by it before reading their alerts (a round read every queued alert
     * of its scopes to keep the first 500: 3,441 alert rows for 500, 18 ms a round under a flood).
     */
    triggeredAt: timestamptz("triggered_at").notNull(),
  },
  // The correlator reads and removes entries by tenant and scope, and removes them by alert too.
  (table) => [
    index("alert_storm_queue_scope").on(
      table.orgId,
      table.ownerId,
      table.stormScope,
      table.alertId,
      table.seq,
    ),
  ],
);

/**
 * What `q` searches (console/list-alerts.ts): case-insensitive substring search (ILIKE '%...%') over
 * title and description, in one trigram index over both, split by status: the console
 * searches active alerts, a fifth of the table, and a common word's candidates there are read in a
 * fifth of the time. A table of its own, kept by triggers on `alerts` (migration 0015) and written
 * only when an alert arrives, is deleted, or changes its title, description or whether it is active:
 * as an index of `alerts`, every other change of an alert (its classification, its storm) wrote
 * the alert's trigrams again, which cost more than the rest of the change (500 classifications:
 * 60 to 190 ms against 40) and, once the index's list of pending entries filled, merged it into the
 * index inside whichever write came next (seconds). pg_trgm is created by migration 0000.
 */
export const alertSearch = pgTable(
  "alert_search",
  {
    alertId: uuid("alert_id").primaryKey(),
    active: boolean("active").notNull(),
    /** The alert's title, U+001F (SEARCH_SEPARATOR), its description: a q without U+001F cannot match across them. */
    text: text("text").notNull(),
  },
  (table) => [
    index("alert_search_active").using("gin", sql`${table.text} gin_trgm_ops`).where(sql`${table.active}`),
    index("alert_search_inactive")
      .using("gin", sql`${table.text} gin_trgm_ops`)
      .where(sql`not ${table.active}`),
  ],
);

/** Pulled answers' bodies (`raw_payload`): one row per answer that changed alerts, shared by its alerts. */
export const alertPayloads = pgTable("alert_payloads", {
  id: uuid("id").primaryKey(),
  body: text("body").notNull(),
  receivedAt: timestamp("received_at", { withTimezone: true }).notNull(),
});

/** The bounded history of every change to an alert. */
export const alertEvents = pgTable(
  "alert_events",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    // No foreign key to alerts: its check costs a lookup and a row lock for every history row, on
    // the hottest write path (about a sixth of PostgreSQL's CPU for a new alert), and alerts are
    // never deleted; a history row is only ever written beside its alert, in one transaction.
    alertId: uuid("alert_id").notNull(),
    seq: integer("seq").notNull(),
    at: timestamptz("at").notNull(),
    kind: text("kind").notNull(),
    actor: text("actor").notNull(),
    sourceEvent: text("source_event"),
    statusBefore: text("status_before"),
    statusAfter: text("status_after").notNull(),
    invocationId: uuid("invocation_id"),
    detail: jsonb("detail").$type<Record<string, unknown>>().notNull(),
  },
  (table) => [index("alert_events_alert_seq").on(table.alertId, table.seq)],
);

/** One pull sync of an Alertmanager integration: manual (API) or scheduled (job). */
export const alertSyncRuns = pgTable(
  "alert_sync_runs",
  {
    ...ownedColumns(),
    integrationName: text("integration_name").notNull(),
    trigger: text("trigger").$type<"manual" | "scheduled">().notNull(),
    status: text("status").$type<"running" | "completed" | "failed">().notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
    fetched: integer("fetched").notNull().default(0),
    created: integer("created").notNull().default(0),
    updated: integer("updated").notNull().default(0),
    resolved: integer("resolved").notNull().default(0),
    unchanged: integer("unchanged").notNull().default(0),
    error: text("error"),
  },
  (table) => [
    index("alert_sync_runs_integration").on(
      table.orgId,
      table.ownerId,
      table.integrationName,
      table.startedAt,
    ),
  ],
);

/**
 * The alerts a pull sync has seen in its integration's answer. Only these are resolved when they
 * disappear from it: an alert only ever pushed (another Alertmanager, a replayed webhook) is not the
 * sync's to resolve.
 */
export const alertSyncSeen = pgTable("alert_sync_seen", {
  alertId: uuid("alert_id")
    .primaryKey()
    .references(() => alerts.id, { onDelete: "cascade" }),
  lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull(),
  lastRunId: uuid("last_run_id").notNull(),
});
