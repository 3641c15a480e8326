// How one normalized event changes a stored alert (alert-sources.md 1.10, and the spec's alert
// state table). A pure function: it returns the alert's next state and the history entry, and the
// ingest writes them. Keeping it pure makes every transition testable on its own.
import { uuidv7 } from "../../core/ids.ts";
import type { AlertEvent, AlertLink } from "../sources/types.ts";
import type { alerts } from "../tables.ts";

export type AlertRow = typeof alerts.$inferSelect;

/** Events kept per alert; older ones are trimmed. */
export const HISTORY_LIMIT = 200;
export type IngestOutcome =
  | "created"
  | "updated"
  | "resolved"
  | "refired"
  | "ignored"
  | "unchanged"
  | "duplicate"
  | "stale";

export interface AlertScope {
  orgId: string | null;
  ownerId: string;
  sourceType: string;
  integrationName: string;
  webhookId: string | null;
}

export interface EventContext {
  scope: AlertScope;
  receivedAt: Date;
  via: "push" | "pull";
  /** Where this delivery's body is kept (raw-payload.ts), or null (keep the stored one). */
  rawPayloadId: string | null;
  /** Identity of the event's content: the same delivery twice has the same hash. */
  eventHash: string;
}

export interface HistoryEntry {
  kind: IngestOutcome;
  sourceEvent: string;
  statusBefore: string | null;
  statusAfter: string;
  detail: Record<string, unknown>;
}

export interface AlertPlan {
  outcome: IngestOutcome;
  /** The alert's next state; null when nothing is written (a duplicate). */
  next: AlertRow | null;
  history: HistoryEntry | null;
}

function toDate(value: string | null): Date | null {
  return value ? new Date(value) : null;
}

/**
 * Links of one kind an alert keeps. Some sources put a per-notification URL in every delivery (a
 * Splunk run's `results_link`, a Datadog event's `url`, a Zabbix `eventid`): merged without a bound,
 * a search that runs every minute would give its alert 1,440 links a day.
 */
export const LINKS_PER_KIND = 5;

const sameLink = (a: AlertLink, b: AlertLink) => a.kind === b.kind && a.url === b.url;

/**
 * The stored links with the event's new ones added once, in arrival order. A kind over
 * LINKS_PER_KIND loses its oldest links, never one the event carries; a link the event carries
 * again keeps its place, so a repeat changes nothing.
 */
function mergeLinks(stored: AlertLink[], incoming: AlertLink[]): AlertLink[] {
  const merged = [...stored];
  for (const link of incoming) if (!merged.some((item) => sameLink(item, link))) merged.push(link);
  if (merged.length === stored.length) return merged;
  const excess = new Map<string, number>();
  for (const link of merged) excess.set(link.kind, (excess.get(link.kind) ?? -LINKS_PER_KIND) + 1);
  return merged.filter((link) => {
    const over = excess.get(link.kind) ?? 0;
    if (over <= 0 || incoming.some((item) => sameLink(item, link))) return true;
    excess.set(link.kind, over - 1);
    return false;
  });
}

function plan(
  outcome: IngestOutcome,
  before: AlertRow | null,
  next: AlertRow,
  event: AlertEvent,
  detail = {},
) {
  return {
    outcome,
    next,
    history: {
      kind: outcome,
      sourceEvent: event.source_event,
      statusBefore: before?.status ?? null,
      statusAfter: next.status,
      detail: { ...detail, ...(event.unmapped.length > 0 && { unmapped: event.unmapped }) },
    },
  };
}

function createAlert(event: AlertEvent, context: EventContext): AlertPlan {
  const { scope, receivedAt } = context;
  const status = event.status === "unchanged" ? "active" : event.status;
  const resolvedAt = status === "resolved" ? (toDate(event.resolved_at) ?? receivedAt) : null;
  // First seen resolved: it fired no later than it resolved (a CloudWatch OK, a Zabbix recovery
  // without the problem's time), so the receive time would put its trigger after its resolve.
  const sourceTriggeredAt = toDate(event.triggered_at) ?? receivedAt;
  const triggeredAt = resolvedAt && resolvedAt < sourceTriggeredAt ? resolvedAt : sourceTriggeredAt;
  const timeline: Timeline = { points: [], trimmed: false };
  placeEvent(timeline, null, event, context);
  const next: AlertRow = {
    id: uuidv7(),
    orgId: scope.orgId,
    ownerId: scope.ownerId,
    webhookId: scope.webhookId,
    sourceType: scope.sourceType,
    integrationName: scope.integrationName,
    externalUid: event.external_uid,
    title: event.title,
    description: event.description,
    sourceSeverity: event.source_severity,
    severity: event.severity,
    displayPriority: event.display_priority,
    severityMapping: event.severity_mapping,
    impactScore: 0,
    impactExplanation: null,
    status,
    ignoredBy: status === "ignored" ? "source" : null,
    ignoreReason: status === "ignored" ? event.ignore_reason : null,
    analysisStatus: "none",
    triageBucket: null,
    attention: "needs_review",
    attentionReason: null,
    attentionByOperator: false,
    resolveInferred: false,
    shortSummary: null,
    initialInvestigation: null,
    triggeredAt,
    createdAt: receivedAt,
    updatedAt: receivedAt,
    resolvedAt,
    refireCount: 0,
    lastResolvedAt: null,
    lastStatusChangeAt: resolvedAt ?? triggeredAt,
    labels: event.labels,
    links: event.links,
    isTest: event.is_test,
    alertRole: "unknown",
    stormId: null,
    stormScope: null,
    likelyUpstream: null,
    ingestedVia: context.via,
    rawPayloadId: context.rawPayloadId,
    lastEventHash: context.eventHash,
    eventSeq: 0,
    timeline,
    investigation: null,
  };
  return plan("created", null, next, event);
}

/**
 * What "the data changed" compares. Labels with sorted keys: jsonb hands them back in its own key
 * order, so the same labels read from the store and from a payload must still compare equal.
 */
function dataFingerprint(row: AlertRow): string {
  const labels = Object.entries(row.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    row.title,
    row.description,
    row.sourceSeverity,
    row.severity,
    labels,
    row.links,
    row.isTest,
  ]);
}

/** Title, description, severity, labels and links: what any event may update. */
function applyData(next: AlertRow, event: AlertEvent, context: EventContext): boolean {
  const before = dataFingerprint(next);
  if (event.title && !event.title_is_fallback) next.title = event.title;
  if (event.description) next.description = event.description;
  // A resolve or an event without severity never changes the stored severity.
  if (event.status !== "resolved" && event.severity_mapping !== "missing") {
    next.sourceSeverity = event.source_severity;
    next.severity = event.severity;
    next.displayPriority = event.display_priority;
    next.severityMapping = event.severity_mapping;
  }
  if (Object.keys(event.labels).length > 0) next.labels = event.labels;
  next.links = mergeLinks(next.links, event.links);
  next.isTest = event.is_test;
  next.rawPayloadId = context.rawPayloadId ?? next.rawPayloadId;
  next.lastEventHash = context.eventHash;
  next.updatedAt = context.receivedAt;
  return dataFingerprint(next) !== before;
}

// ---- The timeline: what makes the result independent of delivery order ----
//
// Sources deliver late, retry, and repeat themselves, so one alert's events reach Vigil in any order.
// Its status fields are therefore not a running tally of deliveries but a function of the set of
// source times its events carried (alert-sources.md 1.10):
//   * an `active` event with a trigger time is a firing point at that time;
//   * a `resolved` event with a resolve time is a resolve point at that time, and, when it also
//     carries the trigger time of the episode it ends (Alertmanager's startsAt), a firing point there.
// Sorted by time (at one instant, firing before resolve: an episode starts before it ends), the
// points form runs of firing and runs of resolves; each resolve run followed by a firing run is a
// re-fire. Placing a point in a sorted set is the same whichever order the points come in, so the
// state read from the set is the state the events give in time order.
//
// The runs alone would not do: a late point may split a run, and where it splits depends on the
// points inside it. So the points themselves are kept, the newest TIMELINE_POINTS of them.

/** A point of the timeline: a source time (epoch milliseconds) at which the alert fired or resolved. */
export type TimelinePoint = [at: number, kind: "active" | "resolved"];

export interface Timeline {
  /** Distinct points in time order; at one instant, a firing point before a resolve point. */
  points: TimelinePoint[];
  /** Older points were dropped, or never kept: a point before the first one is not placed. */
  trimmed: boolean;
}

/**
 * Points kept per alert, the newest. An Alertmanager episode has two (its startsAt and endsAt), so
 * events of the last 32 episodes are still placed exactly; an older one is stale.
 */
export const TIMELINE_POINTS = 64;

function comparePoints(a: TimelinePoint, b: TimelinePoint): number {
  return a[0] - b[0] || (a[1] === b[1] ? 0 : a[1] === "active" ? -1 : 1);
}

/**
 * The stored timeline, or for an alert stored before timelines were kept, the points its fields
 * still show. Marked trimmed: its earlier episodes are unknown, so an event older than what it shows
 * stays stale, as it was before.
 */
function timelineOf(row: Pick<AlertRow, "timeline" | "triggeredAt" | "status" | "resolvedAt">): Timeline {
  if (row.timeline) return row.timeline;
  const fired = row.triggeredAt.getTime();
  if (row.status === "resolved" && row.resolvedAt) {
    const resolved = row.resolvedAt.getTime();
    const points: TimelinePoint[] = fired <= resolved ? [[fired, "active"]] : [];
    return { points: [...points, [resolved, "resolved"]], trimmed: true };
  }
  return { points: [[fired, "active"]], trimmed: true };
}

/** Puts `point` in its place; a point already there, or before a trimmed timeline, changes nothing. */
function place(timeline: Timeline, point: TimelinePoint): void {
  const { points } = timeline;
  let index = points.findIndex((other) => comparePoints(other, point) >= 0);
  if (index === -1) index = points.length;
  const found = points[index];
  if (found && comparePoints(found, point) === 0) return;
  if (index === 0 && timeline.trimmed) return;
  points.splice(index, 0, point);
}

/** Resolve runs followed by a firing run: the re-fires the points show. */
function refiresIn(points: TimelinePoint[]): number {
  let count = 0;
  for (let i = 1; i < points.length; i++) {
    if (points[i - 1]?.[1] === "resolved" && points[i]?.[1] === "active") count += 1;
  }
  return count;
}

function timeOf(value: string | null): number | null {
  if (!value) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}

/** The event's status point: its trigger time when active, its resolve time when resolved. */
function statusTime(event: AlertEvent): number | null {
  if (event.status === "active") return timeOf(event.triggered_at);
  if (event.status === "resolved") return timeOf(event.resolved_at);
  return null;
}

/**
 * Adds the event's points. A status event without its source time has only its place in delivery
 * order: when it changes the status it goes after every known point, at its receive time (or just
 * after the last point, should the source's clock run ahead of Vigil's); a repeat of the current
 * status adds nothing. Returns whether the event is late: its point sorts before the last point
 * known before it, so a later status has already been applied.
 */
function placeEvent(
  timeline: Timeline,
  existing: AlertRow | null,
  event: AlertEvent,
  context: EventContext,
): boolean {
  if (event.status !== "active" && event.status !== "resolved") return false;
  const last = timeline.points.at(-1) ?? null;
  const at = statusTime(event);
  if (at === null) {
    const current = existing?.status ?? null;
    const changes =
      event.status === "resolved"
        ? current !== "resolved"
        : current !== "active" && !(current === "ignored" && existing?.ignoredBy === "operator");
    if (!changes) return false;
    let time = Math.max(context.receivedAt.getTime(), last?.[0] ?? Number.NEGATIVE_INFINITY);
    if (last && event.status === "active" && last[1] === "resolved" && time === last[0]) time += 1;
    // The start a resolve carries is a firing point like any other, if it precedes the resolve.
    const start = event.status === "resolved" ? timeOf(event.triggered_at) : null;
    if (start !== null && start <= time) place(timeline, [start, "active"]);
    place(timeline, [time, event.status]);
    return false;
  }
  const start = event.status === "resolved" ? timeOf(event.triggered_at) : null;
  if (start !== null && start <= at) place(timeline, [start, "active"]);
  const point: TimelinePoint = [at, event.status];
  // A reminder inside a firing run only says the episode still fires; as a point it would become
  // the latest trigger. After a resolve (or before anything known) it is a firing like any other.
  if (!(event.reminder && firingAt(timeline, point))) place(timeline, point);
  return last !== null && comparePoints(point, last) < 0;
}

/** Whether the points show the alert firing at `point`: the point at or before it is a firing point. */
function firingAt(timeline: Timeline, point: TimelinePoint): boolean {
  const before = timeline.points.findLast((other) => comparePoints(other, point) <= 0);
  return before?.[1] === "active";
}

/**
 * The alert's episodes by the source's own times, oldest first: when each began (`created`, then
 * `refired`) and ended (`resolved`). The classifier reads episode lengths and re-fires from it: the
 * history's times are when Vigil received each event, so two five-minute episodes delivered
 * seconds apart looked like quick flaps.
 */
export function sourceEpisodesOf(
  row: Pick<AlertRow, "timeline" | "triggeredAt" | "status" | "resolvedAt">,
): { kind: "created" | "refired" | "resolved"; at: Date }[] {
  const episodes: { kind: "created" | "refired" | "resolved"; at: Date }[] = [];
  let open = false;
  for (const [at, kind] of timelineOf(row).points) {
    if (kind === "active" && !open) {
      episodes.push({ kind: episodes.length === 0 ? "created" : "refired", at: new Date(at) });
      open = true;
    } else if (kind === "resolved" && open) {
      episodes.push({ kind: "resolved", at: new Date(at) });
      open = false;
    }
  }
  return episodes;
}

/** What the alert shows of its episodes, read from the timeline (alert-sources.md 1.10). */
interface Episodes {
  triggeredAt: Date;
  resolvedAt: Date | null;
  refireCount: number;
  lastResolvedAt: Date | null;
  lastStatusChangeAt: Date;
}

function episodesOf(timeline: Timeline, row: AlertRow, refireCount: number): Episodes {
  const { points } = timeline;
  const last = points.at(-1);
  if (!last) {
    const { triggeredAt, resolvedAt, lastResolvedAt, lastStatusChangeAt } = row;
    return { triggeredAt, resolvedAt, refireCount, lastResolvedAt, lastStatusChangeAt };
  }
  let lastFired: number | null = null;
  let lastResolvedAt: Date | null = timeline.trimmed ? row.lastResolvedAt : null;
  for (let i = 0; i < points.length; i++) {
    const [at, kind] = points[i] as TimelinePoint;
    if (kind !== "active") continue;
    lastFired = at;
    const previous = points[i - 1];
    if (previous?.[1] === "resolved") lastResolvedAt = new Date(previous[0]);
  }
  return {
    // An alert known only from resolves without a start keeps the trigger time it was created with.
    triggeredAt: lastFired === null ? row.triggeredAt : new Date(lastFired),
    resolvedAt: last[1] === "resolved" ? new Date(last[0]) : null,
    refireCount,
    lastResolvedAt,
    lastStatusChangeAt: new Date(last[0]),
  };
}

function sameEpisodes(a: Episodes, b: Episodes): boolean {
  const time = (date: Date | null) => date?.getTime() ?? null;
  return (
    time(a.triggeredAt) === time(b.triggeredAt) &&
    time(a.resolvedAt) === time(b.resolvedAt) &&
    a.refireCount === b.refireCount &&
    time(a.lastResolvedAt) === time(b.lastResolvedAt) &&
    time(a.lastStatusChangeAt) === time(b.lastStatusChangeAt)
  );
}

function trim(timeline: Timeline): Timeline {
  const excess = timeline.points.length - TIMELINE_POINTS;
  return excess > 0 ? { points: timeline.points.slice(excess), trimmed: true } : timeline;
}

/** The status the event leaves, for an event that is not late. */
function nextStatus(existing: AlertRow, event: AlertEvent): string {
  if (event.status === "resolved") return "resolved";
  if (event.status === "ignored") return existing.status === "active" ? "ignored" : existing.status;
  if (event.status !== "active") return existing.status;
  if (existing.status !== "ignored" || existing.ignoredBy !== "operator") return "active";
  // Repeats of the episode an operator ignored keep the decision; a later trigger is a new episode.
  // A reminder is no trigger, whatever its date (an ignored alert's episode has not ended: a
  // resolve would have ended the ignore).
  if (event.reminder) return "ignored";
  const at = statusTime(event);
  return at !== null && at > existing.triggeredAt.getTime() ? "active" : "ignored";
}

export function planAlertChange(
  existing: AlertRow | null,
  event: AlertEvent,
  context: EventContext,
): AlertPlan {
  if (!existing) return createAlert(event, context);
  if (existing.lastEventHash === context.eventHash)
    return { outcome: "duplicate", next: null, history: null };

  const stored = timelineOf(existing);
  if (continuesInferredResolve(existing, event, stored)) return reopen(existing, event, context, stored);
  const timeline: Timeline = { points: [...stored.points], trimmed: stored.trimmed };
  // The source's own resolve of the episode a pull sync resolved by inference replaces that resolve:
  // the sync's time is only when Vigil noticed, up to a sync interval after the source's.
  if (replacesInferredResolve(existing, event, stored)) timeline.points.pop();
  const late = placeEvent(timeline, existing, event, context);
  const refireCount = existing.refireCount + refiresIn(timeline.points) - refiresIn(stored.points);
  const episodes = episodesOf(timeline, existing, refireCount);
  const episodesChanged = !sameEpisodes(episodes, existing);

  if (late) {
    // A later status is already applied. The event still tells of an earlier episode (a re-fire
    // that was not known, an earlier resolve time), but it neither changes the status nor its data:
    // those of the newest episode stay.
    const next: AlertRow = {
      ...existing,
      ...episodes,
      timeline: trim(timeline),
      resolveInferred: staysInferred(existing, event, existing.status),
      lastEventHash: context.eventHash,
      updatedAt: episodesChanged ? context.receivedAt : existing.updatedAt,
    };
    clearConfirmedIgnore(next);
    return plan(episodesChanged ? "updated" : "stale", existing, next, event, {
      event_time: new Date(statusTime(event) ?? 0).toISOString(),
      last_status_change_at: existing.lastStatusChangeAt.toISOString(),
    });
  }

  const next: AlertRow = { ...existing, ...episodes, timeline: trim(timeline) };
  const dataChanged = applyData(next, event, context);
  next.status = nextStatus(existing, event);
  let outcome: IngestOutcome = dataChanged || episodesChanged ? "updated" : "unchanged";
  next.resolveInferred = staysInferred(existing, event, next.status);
  if (next.status !== existing.status && next.status === "active") {
    next.ignoredBy = null;
    next.ignoreReason = null;
    // As the spec has it: set on first ingest and on a re-fire from resolved.
    if (existing.status === "resolved") next.ingestedVia = context.via;
    // Classified again. A new episode (after a resolve, or a later trigger) also lets the next
    // classification set attention; the end of a source's suppression (a silence expired, an
    // inhibition lifted) continues the episode, and the attention an operator set for it stands.
    next.analysisStatus = "none";
    const newEpisode =
      existing.status === "resolved" || next.triggeredAt.getTime() > existing.triggeredAt.getTime();
    if (newEpisode) next.attentionByOperator = false;
    outcome = "refired";
  } else if (next.status !== existing.status && next.status === "resolved") {
    // An inferred resolve keeps an operator's ignore: undone, it gives the alert back as it was.
    if (!event.inferred) {
      next.ignoredBy = null;
      next.ignoreReason = null;
    }
    outcome = "resolved";
  } else if (next.status !== existing.status && next.status === "ignored") {
    next.ignoredBy = "source";
    next.ignoreReason = event.ignore_reason;
    outcome = "ignored";
  }
  clearConfirmedIgnore(next);
  // A repeat of the alert's state that changes nothing (a reminder, or a push of an alert a pull
  // sync read too: their hashes differ) is no change for the history: HISTORY_LIMIT of them would
  // push the alert's real changes out. A source's own action (acknowledge, note) stays in it.
  if (outcome === "unchanged" && event.status !== "unchanged") return { outcome, next, history: null };
  return plan(outcome, existing, next, event);
}

/**
 * An ignore ends with the episode: once a source says the alert resolved (its own resolve, or one
 * confirming a resolve a pull sync inferred), no ignore is kept. Only an inferred resolve keeps it,
 * so that an undo gives the alert back as it was.
 */
function clearConfirmedIgnore(next: AlertRow): void {
  if (next.status !== "resolved" || next.resolveInferred) return;
  next.ignoredBy = null;
  next.ignoreReason = null;
}

/**
 * Whether the alert, left in `status` by `event`, is resolved by inference alone: a resolve stays
 * undoable only while no source has said the episode ended (a late source resolve says so too).
 */
function staysInferred(existing: AlertRow, event: AlertEvent, status: string): boolean {
  if (status !== "resolved") return false;
  if (event.status !== "resolved") return existing.resolveInferred;
  return event.inferred === true && (existing.status !== "resolved" || existing.resolveInferred);
}

/**
 * A firing of the episode a pull sync resolved because the alert was missing from its list: the
 * episode never ended (an Alertmanager restarted with an empty list, then refilled it with the same
 * start). Its start is no later than the inferred resolve, so by the timeline it would be late.
 */
function continuesInferredResolve(existing: AlertRow, event: AlertEvent, stored: Timeline): boolean {
  if (!existing.resolveInferred || existing.status !== "resolved") return false;
  // Listed again as firing, or as suppressed (a silence that outlived the restart).
  if (event.status !== "active" && event.status !== "ignored") return false;
  const at = timeOf(event.triggered_at);
  const last = stored.points.at(-1);
  return at !== null && last?.[1] === "resolved" && at >= existing.triggeredAt.getTime() && at <= last[0];
}

/** A resolve the source sent, with its time, for the episode whose end Vigil inferred (not an older one). */
function replacesInferredResolve(existing: AlertRow, event: AlertEvent, stored: Timeline): boolean {
  if (!existing.resolveInferred || existing.status !== "resolved") return false;
  if (event.status !== "resolved" || event.inferred) return false;
  const at = timeOf(event.resolved_at);
  return at !== null && at >= existing.triggeredAt.getTime() && stored.points.at(-1)?.[1] === "resolved";
}

/** Undoes the inferred resolve: the same episode, active again, without a re-fire. */
function reopen(existing: AlertRow, event: AlertEvent, context: EventContext, stored: Timeline): AlertPlan {
  const timeline: Timeline = { points: stored.points.slice(0, -1), trimmed: stored.trimmed };
  const next: AlertRow = {
    ...existing,
    ...episodesOf(timeline, existing, existing.refireCount),
    timeline: trim(timeline),
    resolveInferred: false,
  };
  // With every point of the timeline gone (a trimmed one), the stored episode still holds.
  next.resolvedAt = null;
  applyData(next, event, context);
  // As it was before the resolve: suppressed at the source, ignored by an operator, or active.
  if (event.status === "ignored") {
    Object.assign(next, { status: "ignored", ignoredBy: "source", ignoreReason: event.ignore_reason });
  } else if (existing.ignoredBy === "operator") {
    next.status = "ignored";
  } else {
    Object.assign(next, { status: "active", ignoredBy: null, ignoreReason: null });
  }
  return plan("updated", existing, next, event, {
    reopened: "listed again after a pull sync found it absent: the same episode, not a re-fire",
  });
}
