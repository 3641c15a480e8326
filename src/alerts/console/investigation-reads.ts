// What an investigation reads of alerts (the investigations domain sits above alerts and reaches
// them only here, through index.ts): one alert with its episodes, its storm, the alerts around it
// and the tenant's earlier alerts; and the one write it makes, the alert's `investigation` summary.
// Every read is limited to the tenant.
import { and, desc, eq, gte, lt, ne, sql } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import { firstLabelOf, type LabelKind } from "../correlation/label-vocabulary.ts";
import { sourceEpisodesOf } from "../ingest/lifecycle.ts";
import type { InvestigationRef } from "../schemas.ts";
import { alerts } from "../tables.ts";

export interface InvestigatedAlert {
  id: string;
  externalUid: string;
  sourceType: string;
  integrationName: string;
  webhookId: string | null;
  title: string;
  description: string;
  sourceSeverity: string;
  severity: string;
  status: string;
  ignoredBy: string | null;
  ignoreReason: string | null;
  triggeredAt: Date;
  createdAt: Date;
  resolvedAt: Date | null;
  refireCount: number;
  lastResolvedAt: Date | null;
  labels: Record<string, string>;
  links: { kind: string; url: string }[];
  isTest: boolean;
  alertRole: string;
  stormId: string | null;
  likelyUpstream: string | null;
  impactScore: number;
  investigation: InvestigationRef | null;
  /**
   * The label values that place it: service, host, cluster, and the namespace and region (zone)
   * between them (label-vocabulary.ts), when it has them.
   */
  scope: Partial<Record<"service" | "host" | "cluster" | "namespace" | "region", string>>;
}

const columns = {
  id: alerts.id,
  externalUid: alerts.externalUid,
  sourceType: alerts.sourceType,
  integrationName: alerts.integrationName,
  webhookId: alerts.webhookId,
  title: alerts.title,
  description: alerts.description,
  sourceSeverity: alerts.sourceSeverity,
  severity: alerts.severity,
  status: alerts.status,
  ignoredBy: alerts.ignoredBy,
  ignoreReason: alerts.ignoreReason,
  triggeredAt: alerts.triggeredAt,
  createdAt: alerts.createdAt,
  resolvedAt: alerts.resolvedAt,
  refireCount: alerts.refireCount,
  lastResolvedAt: alerts.lastResolvedAt,
  labels: alerts.labels,
  links: alerts.links,
  isTest: alerts.isTest,
  alertRole: alerts.alertRole,
  stormId: alerts.stormId,
  likelyUpstream: alerts.likelyUpstream,
  impactScore: alerts.impactScore,
  investigation: alerts.investigation,
};

type Row = Omit<InvestigatedAlert, "scope">;

const SCOPE_KINDS: [keyof InvestigatedAlert["scope"], LabelKind][] = [
  ["service", "service"],
  ["host", "host"],
  ["cluster", "cluster"],
  ["namespace", "namespace"],
  ["region", "region"],
];

function withScope(row: Row): InvestigatedAlert {
  const scope: InvestigatedAlert["scope"] = {};
  for (const [name, kind] of SCOPE_KINDS) {
    const label = firstLabelOf(row.labels, row.sourceType, [kind]);
    if (label) scope[name] = label.value;
  }
  return { ...row, scope };
}

/** The tenant's alert `alertId`, or null (not there, or another tenant's). */
export async function readInvestigatedAlert(
  db: Executor,
  tenant: Tenant,
  alertId: string,
): Promise<InvestigatedAlert | null> {
  const [row] = await db
    .select(columns)
    .from(alerts)
    .where(and(inTenant(alerts, tenant), eq(alerts.id, alertId)));
  return row ? withScope(row) : null;
}

export type InvestigatedEpisode = ReturnType<typeof sourceEpisodesOf>[number];

/**
 * The alert's episodes by the source's own times, oldest first (as triage reads them): the history's
 * times are when Vigil received each event, and a resolve Vigil inferred and then undid (a pull sync
 * that missed the alert once) is no episode's end.
 */
export async function readInvestigatedEpisodes(
  db: Executor,
  tenant: Tenant,
  alertId: string,
): Promise<InvestigatedEpisode[]> {
  const [row] = await db
    .select({
      timeline: alerts.timeline,
      triggeredAt: alerts.triggeredAt,
      status: alerts.status,
      resolvedAt: alerts.resolvedAt,
    })
    .from(alerts)
    .where(and(inTenant(alerts, tenant), eq(alerts.id, alertId)));
  return row ? sourceEpisodesOf(row) : [];
}

/** The other alerts of a storm, most impactful first. */
export async function readStormMembers(
  db: Executor,
  tenant: Tenant,
  input: { stormId: string; exceptId: string; limit: number },
): Promise<InvestigatedAlert[]> {
  const rows = await db
    .select(columns)
    .from(alerts)
    .where(and(inTenant(alerts, tenant), eq(alerts.stormId, input.stormId), ne(alerts.id, input.exceptId)))
    .orderBy(desc(alerts.impactScore), desc(alerts.triggeredAt))
    .limit(input.limit);
  return rows.map(withScope);
}

/** The tenant's other alerts triggered in [from, to), newest first: neighbours and earlier incidents. */
export async function readAlertsTriggeredBetween(
  db: Executor,
  tenant: Tenant,
  input: { from: Date; to: Date; exceptId: string; limit: number },
): Promise<InvestigatedAlert[]> {
  const rows = await db
    .select(columns)
    .from(alerts)
    .where(
      and(
        inTenant(alerts, tenant),
        gte(alerts.triggeredAt, input.from),
        lt(alerts.triggeredAt, input.to),
        ne(alerts.id, input.exceptId),
      ),
    )
    .orderBy(desc(alerts.triggeredAt))
    .limit(input.limit);
  return rows.map(withScope);
}

/**
 * Sets the alert's `investigation` summary. A summary of an older investigation never replaces a
 * newer one's (a forked investigation and its parent may both still be moving).
 */
export async function setAlertInvestigation(
  db: Executor,
  input: { alertId: string; ref: InvestigationRef },
): Promise<void> {
  const { ref } = input;
  await db
    .update(alerts)
    .set({ investigation: ref })
    .where(
      and(
        eq(alerts.id, input.alertId),
        sql`(${alerts.investigation} is null
          or ${alerts.investigation}->>'id' = ${ref.id}
          or (${alerts.investigation}->>'started_at') <= ${ref.started_at})`,
      ),
    );
}
