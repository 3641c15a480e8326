// Storm correlation, outside the ingest transaction (README.md, "Storms"):
//   at ingest (markStorms, in memory): each changed alert gets its storm scope, and its impact when
//     it is outside a storm; one that storms must look at again (new, changed, resolved, moved) is
//     queued (alert_storm_queue, written with the alert). The delivery takes no storm lock and
//     reads no other alert.
//   afterwards (correlateScopes, run by storm-correlator.ts): per tenant and scope, under an
//     advisory lock, read the queued alerts and the storms and loose alerts near them, plan
//     (correlate.ts), write storm, role, impact and history of the alerts that change in one
//     statement, and remove the queue entries read. An alert the plan leaves as it is is not written.
// Storm fields are written only here, so ingest and correlation never overwrite each other: ingest
// locks the alerts it changes (FOR UPDATE) and carries their storm fields through unchanged.
import { createHash } from "node:crypto";
import { type SQL, sql } from "drizzle-orm";
import { inTenant as inTenantOf } from "../../core/auth/tenancy.ts";
import { boundArray } from "../../core/db/bound-array.ts";
import { type Executor, executePlannedOnce, useGenericPlans } from "../../core/db/database.ts";
import { boundJsonArray } from "../../core/db/json-array.ts";
import { parseTimestamptz } from "../../core/db/timestamptz.ts";
import { type AlertRow, type AlertScope, HISTORY_LIMIT } from "../ingest/lifecycle.ts";
import {
  isStormEligible,
  planStorms,
  STORM_MAX_MEMBERS,
  STORM_WINDOW_MS,
  type StormAlert,
  type StormFields,
  type StormPlanInput,
  type StormSummary,
  stormScopeOf,
  stormsToLoad,
} from "./correlate.ts";
import { computeImpact, type ImpactOptions } from "./impact.ts";

export interface StormChange {
  /** The alert as stored before the delivery; null when the delivery creates it. */
  before: AlertRow | null;
  /** Its next state, about to be written; markStorms fills its scope and impact. */
  after: AlertRow;
}

/** Same labels, in any key order (jsonb gives them back in its own order). */
function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const entries = Object.entries(a);
  // Own keys only: a label `constructor` missing from b must not find Object.prototype's.
  return (
    entries.length === Object.keys(b).length &&
    entries.every(([key, value]) => Object.hasOwn(b, key) && b[key] === value)
  );
}

function sameData(before: AlertRow, after: AlertRow): boolean {
  return (
    before.title === after.title &&
    before.triggeredAt.getTime() === after.triggeredAt.getTime() &&
    sameLabels(before.labels, after.labels)
  );
}

/** An entry of the correlator's queue (alert_storm_queue), as written and as read back. */
export interface StormQueueEntry {
  alert_id: string;
  seq: number;
  org_id: string | null;
  owner_id: string;
  storm_scope: string;
  /** The alert's trigger time, ISO 8601. */
  triggered_at: string;
}

/**
 * At ingest, in memory. Returns the queue entries of the alerts storms must look at again. A
 * re-notification that changes nothing storms care about (same title, trigger time and labels,
 * still active) is not queued, so it costs the correlator nothing.
 */
export function markStorms(changes: StormChange[], impact: ImpactOptions = {}): StormQueueEntry[] {
  const queued: StormQueueEntry[] = [];
  for (const { before, after } of changes) {
    after.stormScope = stormScopeOf(after.labels, after.sourceType);
    const eligible = isStormEligible(after);
    const settled =
      before !== null &&
      sameData(before, after) &&
      (before.stormId
        ? eligible && before.stormScope === after.stormScope
        : isStormEligible(before) === eligible);
    if (!settled && (eligible || after.stormId !== null)) {
      queued.push({
        alert_id: after.id,
        seq: after.eventSeq,
        org_id: after.orgId,
        owner_id: after.ownerId,
        storm_scope: after.stormScope ?? "",
        triggered_at: after.triggeredAt.toISOString(),
      });
    }
    if (after.stormId === null) {
      const computed = computeImpact(
        { labels: after.labels, sourceType: after.sourceType, stormSize: 0 },
        impact,
      );
      after.impactScore = computed.score;
      after.impactExplanation = computed.explanation;
    }
  }
  return queued;
}

/**
 * Queues stored alerts for the correlator, as they stand in this transaction (after a change an
 * operator made: ignoring an alert takes it out of its storm).
 */
export async function queueForStorms(db: Executor, ids: string[]): Promise<void> {
  await db.execute(sql`
    insert into alert_storm_queue (alert_id, seq, org_id, owner_id, storm_scope, triggered_at)
    select id, event_seq, org_id, owner_id, coalesce(storm_scope, ''), triggered_at from alerts
    where id = any(${boundArray(ids, "uuid")})`);
}

// ---- the correlator's side ----

/** One unit of correlation: the pending alerts of one scope of one tenant (scope null: no scope). */
export interface ScopeKey {
  orgId: string | null;
  ownerId: string;
  scope: string | null;
}

/** A 64-bit advisory lock key for one scope of one tenant (an org's, whoever owns its alerts). */
function lockKey(key: ScopeKey): string {
  const tenant = key.orgId ? `org:${key.orgId}` : `user:${key.ownerId}`;
  const digest = createHash("sha256")
    .update(`storm|${tenant}|${key.scope ?? ""}`)
    .digest();
  return digest.readBigInt64BE(0).toString();
}

const inTenant = (tenant: Pick<AlertScope, "orgId" | "ownerId">) => inTenantOf({ alias: "a" }, tenant);

const COLUMNS = sql.raw(
  "a.id, a.title, a.labels, a.triggered_at, a.source_type, a.storm_scope, a.storm_id, a.alert_role, a.likely_upstream, a.impact_score, a.impact_explanation, a.display_priority",
);

/** Queue entries read per round; the rest wait for the next round. */
export const PENDING_BATCH = 500;

interface PendingAlert extends StormAlert {
  eligible: boolean;
  status: string;
}

/** A queue entry read, to remove once planned (the tenant is the round's). */
type SeenEntry = Pick<StormQueueEntry, "alert_id" | "seq" | "storm_scope">;

const inQueueTenant = (tenant: Pick<AlertScope, "orgId" | "ownerId">) => inTenantOf({ alias: "q" }, tenant);

function toDate(value: unknown): Date {
  return value instanceof Date ? value : parseTimestamptz(String(value));
}

function stormAlertOf(row: Record<string, unknown>): StormAlert {
  return {
    id: String(row.id),
    title: String(row.title),
    labels: (typeof row.labels === "string" ? JSON.parse(row.labels) : row.labels) as Record<string, string>,
    triggeredAt: toDate(row.triggered_at),
    sourceType: String(row.source_type),
    stormScope: String(row.storm_scope),
    stormId: row.storm_id === null ? null : String(row.storm_id),
    alertRole: String(row.alert_role),
    likelyUpstream: row.likely_upstream === null ? null : String(row.likely_upstream),
    impactScore: Number(row.impact_score),
    impactExplanation: row.impact_explanation === null ? null : String(row.impact_explanation),
    displayPriority: Number(row.display_priority),
  };
}

/**
 * The queued alerts of the given scopes of one tenant (null: alerts without a scope), as they are
 * now, and the queue entries read. An entry made under a scope its alert has left since is only
 * removed: the change that moved the alert queued it under its new scope.
 */
async function readPending(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  scopes: (string | null)[],
): Promise<{ pending: PendingAlert[]; entries: SeenEntry[] }> {
  const { rows } = await db.execute(pendingQuery(tenant, scopes));
  const pending = new Map<string, PendingAlert>();
  const entries: SeenEntry[] = [];
  for (const row of rows) {
    const scope = row.storm_scope === null ? "" : String(row.storm_scope);
    entries.push({
      alert_id: String(row.id),
      seq: Number(row.queued_seq),
      storm_scope: String(row.queued_scope),
    });
    if (scope !== row.queued_scope) continue;
    pending.set(String(row.id), {
      ...stormAlertOf(row),
      stormScope: scope,
      eligible: row.status === "active" && row.is_test !== true && row.storm_scope !== null,
      status: String(row.status),
    });
  }
  return { pending: [...pending.values()], entries };
}

/**
 * readPending's statement: the round's entries are picked in the queue, by the trigger time they were
 * queued with, and only their alerts read. Picked by the alerts' own trigger time, every queued alert
 * of the scopes was read to keep PENDING_BATCH of them (3,441 for 500, 18 ms a round under a flood).
 */
export function pendingQuery(tenant: Pick<AlertScope, "orgId" | "ownerId">, scopes: (string | null)[]): SQL {
  return sql`
    select ${COLUMNS}, a.status, a.is_test, q.seq as queued_seq, q.storm_scope as queued_scope
    from (select alert_id, seq, storm_scope, triggered_at from alert_storm_queue q
      where ${inQueueTenant(tenant)} and q.storm_scope = any(${boundArray(
        scopes.map((scope) => scope ?? ""),
        "text",
      )})
      order by q.triggered_at, q.alert_id limit ${PENDING_BATCH}) q
    join alerts a on a.id = q.alert_id
    order by a.triggered_at, a.id`;
}

/** Per scope, disjoint trigger-time ranges within a window of any of its pending alerts. */
function rangesAround(alerts: { stormScope: string; triggeredAt: Date }[]) {
  const ranges: { scope: string; lo: number; hi: number }[] = [];
  const sorted = [...alerts].sort(
    (a, b) => a.stormScope.localeCompare(b.stormScope) || a.triggeredAt.getTime() - b.triggeredAt.getTime(),
  );
  for (const { stormScope: scope, triggeredAt } of sorted) {
    const t = triggeredAt.getTime();
    const last = ranges.at(-1);
    if (last && last.scope === scope && t - STORM_WINDOW_MS <= last.hi) last.hi = t + STORM_WINDOW_MS;
    else ranges.push({ scope, lo: t - STORM_WINDOW_MS, hi: t + STORM_WINDOW_MS });
  }
  return ranges;
}

/** The alerts and storms a round's plan is given (planStorms). */
interface Neighbourhood {
  alerts: StormAlert[];
  summaries: StormSummary[];
}

const MEMBER_ROWS = (ids: SQL, tenant: Pick<AlertScope, "orgId" | "ownerId">) => sql`
  select ${COLUMNS}
  from (select * from alerts where storm_id = any(${ids}) offset 0) a
  where ${inTenant(tenant)} and a.status = 'active' and not a.is_test`;

/**
 * What a round's plan needs, in one statement: every member of the touched storms (whatever their
 * scope); the scope's storms near a range, each as its size and first and last trigger time (their
 * members are read only if one takes a joiner: readMembers); and the loose alerts of the scope near
 * a range (at most 2 x STORM_MAX_MEMBERS each). A full storm near a range keeps that range's loose
 * alerts out of storms, so they are not read.
 *
 * Storms, members and loose alerts are found through the storm indexes alone, then kept to the
 * tenant (`offset 0` keeps the tenant's condition out of the lookup): with the tenant beside them,
 * the planner chose the tenant's status index whenever its statistics lagged behind a burst of
 * ingest (a storm, exactly when this runs most) and read every active alert of the tenant for each
 * range (2 s a round at 25,000 active alerts, on the embedded database before its first ANALYZE).
 *
 * The storms near a range are found by walking the scope's storm index from one storm id to the
 * next (`walk`): one entry per storm instead of every member in the range, which a full storm made
 * fifty reads of its members before `sizes` read them all again. A storm's members share its
 * tenant, so one member says whose it is; the check keeps `sizes` from reading other tenants'
 * storms under the same scope name.
 */
async function readNeighbourhood(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  ranges: { scope: string; lo: number; hi: number }[],
  touched: string[],
): Promise<Neighbourhood> {
  // Planned once per connection: planning it took twice as long as running it (7.8 against 3.6 ms a
  // round in the all-roles bench, nearly all of the correlator's share of PostgreSQL's time). What
  // it reads is chosen by the ranges, whose JSON no plan sees, so the generic plan (the round's
  // transaction asks for it) is the plan each round would get.
  const { rows } = await executePlannedOnce(
    db,
    "alerts",
    `storms.neighbourhood.${tenant.orgId ? "org" : "personal"}`,
    neighbourhoodQuery(tenant, ranges, touched),
  );
  const alerts = jsonRows(rows[0]?.alerts).map(stormAlertOf);
  const summaries = jsonRows(rows[0]?.storms).map((row) => ({
    id: String(row.id),
    scope: String(row.scope),
    size: Number(row.size),
    first: toDate(row.first),
    last: toDate(row.last),
  }));
  return { alerts, summaries };
}

// A window around an alert stored before source times were bounded (year 9999) reached past the
// years ISO 8601 writes with four digits, which PostgreSQL refused, and every round of the
// correlator failed with it.
const EARLIEST_MS = Date.parse("0001-01-01T00:00:00.000Z");
const LATEST_MS = Date.parse("9999-12-31T23:59:59.999Z");
const storableTime = (ms: number) => new Date(Math.min(Math.max(ms, EARLIEST_MS), LATEST_MS)).toISOString();

/** readNeighbourhood's statement. */
export function neighbourhoodQuery(
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  ranges: { scope: string; lo: number; hi: number }[],
  touched: string[],
): SQL {
  const live = sql`a.status = 'active' and not a.is_test`;
  const rangeJson = JSON.stringify(
    ranges.map((range, n) => ({
      n,
      scope: range.scope,
      lo: storableTime(range.lo),
      hi: storableTime(range.hi),
    })),
  );
  const touchedIds = boundArray(touched, "uuid");
  return sql`
    with recursive ranges as (
      select * from json_to_recordset(${rangeJson}::json) as r(n int, scope text, lo timestamptz, hi timestamptz)
    ), walk as (
      select r.n, r.scope, r.lo, r.hi, (select storm_id from alerts
          where storm_scope = r.scope and storm_id is not null and triggered_at between r.lo and r.hi
            and status = 'active' and not is_test
          order by storm_id limit 1) as storm_id
        from ranges r
      union all
      select w.n, w.scope, w.lo, w.hi, (select storm_id from alerts
          where storm_scope = w.scope and storm_id > w.storm_id and triggered_at between w.lo and w.hi
            and status = 'active' and not is_test
          order by storm_id limit 1)
        from walk w where w.storm_id is not null
    ), near as (
      select w.n, w.storm_id from walk w
      where w.storm_id is not null and exists (select 1 from (select org_id, owner_id from alerts
        where storm_id = w.storm_id limit 1 offset 0) a where ${inTenant(tenant)})
    ), sizes as (
      select a.storm_id as id, min(a.storm_scope) as scope, count(*)::int as size,
        min(a.triggered_at) as first, max(a.triggered_at) as last
      from (select * from alerts where storm_id = any(array(select storm_id from near)) offset 0) a
      where ${inTenant(tenant)} and ${live}
      group by a.storm_id
    ), loose as (
      select loose.* from ranges r cross join lateral (
        select ${COLUMNS}
        from (select * from alerts
          where storm_scope = r.scope and storm_id is null and triggered_at between r.lo and r.hi
            and status = 'active' and not is_test offset 0) a
        where ${inTenant(tenant)} and ${live}
        order by a.triggered_at, a.id limit ${STORM_MAX_MEMBERS * 2}
      ) loose
      where not exists (
        select 1 from near join sizes on sizes.id = near.storm_id
        where near.n = r.n and sizes.size >= ${STORM_MAX_MEMBERS})
    ), found as (
      ${MEMBER_ROWS(touchedIds, tenant)}
      union all
      select * from loose
    )
    select (select coalesce(json_agg(found), '[]') from found) as alerts,
      (select coalesce(json_agg(sizes), '[]') from sizes where id <> all(${touchedIds})) as storms`;
}

/** The members of some storms, for a round whose plan adds joiners to them. */
async function readMembers(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  stormIds: string[],
): Promise<StormAlert[]> {
  const { rows } = await db.execute(MEMBER_ROWS(boundArray(stormIds, "uuid"), tenant));
  return rows.map(stormAlertOf);
}

function jsonRows(value: unknown): Record<string, unknown>[] {
  return (typeof value === "string" ? JSON.parse(value) : (value ?? [])) as Record<string, unknown>[];
}

/** What a plan writes for one alert whose storm fields or impact change. */
interface StormWrite {
  id: string;
  /** Its storm id as read: the update is guarded on it. */
  was: string | null;
  storm_id: string | null;
  alert_role: string;
  likely_upstream: string | null;
  impact_score: number;
  impact_explanation: string | null;
  /** History kind when membership or role changes. */
  event: "storm_joined" | "storm_left" | "storm_role_changed" | null;
  detail: Record<string, unknown> | null;
  /** Classify it again if it was classified: its role changed, and the classifier reads the role. */
  requeue: boolean;
}

function historyOf(
  before: Pick<StormAlert, "stormId" | "alertRole" | "likelyUpstream">,
  after: StormFields,
): Pick<StormWrite, "event" | "detail"> {
  const detail = {
    storm_id: after.stormId,
    alert_role: after.alertRole,
    likely_upstream: after.likelyUpstream,
    previous_storm_id: before.stormId,
    previous_alert_role: before.alertRole,
  };
  if (after.stormId !== before.stormId) {
    return { event: after.stormId ? "storm_joined" : "storm_left", detail };
  }
  if (
    after.stormId &&
    (after.alertRole !== before.alertRole || after.likelyUpstream !== before.likelyUpstream)
  ) {
    return { event: "storm_role_changed", detail };
  }
  return { event: null, detail: null };
}

/**
 * What planStorms is given for a round: the neighbourhood with the pending alerts as they are now
 * (a member that left or changed scope no longer in its storm), and what they were.
 */
function roundInput(
  pending: PendingAlert[],
  { alerts: neighbourhood, summaries }: Neighbourhood,
  impact: ImpactOptions,
) {
  const given = new Map(neighbourhood.map((alert) => [alert.id, alert]));
  const originals = new Map<string, Pick<StormAlert, "stormId" | "alertRole" | "likelyUpstream">>();
  for (const alert of [...neighbourhood, ...pending]) originals.set(alert.id, alert);
  const leavers: PendingAlert[] = [];
  const members = membersByScope(neighbourhood);
  for (const alert of pending) {
    if (!alert.eligible) {
      given.delete(alert.id);
      if (alert.stormId !== null) leavers.push(alert);
      continue;
    }
    // A member whose scope changed leaves its storm: the other members say what the storm's scope is.
    const movedOut = alert.stormId !== null && hasMemberElsewhere(members, alert);
    given.set(alert.id, { ...alert, stormId: movedOut ? null : alert.stormId });
  }
  const changed = {
    alerts: new Set(pending.map((alert) => alert.id)),
    storms: new Set(pending.flatMap((alert) => (alert.stormId ? [alert.stormId] : []))),
  };
  return {
    input: { alerts: [...given.values()], summaries, impact, changed } satisfies StormPlanInput,
    given,
    originals,
    leavers,
  };
}

/** The neighbourhood's storm members, by storm and scope: their ids. */
function membersByScope(neighbourhood: StormAlert[]): Map<string, Map<string, string[]>> {
  const members = new Map<string, Map<string, string[]>>();
  for (const { id, stormId, stormScope } of neighbourhood) {
    if (stormId === null) continue;
    let scopes = members.get(stormId);
    if (!scopes) {
      scopes = new Map();
      members.set(stormId, scopes);
    }
    const ids = scopes.get(stormScope);
    if (ids) ids.push(id);
    else scopes.set(stormScope, [id]);
  }
  return members;
}

/**
 * Whether another member of the alert's storm is under another scope than the alert now is. Looked
 * up by storm: comparing each pending alert with the whole neighbourhood cost a round 500 times the
 * members of its scope's storms.
 */
function hasMemberElsewhere(
  members: Map<string, Map<string, string[]>>,
  alert: Pick<StormAlert, "id" | "stormId" | "stormScope">,
): boolean {
  for (const [scope, ids] of members.get(alert.stormId ?? "") ?? []) {
    if (scope !== alert.stormScope && ids.some((id) => id !== alert.id)) return true;
  }
  return false;
}

/** The plan for one round: the writes, from the pending alerts and their neighbourhood. */
function planScope(
  pending: PendingAlert[],
  neighbourhood: Neighbourhood,
  impact: ImpactOptions,
  reclassify: boolean,
): StormWrite[] {
  const { input, given, originals, leavers } = roundInput(pending, neighbourhood, impact);
  const changes: StormFields[] = planStorms(input);
  // planStorms compares with the fields it was given: a mover's storm id was blanked in its input,
  // and a leaver that is no longer eligible was not given at all.
  const planned = new Map(changes.map((change) => [change.id, change]));
  const leave = (alert: StormAlert): StormFields => {
    const computed = computeImpact(
      { labels: alert.labels, sourceType: alert.sourceType, stormSize: 0 },
      impact,
    );
    return {
      id: alert.id,
      stormId: null,
      alertRole: "unknown",
      likelyUpstream: null,
      impactScore: computed.score,
      impactExplanation: computed.explanation,
    };
  };
  for (const alert of pending) {
    const movedOut = given.get(alert.id)?.stormId !== originals.get(alert.id)?.stormId;
    if (!planned.has(alert.id) && given.has(alert.id) && movedOut) planned.set(alert.id, leave(alert));
  }
  for (const alert of leavers) planned.set(alert.id, leave(alert));
  const writes: StormWrite[] = [];
  for (const [id, change] of planned) {
    const original = originals.get(id) ?? { stormId: null, alertRole: "unknown", likelyUpstream: null };
    writes.push({
      id,
      was: original.stormId,
      storm_id: change.stormId,
      alert_role: change.alertRole,
      likely_upstream: change.likelyUpstream,
      impact_score: change.impactScore,
      impact_explanation: change.impactExplanation,
      ...historyOf(original, change),
      // A new role is classified again, and so is a symptom that points at another cause: its
      // attention reason names the cause to look at first.
      requeue:
        reclassify &&
        (change.alertRole !== original.alertRole ||
          (change.alertRole === "symptom" && change.likelyUpstream !== original.likelyUpstream)),
    });
  }
  return writes;
}

/** A storm field changed under the plan (another scope's correlation): the round is redone. */
class StalePlan extends Error {}

/**
 * Writes the alerts a plan changes and removes the queue entries it read; entries queued since (a
 * delivery that changed an alert meanwhile) stay for the next round.
 */
async function writePlan(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  writes: StormWrite[],
  seen: SeenEntry[],
  now: Date,
): Promise<string[]> {
  await db.execute(sql`
    delete from alert_storm_queue q
    using json_to_recordset(${boundJsonArray(seen)}) as r(alert_id uuid, seq int, storm_scope text)
    where ${inQueueTenant(tenant)} and q.storm_scope = r.storm_scope and q.alert_id = r.alert_id and q.seq = r.seq`);
  if (writes.length === 0) return [];
  // Row locks in id order first, as ingest takes them: an update locks in join order, and two
  // transactions locking the same rows in different orders deadlock (a second lost each time).
  await db.execute(sql`
    select 1 from alerts where id = any(${boundArray(
      writes.map((write) => write.id),
      "uuid",
    )})
    order by id for update`);
  const { rows } = await db.execute(sql`
    with u as (
      select * from json_to_recordset(${boundJsonArray(writes)}) as u(id uuid, was uuid,
        storm_id uuid, alert_role text, likely_upstream text, impact_score int, impact_explanation text,
        event text, detail jsonb, requeue boolean)
    ), done as (
      update alerts a set
        storm_id = u.storm_id,
        alert_role = u.alert_role,
        likely_upstream = u.likely_upstream,
        impact_score = u.impact_score,
        impact_explanation = u.impact_explanation,
        event_seq = a.event_seq + (u.event is not null)::int,
        -- A classified active alert whose role changed is queued alone, as classify-again does.
        analysis_status = case when u.requeue and a.status = 'active' and a.analysis_status = 'completed'
          then 'queued' else a.analysis_status end,
        triage_bucket = case when u.requeue and a.status = 'active' and a.analysis_status = 'completed'
          then 'alert:' || a.id::text else a.triage_bucket end
      from u
      where a.id = u.id and a.storm_id is not distinct from u.was
      returning a.id, a.event_seq, a.status, u.event, u.detail,
        u.requeue and a.analysis_status = 'queued' and a.triage_bucket = 'alert:' || a.id::text as requeued
    ), history as (
      insert into alert_events (alert_id, seq, at, kind, actor, source_event, status_before, status_after, invocation_id, detail)
      select id, event_seq, ${now.toISOString()}::timestamptz, event, 'vigil', null, status, status, null, detail
      from done where event is not null
    ), trimmed as (
      delete from alert_events e using done
      where done.event is not null and done.event_seq > ${HISTORY_LIMIT}
        and e.alert_id = done.id and e.seq <= done.event_seq - ${HISTORY_LIMIT}
    )
    select id, requeued from done`);
  if (rows.length !== writes.length) throw new StalePlan();
  return rows.filter((row) => row.requeued === true).map((row) => String(row.id));
}

export interface CorrelateOptions {
  now: Date;
  impact?: ImpactOptions;
  /** Wait for a scope another correlator holds, instead of leaving it to that one. */
  wait?: boolean;
  /** With `wait`: wait at most this long, then leave the scopes to the correlator that holds them. */
  waitMs?: number;
  /**
   * Queues the classification of alerts whose storm role a round changed after they were
   * classified (a cause resolved, a storm dissolved): their attention and reason may rest on the
   * old role. In the round's transaction. Without it, classifications are left as they are.
   */
  reclassify?: (tx: Executor, tenant: Pick<AlertScope, "orgId" | "ownerId">, ids: string[]) => Promise<void>;
}

/** Scopes correlated in one transaction at most. */
export const SCOPES_PER_ROUND = 50;

/**
 * One round for some scopes of one tenant, in one transaction. Returns how many pending alerts it
 * looked at; scopes another correlator holds right now are skipped (unless `wait`).
 */
export async function correlateScopes(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  scopes: (string | null)[],
  options: CorrelateOptions,
): Promise<number> {
  // Locks in key order, so correlators waiting for several scopes never deadlock.
  const keys = scopes
    .slice(0, SCOPES_PER_ROUND)
    .map((scope) => ({ scope, key: lockKey({ ...tenant, scope }) }))
    .sort((a, b) => (BigInt(a.key) < BigInt(b.key) ? -1 : BigInt(a.key) > BigInt(b.key) ? 1 : 0));
  if (keys.length === 0) return 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        await useGenericPlans(tx);
        if (options.wait && options.waitMs !== undefined) {
          await tx.execute(sql.raw(`set local lock_timeout = ${Math.max(1, Math.round(options.waitMs))}`));
        }
        const lock = options.wait
          ? sql`pg_advisory_xact_lock(k)::text = ''`
          : sql`pg_try_advisory_xact_lock(k)`;
        const { rows } = await tx.execute(sql`
          select n, ${lock} as held
          from unnest(${boundArray(
            keys.map((key) => key.key),
            "bigint",
          )}) with ordinality as l(k, n)
          order by n`);
        const held = keys.filter((_, n) => rows.find((row) => Number(row.n) === n + 1)?.held === true);
        if (held.length === 0) return 0;
        const { pending, entries } = await readPending(
          tx,
          tenant,
          held.map((key) => key.scope),
        );
        if (entries.length === 0) return 0;
        const eligible = pending.filter((alert) => alert.eligible);
        const touched = [...new Set(pending.flatMap((alert) => (alert.stormId ? [alert.stormId] : [])))];
        let neighbourhood: Neighbourhood =
          eligible.length === 0 && touched.length === 0
            ? { alerts: [], summaries: [] }
            : await readNeighbourhood(tx, tenant, rangesAround(eligible), touched);
        const impact = options.impact ?? {};
        const joined = stormsToLoad(roundInput(pending, neighbourhood, impact).input);
        if (joined.length > 0) {
          neighbourhood = {
            alerts: [...neighbourhood.alerts, ...(await readMembers(tx, tenant, joined))],
            summaries: neighbourhood.summaries.filter((storm) => !joined.includes(storm.id)),
          };
        }
        const plan = planScope(pending, neighbourhood, impact, options.reclassify !== undefined);
        const requeued = await writePlan(tx, tenant, plan, entries, options.now);
        if (requeued.length > 0) await options.reclassify?.(tx, tenant, requeued);
        return entries.length;
      });
    } catch (err) {
      // lock_not_available: waitMs passed while another correlator held a scope, which it places.
      const code =
        (err as { code?: string; cause?: { code?: string } }).code ??
        (err as { cause?: { code?: string } }).cause?.code;
      if (options.waitMs !== undefined && code === "55P03") return 0;
      if (!(err instanceof StalePlan) || attempt >= 3) throw err;
    }
  }
}

/** The scopes with queued alerts (bounded per call). */
export async function pendingScopes(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId"> | null,
  limit = 100,
): Promise<ScopeKey[]> {
  const { rows } = await db.execute(sql`
    select distinct on (coalesce(q.org_id, q.owner_id), q.storm_scope) q.org_id, q.owner_id, q.storm_scope
    from alert_storm_queue q
    ${tenant ? sql`where ${inQueueTenant(tenant)}` : sql``}
    limit ${limit}`);
  return rows.map((row) => ({
    orgId: row.org_id === null ? null : String(row.org_id),
    ownerId: String(row.owner_id),
    scope: row.storm_scope === "" ? null : String(row.storm_scope),
  }));
}

/**
 * Correlates what is pending in one alert's storm scope now, so whoever reads the alert next sees
 * its storm as it stands (the correlator loop may not have reached a fresh storm yet). Waits at
 * most `waitMs` for a correlator holding the scope, then leaves it to that one.
 */
export async function correlateStormOf(
  db: Executor,
  tenant: Pick<AlertScope, "orgId" | "ownerId">,
  alertId: string,
  options: Pick<CorrelateOptions, "now" | "impact" | "reclassify"> & { waitMs: number },
): Promise<void> {
  const { rows } = await db.execute(sql`
    select a.storm_scope from alerts a where ${inTenant(tenant)} and a.id = ${alertId}`);
  const scope = rows[0]?.storm_scope;
  if (scope === undefined || scope === null) return;
  await correlateScopes(db, tenant, [String(scope)], { ...options, wait: true });
}
