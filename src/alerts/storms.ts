// Storm correlation and impact at ingest, in the delivery's transaction (README.md, "Storms"):
//   1. before the write (prepareStorms): each changed alert gets its storm scope; one that is no
//      longer eligible or changed scope leaves its storm; an alert outside a storm gets its impact.
//      The write statement itself takes the scopes' advisory locks, so two deliveries never
//      correlate one scope at once: it waits for the scopes where a storm loses a member (so a
//      storm below two members always dissolves), and only tries the others: a scope another
//      delivery holds is left to the next correlation of that scope, instead of queueing every
//      delivery of a busy cluster behind each other.
//   2. after the write (correlateStorms): one read of the scopes' storms and loose alerts, the
//      plan (correlate.ts), one update of the alerts whose storm, role or impact changed.
// A delivery that changes nothing storms care about (a re-notification) costs no statement.
import { createHash } from "node:crypto";
import { type SQL, sql } from "drizzle-orm";
import type { Tx } from "../core/db/database.ts";
import {
  isStormEligible,
  planStorms,
  STORM_MAX_MEMBERS,
  STORM_WINDOW_MS,
  type StormAlert,
  stormScopeOf,
} from "./correlate.ts";
import { computeImpact } from "./impact.ts";
import type { AlertRow, AlertScope } from "./lifecycle.ts";

export interface StormChange {
  /** The alert as stored before the delivery; null when the delivery creates it. */
  before: AlertRow | null;
  /** Its next state, about to be written; prepareStorms fills its storm and impact fields. */
  after: AlertRow;
}

export interface StormLock {
  /** A 64-bit advisory lock key, as decimal text. */
  key: string;
  /** Wait for it (a storm of the scope loses a member) or only try (joiners, changed members). */
  wait: boolean;
}

export interface StormWork {
  /** Scope -> the trigger-time range its joiners search, or null (only a touched storm). */
  ranges: Map<string, { lo: number; hi: number } | null>;
  /** Storms that lost a member or whose member changed -> their scope. */
  touchedStorms: Map<string, string>;
  /** Scopes whose storm loses a member: their lock is waited for. */
  leaving: Set<string>;
  /** Scope -> lock key. */
  keys: Map<string, string>;
  /** The locks the write statement takes: the waited ones first, each group in key order. */
  locks: StormLock[];
  /** The delivery's own eligible alerts, as just written. */
  own: Map<string, StormAlert>;
}

function sameData(before: AlertRow, after: AlertRow): boolean {
  return (
    before.title === after.title &&
    before.triggeredAt.getTime() === after.triggeredAt.getTime() &&
    JSON.stringify(before.labels) === JSON.stringify(after.labels)
  );
}

/** A 64-bit advisory lock key for one scope of one tenant. */
function lockKey(tenant: Pick<AlertScope, "orgId" | "ownerId">, scope: string): string {
  const digest = createHash("sha256")
    .update(`${tenant.orgId ?? ""}|${tenant.ownerId}|${scope}`)
    .digest();
  return digest.readBigInt64BE(0).toString();
}

const byKey = (a: StormLock, b: StormLock) => {
  const left = BigInt(a.key);
  const right = BigInt(b.key);
  return left < right ? -1 : left > right ? 1 : 0;
};

/**
 * Step 1, in memory: storm scope, leaving, and the impact of alerts outside a storm. Returns the
 * work for correlateStorms, or null when no storm can change.
 */
export function prepareStorms(
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  changes: StormChange[],
): StormWork | null {
  const work: StormWork = {
    ranges: new Map(),
    touchedStorms: new Map(),
    leaving: new Set(),
    keys: new Map(),
    locks: [],
    own: new Map(),
  };
  const touch = (stormId: string, scope: string) => {
    work.touchedStorms.set(stormId, scope);
    if (!work.ranges.has(scope)) work.ranges.set(scope, null);
  };
  for (const { before, after } of changes) {
    after.stormScope = stormScopeOf(after.labels, after.sourceType);
    const eligible = isStormEligible(after);
    if (before?.stormId && before.stormScope) {
      const stays = eligible && after.stormScope === before.stormScope;
      if (!stays) {
        touch(before.stormId, before.stormScope);
        work.leaving.add(before.stormScope);
        after.stormId = null;
        after.alertRole = "unknown";
        after.likelyUpstream = null;
      } else if (!sameData(before, after)) {
        touch(before.stormId, before.stormScope);
      }
    }
    if (after.stormId === null) {
      const impact = computeImpact({ labels: after.labels, sourceType: after.sourceType, stormSize: 0 });
      after.impactScore = impact.score;
      after.impactExplanation = impact.explanation;
    }
    if (eligible && after.stormScope !== null) {
      work.own.set(after.id, {
        id: after.id,
        title: after.title,
        labels: after.labels,
        triggeredAt: after.triggeredAt,
        sourceType: after.sourceType,
        stormScope: after.stormScope,
        stormId: after.stormId,
        alertRole: after.alertRole,
        likelyUpstream: after.likelyUpstream,
        impactScore: after.impactScore,
        impactExplanation: after.impactExplanation,
      });
    }
    const wasLoose =
      before !== null && before.stormId === null && isStormEligible(before) && sameData(before, after);
    if (eligible && after.stormId === null && !wasLoose && after.stormScope !== null) {
      const t = after.triggeredAt.getTime();
      const range = work.ranges.get(after.stormScope);
      work.ranges.set(after.stormScope, {
        lo: Math.min(range ? range.lo + STORM_WINDOW_MS : t, t) - STORM_WINDOW_MS,
        hi: Math.max(range ? range.hi - STORM_WINDOW_MS : t, t) + STORM_WINDOW_MS,
      });
    }
  }
  if (work.ranges.size === 0) return null;
  for (const scope of work.ranges.keys()) work.keys.set(scope, lockKey(tenant, scope));
  const locks = [...work.keys].map(([scope, key]) => ({ key, wait: work.leaving.has(scope) }));
  work.locks = [
    ...locks.filter((lock) => lock.wait).sort(byKey),
    ...locks.filter((lock) => !lock.wait).sort(byKey),
  ];
  return work;
}

function toDate(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

const COLUMNS = sql.raw(
  "a.id, a.title, a.labels, a.triggered_at, a.source_type, a.storm_scope, a.storm_id, a.alert_role, a.likely_upstream, a.impact_score, a.impact_explanation",
);

/**
 * The read of step 2, as one json value: members of every storm near a joiner or touched, and the
 * loose alerts near the joiners, for the scopes whose lock key `heldKeys` (a query of text keys)
 * returns. A scope that holds a full storm near its joiners needs no loose alerts: they stay out.
 */
export function stormReadQuery(
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  work: StormWork,
  heldKeys: SQL,
): SQL {
  const inTenant = tenant.orgId
    ? sql`a.org_id = ${tenant.orgId}`
    : sql`a.org_id is null and a.owner_id = ${tenant.ownerId}`;
  const live = sql`a.status = 'active' and not a.is_test`;
  const ranges = JSON.stringify(
    [...work.ranges].flatMap(([scope, range]) =>
      range
        ? [
            {
              scope,
              key: work.keys.get(scope),
              lo: new Date(range.lo).toISOString(),
              hi: new Date(range.hi).toISOString(),
            },
          ]
        : [],
    ),
  );
  const touched = JSON.stringify(
    [...work.touchedStorms].map(([stormId, scope]) => ({ storm_id: stormId, key: work.keys.get(scope) })),
  );
  return sql`
    with ranges as (
      select * from jsonb_to_recordset(${ranges}::jsonb) as r(scope text, key text, lo timestamptz, hi timestamptz)
      where r.key in (${heldKeys})
    ), near as (
      select stormed.storm_id from ranges r cross join lateral (
        select distinct a.storm_id from alerts a
        where a.storm_scope = r.scope and ${inTenant} and ${live} and a.storm_id is not null
          and a.triggered_at between r.lo and r.hi
      ) stormed
      union
      select t.storm_id from jsonb_to_recordset(${touched}::jsonb) as t(storm_id uuid, key text)
      where t.key in (${heldKeys})
    ), sizes as (
      select a.storm_id, min(a.storm_scope) as storm_scope, count(*) as n from alerts a
      where ${inTenant} and ${live} and a.storm_id = any(array(select storm_id from near))
      group by a.storm_id
    ), members as (
      -- A full storm only matters when it is touched: near a joiner, it just keeps the joiner out.
      select ${COLUMNS} from alerts a
      where ${inTenant} and ${live} and a.storm_id = any(array(
        select storm_id from sizes where n < ${STORM_MAX_MEMBERS}
        union select storm_id from jsonb_to_recordset(${touched}::jsonb) as t(storm_id uuid, key text)))
    ), full_scopes as (
      select storm_scope from sizes where n >= ${STORM_MAX_MEMBERS}
    ), found as (
      select * from members
      union all
      select loose.* from ranges r cross join lateral (
        select ${COLUMNS} from alerts a
        where ${inTenant} and ${live} and a.storm_scope = r.scope and a.storm_id is null
          and a.triggered_at between r.lo and r.hi
        order by a.triggered_at, a.id limit ${STORM_MAX_MEMBERS * 2}
      ) loose
      where r.scope not in (select storm_scope from full_scopes)
    )
    select coalesce(json_agg(found), '[]') from found`;
}

function parseStormAlerts(value: unknown): StormAlert[] {
  const rows = (typeof value === "string" ? JSON.parse(value) : value) as Record<string, unknown>[];
  return rows.map((row) => ({
    id: String(row.id),
    title: String(row.title),
    labels: row.labels as Record<string, string>,
    triggeredAt: toDate(row.triggered_at),
    sourceType: String(row.source_type),
    stormScope: String(row.storm_scope),
    stormId: row.storm_id === null ? null : String(row.storm_id),
    alertRole: String(row.alert_role),
    likelyUpstream: row.likely_upstream === null ? null : String(row.likely_upstream),
    impactScore: Number(row.impact_score),
    impactExplanation: row.impact_explanation === null ? null : String(row.impact_explanation),
  }));
}

/** Whether the storm read returns this alert (when it is stored as given). */
function readBy(work: StormWork, alert: StormAlert): boolean {
  const range = work.ranges.get(alert.stormScope);
  const t = alert.triggeredAt.getTime();
  return (
    (range !== null && range !== undefined && t >= range.lo && t <= range.hi) ||
    (alert.stormId !== null && work.touchedStorms.has(alert.stormId))
  );
}

/** What the write statement reports back: the lock keys it holds and the storm read. */
export interface StormSnapshot {
  lockedKeys: ReadonlySet<string>;
  /** The read in the write statement's snapshot (json), or null when it did not run. */
  alerts: unknown;
}

/**
 * Step 2, after the write. Scopes whose lock the write did not get are skipped: another delivery
 * is correlating them, our alerts stay loose, and the next correlation of the scope places them.
 * The write statement already read the held scopes, in a snapshot taken before its locks: the
 * update is guarded on each alert's storm_id, and when a guard fails (a delivery committed in that
 * instant), or the write had to wait for a lock, the scopes are read again and the plan redone.
 */
export async function correlateStorms(
  tx: Tx,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  work: StormWork,
  snapshot: StormSnapshot,
): Promise<void> {
  const locked = (scope: string) => snapshot.lockedKeys.has(work.keys.get(scope) ?? "");
  if (![...work.ranges.keys()].some(locked)) return;
  const waited = work.locks.some((lock) => lock.wait);
  const heldKeys = sql`select unnest(${`{${[...snapshot.lockedKeys].join(",")}}`}::text[])`;
  const read = async () => {
    const { rows } = await tx.execute(stormReadQuery(tenant, work, heldKeys));
    return Object.values(rows[0] ?? {})[0];
  };
  let alerts = parseStormAlerts(waited || snapshot.alerts === null ? await read() : snapshot.alerts);
  for (let attempt = 0; ; attempt++) {
    // The snapshot does not see this delivery's own writes: its alerts come from memory.
    alerts = [
      ...alerts.filter((alert) => !work.own.has(alert.id)),
      ...[...work.own.values()].filter((alert) => locked(alert.stormScope) && readBy(work, alert)),
    ];
    const changes = planStorms({ alerts });
    if (changes.length === 0) return;
    const was = new Map(alerts.map((alert) => [alert.id, alert.stormId]));
    const records = changes.map((change) => ({
      id: change.id,
      was: was.get(change.id) ?? null,
      storm_id: change.stormId,
      alert_role: change.alertRole,
      likely_upstream: change.likelyUpstream,
      impact_score: change.impactScore,
      impact_explanation: change.impactExplanation,
    }));
    const { rows } = await tx.execute(sql`
      with done as (
        update alerts a set storm_id = u.storm_id, alert_role = u.alert_role, likely_upstream = u.likely_upstream,
          impact_score = u.impact_score, impact_explanation = u.impact_explanation
        from jsonb_to_recordset(${JSON.stringify(records)}::jsonb) as u(id uuid, was uuid, storm_id uuid,
          alert_role text, likely_upstream text, impact_score int, impact_explanation text)
        where a.id = u.id and a.storm_id is not distinct from u.was
        returning 1
      )
      select count(*)::int as n from done`);
    if (Number(rows[0]?.n) === records.length || attempt > 0) return;
    alerts = parseStormAlerts(await read());
  }
}
