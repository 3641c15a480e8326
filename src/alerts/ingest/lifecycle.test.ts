// Unit tests of planAlertChange, one block per rule of alert-sources.md 1.10 and the AlertV1 field
// notes of the spec. Expectations are written from those texts; the events are built by hand.
import { describe, expect, it } from "vitest";
import type { AlertEvent } from "../sources/types.ts";
import { type AlertRow, type EventContext, planAlertChange, TIMELINE_POINTS } from "./lifecycle.ts";

const T0 = "2024-05-14T10:00:00.000Z";
const T1 = "2024-05-14T10:30:00.000Z";
const T2 = "2024-05-14T11:00:00.000Z";
const T3 = "2024-05-14T11:30:00.000Z";
const RECEIVED = "2024-05-14T12:00:00.000Z";

const SCOPE = {
  orgId: null,
  ownerId: "6f1c2f8e-1111-4a5b-9c3d-000000000001",
  sourceType: "alertmanager",
  integrationName: "prod",
  webhookId: "6f1c2f8e-2222-4a5b-9c3d-000000000002",
};

function event(overrides: Partial<AlertEvent> = {}): AlertEvent {
  return {
    external_uid: "a1bc48475b20e73d",
    status: "active",
    ignore_reason: null,
    title: "HighLatency",
    title_is_fallback: false,
    description: "p99 latency above 2s",
    source_severity: "critical",
    severity: "Critical",
    display_priority: 1,
    severity_mapping: "mapped",
    triggered_at: T0,
    resolved_at: null,
    labels: { alertname: "HighLatency", service: "checkout" },
    links: [{ kind: "source", url: "https://prometheus.example/graph?g0.expr=up" }],
    is_test: false,
    source_event: "firing",
    unmapped: [],
    ...overrides,
  };
}

let hashes = 0;
function context(overrides: Partial<EventContext> = {}): EventContext {
  hashes += 1;
  return {
    scope: SCOPE,
    receivedAt: new Date(RECEIVED),
    via: "push",
    rawPayloadId: `{"delivery":${hashes}}`,
    eventHash: `hash-${hashes}`,
    ...overrides,
  };
}

/** Creates an alert from `first`, then applies each later event in turn, as the ingest does. */
function stored(first: AlertEvent, firstContext: EventContext = context()): AlertRow {
  const plan = planAlertChange(null, first, firstContext);
  if (!plan.next) throw new Error("a new uid must create an alert");
  return plan.next;
}

function apply(row: AlertRow, next: AlertEvent, nextContext: EventContext = context()) {
  return planAlertChange(row, next, nextContext);
}

function nextOf(plan: ReturnType<typeof apply>): AlertRow {
  if (!plan.next) throw new Error(`expected a next state, got outcome ${plan.outcome}`);
  return plan.next;
}

describe("planAlertChange: a new uid", () => {
  it("creates the alert with the event's data, status, times, tenant and ingest path", () => {
    const ctx = context({ via: "push", rawPayloadId: '{"alerts":[]}', eventHash: "h-create" });
    const plan = planAlertChange(null, event(), ctx);
    expect(plan.outcome).toBe("created");
    expect(plan.next).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      orgId: null,
      ownerId: SCOPE.ownerId,
      webhookId: SCOPE.webhookId,
      sourceType: "alertmanager",
      integrationName: "prod",
      externalUid: "a1bc48475b20e73d",
      title: "HighLatency",
      description: "p99 latency above 2s",
      sourceSeverity: "critical",
      severity: "Critical",
      displayPriority: 1,
      severityMapping: "mapped",
      impactScore: 0,
      impactExplanation: null,
      status: "active",
      ignoredBy: null,
      ignoreReason: null,
      analysisStatus: "none",
      triageBucket: null,
      attention: "needs_review",
      attentionReason: null,
      attentionByOperator: false,
      resolveInferred: false,
      shortSummary: null,
      initialInvestigation: null,
      investigation: null,
      triggeredAt: new Date(T0),
      createdAt: new Date(RECEIVED),
      updatedAt: new Date(RECEIVED),
      resolvedAt: null,
      refireCount: 0,
      lastResolvedAt: null,
      lastStatusChangeAt: new Date(T0),
      labels: { alertname: "HighLatency", service: "checkout" },
      links: [{ kind: "source", url: "https://prometheus.example/graph?g0.expr=up" }],
      isTest: false,
      alertRole: "unknown",
      stormId: null,
      stormScope: null,
      likelyUpstream: null,
      ingestedVia: "push",
      rawPayloadId: '{"alerts":[]}',
      lastEventHash: "h-create",
      eventSeq: 0,
      timeline: { points: [[Date.parse(T0), "active"]], trimmed: false },
    });
    expect(plan.history).toEqual({
      kind: "created",
      sourceEvent: "firing",
      statusBefore: null,
      statusAfter: "active",
      detail: {},
    });
  });

  it("gives two new alerts two different ids", () => {
    expect(stored(event()).id).not.toBe(stored(event()).id);
  });

  it("creates an `unchanged` event (acknowledge, note) as active", () => {
    const plan = planAlertChange(
      null,
      event({ status: "unchanged", source_event: "acknowledge" }),
      context(),
    );
    expect(plan.outcome).toBe("created");
    expect(nextOf(plan)).toMatchObject({ status: "active", resolvedAt: null, ignoredBy: null });
    expect(plan.history).toMatchObject({
      kind: "created",
      statusAfter: "active",
      sourceEvent: "acknowledge",
    });
  });

  it("creates a source-ignored event as ignored, with its ignore_reason", () => {
    const row = stored(
      event({ status: "ignored", ignore_reason: "grafana: Paused", source_event: "resolved" }),
    );
    expect(row).toMatchObject({
      status: "ignored",
      ignoredBy: "source",
      ignoreReason: "grafana: Paused",
      resolvedAt: null,
    });
  });

  it("uses the receive time when the event carries no trigger time", () => {
    const row = stored(event({ triggered_at: null }));
    expect(row.triggeredAt).toEqual(new Date(RECEIVED));
    expect(row.createdAt).toEqual(new Date(RECEIVED));
  });

  it("creates a resolved event as resolved, with the event's resolve time", () => {
    const row = stored(event({ status: "resolved", resolved_at: T1, source_event: "resolved" }));
    expect(row).toMatchObject({
      status: "resolved",
      triggeredAt: new Date(T0),
      resolvedAt: new Date(T1),
      refireCount: 0,
      lastResolvedAt: null,
    });
  });

  it("creates a resolved event without times with the receive time for both", () => {
    const row = stored(event({ status: "resolved", triggered_at: null, resolved_at: null }));
    expect(row).toMatchObject({
      status: "resolved",
      triggeredAt: new Date(RECEIVED),
      resolvedAt: new Date(RECEIVED),
    });
  });

  it("never puts a first-seen resolve's trigger after its resolve (a recovery that names no start)", () => {
    const row = stored(event({ status: "resolved", triggered_at: null, resolved_at: T1 }));
    expect(row).toMatchObject({ status: "resolved", triggeredAt: new Date(T1), resolvedAt: new Date(T1) });
    expect(row.lastStatusChangeAt).toEqual(new Date(T1));
    // A trigger the source dated after its own resolve is taken as the resolve too.
    const late = stored(event({ status: "resolved", triggered_at: T2, resolved_at: T1 }));
    expect(late).toMatchObject({ triggeredAt: new Date(T1), resolvedAt: new Date(T1) });
  });

  it("records the values the source tables did not list in the history", () => {
    const unmapped = [{ field: "severity" as const, value: "sev-bogus" }];
    const plan = planAlertChange(
      null,
      event({ severity: "Medium", display_priority: 3, severity_mapping: "unmapped", unmapped }),
      context(),
    );
    expect(plan.history?.detail).toEqual({ unmapped });
  });
});

describe("planAlertChange: an existing alert", () => {
  it("never changes created_at, through update, resolve and re-fire", () => {
    let row = stored(event(), context({ receivedAt: new Date("2024-05-14T10:00:05.000Z") }));
    const steps: [AlertEvent, string][] = [
      [event({ status: "unchanged", description: "acknowledged" }), "2024-05-14T10:10:00.000Z"],
      [event({ status: "resolved", resolved_at: T1 }), "2024-05-14T10:30:05.000Z"],
      [event({ triggered_at: T2 }), "2024-05-14T11:00:05.000Z"],
    ];
    for (const [next, receivedAt] of steps) {
      row = nextOf(apply(row, next, context({ receivedAt: new Date(receivedAt) })));
      expect(row.createdAt).toEqual(new Date("2024-05-14T10:00:05.000Z"));
    }
    expect(row.refireCount).toBe(1);
  });

  it("changes nothing for the same event twice (a sender's retry)", () => {
    const row = stored(event(), context({ eventHash: "same" }));
    const plan = apply(row, event({ description: "whatever" }), context({ eventHash: "same" }));
    expect(plan).toEqual({ outcome: "duplicate", next: null, history: null });
  });

  it("re-fires a resolved alert: refire_count + 1, last_resolved_at, trigger moved, analysis again", () => {
    const row = nextOf(apply(stored(event()), event({ status: "resolved", resolved_at: T1 })));
    const before: AlertRow = {
      ...row,
      ingestedVia: "pull",
      analysisStatus: "completed",
      attentionByOperator: true,
    };
    const plan = apply(before, event({ triggered_at: T2 }), context({ via: "push" }));
    expect(plan.outcome).toBe("refired");
    expect(nextOf(plan)).toMatchObject({
      status: "active",
      refireCount: 1,
      lastResolvedAt: new Date(T1),
      resolvedAt: null,
      triggeredAt: new Date(T2),
      createdAt: row.createdAt,
      ingestedVia: "push",
      analysisStatus: "none",
      // The analyst's attention of the last episode gives way to the new classification.
      attentionByOperator: false,
    });
    expect(plan.history).toMatchObject({
      kind: "refired",
      statusBefore: "resolved",
      statusAfter: "active",
    });
  });

  it("counts every re-fire and keeps the most recent resolve as last_resolved_at", () => {
    let row = stored(event());
    row = nextOf(apply(row, event({ status: "resolved", resolved_at: T1 })));
    row = nextOf(apply(row, event({ triggered_at: T2 })));
    row = nextOf(apply(row, event({ status: "resolved", resolved_at: T3 })));
    const fourth = "2024-05-14T12:30:00.000Z";
    row = nextOf(apply(row, event({ triggered_at: fourth })));
    expect(row).toMatchObject({
      status: "active",
      refireCount: 2,
      lastResolvedAt: new Date(T3),
      triggeredAt: new Date(fourth),
    });
  });

  it("re-fires a resolved alert at the receive time when the event has no trigger time", () => {
    const resolved = nextOf(apply(stored(event()), event({ status: "resolved", resolved_at: T1 })));
    const row = nextOf(apply(resolved, event({ triggered_at: null })));
    expect(row).toMatchObject({ status: "active", refireCount: 1, triggeredAt: new Date(RECEIVED) });
  });

  it("re-fires a source-ignored alert on `active` without counting a re-fire", () => {
    const ignored = stored(event({ status: "ignored", ignore_reason: "grafana: Paused" }));
    const plan = apply(ignored, event({ triggered_at: T2 }));
    expect(plan.outcome).toBe("refired");
    expect(nextOf(plan)).toMatchObject({
      status: "active",
      refireCount: 0,
      lastResolvedAt: null,
      ignoredBy: null,
      ignoreReason: null,
      triggeredAt: new Date(T2),
    });
  });

  it("keeps the operator's attention and how the alert came in when a suppression of its episode ends", () => {
    const suppressed: AlertRow = {
      ...stored(event({ status: "ignored", ignore_reason: "alertmanager: silenced" })),
      ingestedVia: "push",
      analysisStatus: "completed",
      attentionByOperator: true,
    };
    // The silence expired: the same episode (same start), listed by a pull sync.
    const same = apply(suppressed, event(), context({ via: "pull" }));
    expect(same.outcome).toBe("refired");
    expect(nextOf(same)).toMatchObject({
      status: "active",
      triggeredAt: new Date(T0),
      ingestedVia: "push",
      analysisStatus: "none",
      attentionByOperator: true,
    });
    // A later start is a new episode: the next classification sets attention again.
    const later = apply(suppressed, event({ triggered_at: T2 }), context({ via: "pull" }));
    expect(nextOf(later)).toMatchObject({
      status: "active",
      ingestedVia: "push",
      attentionByOperator: false,
    });
  });

  describe("an alert an operator ignored", () => {
    const operatorIgnored = (): AlertRow => ({
      ...stored(event()),
      status: "ignored",
      ignoredBy: "operator",
      ignoreReason: "known noisy during migration",
    });

    it("stays ignored on repeat notifications of the same episode", () => {
      const row = operatorIgnored();
      const plan = apply(row, event({ description: "still firing" }));
      expect(plan.outcome).not.toBe("refired");
      expect(nextOf(plan)).toMatchObject({
        status: "ignored",
        ignoredBy: "operator",
        ignoreReason: "known noisy during migration",
        triggeredAt: new Date(T0),
        description: "still firing",
      });
    });

    it("stays ignored on an `active` event without a trigger time", () => {
      const plan = apply(operatorIgnored(), event({ triggered_at: null }));
      expect(nextOf(plan)).toMatchObject({ status: "ignored", ignoredBy: "operator" });
    });

    it("re-fires only for a later trigger time (a new episode)", () => {
      const plan = apply(operatorIgnored(), event({ triggered_at: T2 }));
      expect(plan.outcome).toBe("refired");
      expect(nextOf(plan)).toMatchObject({
        status: "active",
        ignoredBy: null,
        ignoreReason: null,
        triggeredAt: new Date(T2),
        refireCount: 0,
      });
    });
  });

  describe("a reminder of the episode under way (a renotification, a resend, a saved search's next run)", () => {
    const reminder = (overrides: Partial<AlertEvent> = {}) =>
      event({ triggered_at: T2, source_event: "Renotify", reminder: true, ...overrides });

    it("keeps an operator's ignore and its reason, whatever its date, and adds nothing to the history", () => {
      const row: AlertRow = {
        ...stored(event()),
        status: "ignored",
        ignoredBy: "operator",
        ignoreReason: "known, fix tomorrow",
      };
      const plan = apply(row, reminder());
      expect(plan.outcome).toBe("unchanged");
      expect(nextOf(plan)).toMatchObject({
        status: "ignored",
        ignoredBy: "operator",
        ignoreReason: "known, fix tomorrow",
        triggeredAt: new Date(T0),
        lastStatusChangeAt: new Date(T0),
        refireCount: 0,
      });
      expect(plan.history).toBeNull();
      // What it says besides its status still counts, as for any repeat.
      const described = apply(row, reminder({ description: "still above 90%" }));
      expect(described.outcome).toBe("updated");
      expect(nextOf(described)).toMatchObject({ status: "ignored", description: "still above 90%" });
    });

    it("moves no trigger time of an active alert: it is no trigger", () => {
      const row = stored(event());
      const plan = apply(row, reminder());
      expect(plan.outcome).toBe("unchanged");
      expect(nextOf(plan)).toMatchObject({
        status: "active",
        triggeredAt: new Date(T0),
        lastStatusChangeAt: new Date(T0),
        timeline: { points: [[Date.parse(T0), "active"]], trimmed: false },
      });
    });

    it("re-fires a resolved alert: the episode had ended", () => {
      const resolved = nextOf(apply(stored(event()), event({ status: "resolved", resolved_at: T1 })));
      const plan = apply(resolved, reminder());
      expect(plan.outcome).toBe("refired");
      expect(nextOf(plan)).toMatchObject({
        status: "active",
        triggeredAt: new Date(T2),
        refireCount: 1,
        lastResolvedAt: new Date(T1),
        resolvedAt: null,
      });
    });

    it("is stale when dated inside an episode that has since ended", () => {
      const resolved = nextOf(apply(stored(event()), event({ status: "resolved", resolved_at: T2 })));
      const plan = apply(resolved, reminder({ triggered_at: T1 }));
      expect(plan.outcome).toBe("stale");
      expect(nextOf(plan)).toMatchObject({ status: "resolved", triggeredAt: new Date(T0), refireCount: 0 });
    });

    it("ends a source's suppression as any firing does, continuing the episode", () => {
      const suppressed: AlertRow = {
        ...stored(event()),
        status: "ignored",
        ignoredBy: "source",
        ignoreReason: "datadog: Muted",
        attentionByOperator: true,
      };
      const plan = apply(suppressed, reminder());
      expect(plan.outcome).toBe("refired");
      expect(nextOf(plan)).toMatchObject({
        status: "active",
        ignoreReason: null,
        triggeredAt: new Date(T0),
        refireCount: 0,
        attentionByOperator: true,
      });
    });

    it("creates a new alert as any firing does, at its own time", () => {
      const plan = planAlertChange(null, reminder(), context());
      expect(plan.outcome).toBe("created");
      expect(plan.next).toMatchObject({ status: "active", triggeredAt: new Date(T2) });
    });
  });

  it("leaves ingested_via alone on plain updates", () => {
    const row: AlertRow = { ...stored(event()), ingestedVia: "pull" };
    const acknowledged = nextOf(apply(row, event({ status: "unchanged", description: "ack by bob" })));
    expect(acknowledged).toMatchObject({ ingestedVia: "pull", description: "ack by bob", status: "active" });
    const repeat = nextOf(apply(row, event({ title: "HighLatency (repeat)" })));
    expect(repeat).toMatchObject({ ingestedVia: "pull", title: "HighLatency (repeat)", status: "active" });
  });

  it("moves triggered_at forward for an `active` event with a later trigger on an active alert", () => {
    const plan = apply(stored(event()), event({ triggered_at: T2 }));
    expect(plan.outcome).toBe("updated");
    expect(nextOf(plan)).toMatchObject({ status: "active", triggeredAt: new Date(T2), refireCount: 0 });
  });

  it("calls a change of data an update and a repeat without changes unchanged, kept out of the history", () => {
    const row = stored(event());
    expect(apply(row, event({ description: "new text" })).outcome).toBe("updated");
    // Another delivery of the same state (a push after a pull sync read it: another source event).
    const pulled = context({ via: "pull", rawPayloadId: '{"pulled":true}' });
    const repeat = apply(row, event({ source_event: "active" }), pulled);
    expect(repeat.outcome).toBe("unchanged");
    expect(repeat.history).toBeNull();
    // Its body is still the alert's newest.
    expect(nextOf(repeat).rawPayloadId).toBe('{"pulled":true}');
  });

  it("keeps a source's own action that changes nothing in the history (an acknowledge)", () => {
    const row = stored(event());
    const acknowledged = apply(row, event({ status: "unchanged", source_event: "acknowledge" }));
    expect(acknowledged.outcome).toBe("unchanged");
    expect(acknowledged.history).toMatchObject({
      kind: "unchanged",
      sourceEvent: "acknowledge",
      statusBefore: "active",
      statusAfter: "active",
    });
  });

  it("resolves with the event's resolve time, or the receive time without one", () => {
    const withTime = apply(stored(event()), event({ status: "resolved", resolved_at: T1 }));
    expect(withTime.outcome).toBe("resolved");
    expect(nextOf(withTime)).toMatchObject({
      status: "resolved",
      resolvedAt: new Date(T1),
      triggeredAt: new Date(T0),
    });
    expect(withTime.history).toMatchObject({
      kind: "resolved",
      statusBefore: "active",
      statusAfter: "resolved",
    });
    const withoutTime = nextOf(apply(stored(event()), event({ status: "resolved", resolved_at: null })));
    expect(withoutTime).toMatchObject({ status: "resolved", resolvedAt: new Date(RECEIVED) });
  });

  it("resolves an alert an operator ignored when the source says it is over", () => {
    const row: AlertRow = { ...stored(event()), status: "ignored", ignoredBy: "operator", ignoreReason: "x" };
    const next = nextOf(apply(row, event({ status: "resolved", resolved_at: T1 })));
    expect(next).toMatchObject({ status: "resolved", resolvedAt: new Date(T1) });
  });

  it("counts the earlier episode a late resolve reveals, keeping the newer episode's status and data", () => {
    // Fired at T0 and (a new trigger time) at T2; the resolve at T1 says the T0 episode had ended, so
    // T2 was a re-fire: in time order the events give active, one re-fire, last resolved at T1.
    const row = nextOf(apply(stored(event()), event({ triggered_at: T2 })));
    const plan = apply(
      row,
      event({
        status: "resolved",
        resolved_at: T1,
        source_event: "resolved",
        description: "late resolve",
        labels: { x: "y" },
      }),
      context({ eventHash: "late", rawPayloadId: "late body" }),
    );
    expect(plan.outcome).toBe("updated");
    const next = nextOf(plan);
    expect(next).toMatchObject({
      status: "active",
      triggeredAt: new Date(T2),
      resolvedAt: null,
      refireCount: 1,
      lastResolvedAt: new Date(T1),
      lastStatusChangeAt: new Date(T2),
      description: row.description,
      labels: row.labels,
      rawPayloadId: row.rawPayloadId,
      updatedAt: new Date(RECEIVED),
    });
    expect(plan.history).toEqual({
      kind: "updated",
      sourceEvent: "resolved",
      statusBefore: "active",
      statusAfter: "active",
      detail: { event_time: T1, last_status_change_at: T2 },
    });
  });

  it("treats a late event that tells nothing new as stale: nothing changes, history says so", () => {
    let row = stored(event());
    row = nextOf(apply(row, event({ status: "resolved", resolved_at: T1 })));
    row = nextOf(apply(row, event({ triggered_at: T2 })));
    const plan = apply(
      row,
      event({
        status: "resolved",
        resolved_at: T1,
        source_event: "resolved",
        description: "late resolve",
        labels: { x: "y" },
      }),
      context({ eventHash: "late" }),
    );
    expect(plan.outcome).toBe("stale");
    const next = nextOf(plan);
    // Everything the alert shows stays; only the remembered event hash moves, so a retry of the
    // stale delivery is a duplicate.
    expect({ ...next, lastEventHash: row.lastEventHash }).toEqual(row);
    expect(next.lastEventHash).toBe("late");
    expect(plan.history).toEqual({
      kind: "stale",
      sourceEvent: "resolved",
      statusBefore: "active",
      statusAfter: "active",
      detail: { event_time: T1, last_status_change_at: T2 },
    });
  });

  it("treats a late repeat of a resolved episode's firing as stale, not as a re-fire", () => {
    const resolved = nextOf(apply(stored(event()), event({ status: "resolved", resolved_at: T1 })));
    const plan = apply(resolved, event({ triggered_at: T0, description: "late repeat" }));
    expect(plan.outcome).toBe("stale");
    expect(nextOf(plan)).toMatchObject({
      status: "resolved",
      resolvedAt: new Date(T1),
      refireCount: 0,
      description: "p99 latency above 2s",
    });
  });

  it("undoes a resolve a pull sync inferred when the same episode fires again: active, no re-fire", () => {
    const absent = event({ status: "resolved", triggered_at: null, resolved_at: T1, inferred: true });
    const resolved = nextOf(apply(stored(event()), absent));
    expect(resolved).toMatchObject({ status: "resolved", resolveInferred: true, resolvedAt: new Date(T1) });
    // Alertmanager refilled after a restart: the same start, listed again.
    const plan = apply(resolved, event({ triggered_at: T0 }));
    expect(plan.outcome).toBe("updated");
    expect(nextOf(plan)).toMatchObject({
      status: "active",
      resolveInferred: false,
      resolvedAt: null,
      lastResolvedAt: null,
      triggeredAt: new Date(T0),
      refireCount: 0,
    });
    expect(plan.history).toMatchObject({ statusBefore: "resolved", statusAfter: "active" });
    // A later start after an inferred resolve is a re-fire, as after any resolve.
    const refired = apply(resolved, event({ triggered_at: T2 }));
    expect(refired.outcome).toBe("refired");
    expect(nextOf(refired)).toMatchObject({ refireCount: 1, resolveInferred: false });
  });

  it("gives an undone resolve back as it was: an operator's ignore stays, a suppressed listing is ignored by the source", () => {
    const absent = event({ status: "resolved", triggered_at: null, resolved_at: T1, inferred: true });
    const ignored = {
      ...stored(event()),
      status: "ignored",
      ignoredBy: "operator",
      ignoreReason: "known, fix on Monday",
    };
    const resolved = nextOf(apply(ignored, absent));
    expect(resolved).toMatchObject({ status: "resolved", resolveInferred: true });
    expect(nextOf(apply(resolved, event({ triggered_at: T0 })))).toMatchObject({
      status: "ignored",
      ignoredBy: "operator",
      ignoreReason: "known, fix on Monday",
      resolvedAt: null,
    });
    // Still silenced in Alertmanager when it refilled: the listing says suppressed.
    const silenced = nextOf(apply(stored(event()), absent));
    const suppressed = event({
      status: "ignored",
      triggered_at: T0,
      ignore_reason: "alertmanager: silenced",
    });
    expect(nextOf(apply(silenced, suppressed))).toMatchObject({
      status: "ignored",
      ignoredBy: "source",
      ignoreReason: "alertmanager: silenced",
      refireCount: 0,
    });
  });

  it("keeps a resolve the source sent: a late firing of its episode stays stale, whatever a sync inferred before", () => {
    const inferred = nextOf(
      apply(
        stored(event()),
        event({ status: "resolved", triggered_at: null, resolved_at: T1, inferred: true }),
      ),
    );
    // The source's own resolve after the inferred one makes the resolve final.
    const confirmed = nextOf(apply(inferred, event({ status: "resolved", resolved_at: T2 })));
    expect(confirmed).toMatchObject({ status: "resolved", resolveInferred: false, resolvedAt: new Date(T2) });
    expect(apply(confirmed, event({ triggered_at: T0 })).outcome).toBe("stale");
    // So does a late one, with an end before the inferred resolve: its time replaces the sync's.
    const source = "2024-05-14T10:20:00.000Z";
    const latePlan = apply(inferred, event({ status: "resolved", triggered_at: T0, resolved_at: source }));
    expect(latePlan.outcome).toBe("updated");
    const late = nextOf(latePlan);
    expect(late).toMatchObject({
      status: "resolved",
      resolveInferred: false,
      resolvedAt: new Date(source),
      lastStatusChangeAt: new Date(source),
      triggeredAt: new Date(T0),
      refireCount: 0,
    });
    expect(apply(late, event({ triggered_at: T0 })).outcome).toBe("stale");
  });

  it("ends an ignore once the source confirms the resolve a pull sync inferred, on time or late", () => {
    const inhibited = nextOf(
      apply(
        stored(event()),
        event({ status: "ignored", triggered_at: T0, ignore_reason: "alertmanager: inhibited" }),
      ),
    );
    const inferred = nextOf(
      apply(inhibited, event({ status: "resolved", triggered_at: null, resolved_at: T2, inferred: true })),
    );
    // Inferred, it keeps the ignore, for an undo.
    expect(inferred).toMatchObject({ status: "resolved", ignoreReason: "alertmanager: inhibited" });
    const ended = { status: "resolved", resolveInferred: false, ignoredBy: null, ignoreReason: null };
    expect(nextOf(apply(inferred, event({ status: "resolved", resolved_at: T3 })))).toMatchObject(ended);
    const late = event({ status: "resolved", triggered_at: T0, resolved_at: T1 });
    expect(nextOf(apply(inferred, late))).toMatchObject(ended);
  });

  it("does not treat a resolve at the trigger time itself as stale", () => {
    const plan = apply(stored(event()), event({ status: "resolved", resolved_at: T0 }));
    expect(plan.outcome).toBe("resolved");
  });

  describe("severity", () => {
    it("is never changed by a resolved event", () => {
      const resolved = nextOf(
        apply(
          stored(event()),
          event({
            status: "resolved",
            resolved_at: T1,
            source_severity: "info",
            severity: "info",
            display_priority: 5,
          }),
        ),
      );
      expect(resolved).toMatchObject({
        sourceSeverity: "critical",
        severity: "Critical",
        displayPriority: 1,
        severityMapping: "mapped",
      });
    });

    it("is never changed by an event without severity", () => {
      const next = nextOf(
        apply(
          stored(event()),
          event({
            status: "unchanged",
            source_severity: "",
            severity: "Medium",
            display_priority: 3,
            severity_mapping: "missing",
          }),
        ),
      );
      expect(next).toMatchObject({ sourceSeverity: "critical", severity: "Critical", displayPriority: 1 });
    });

    it("follows the source on other events, up or down", () => {
      const lowered = nextOf(
        apply(
          stored(event()),
          event({ source_severity: "warning", severity: "Medium", display_priority: 3 }),
        ),
      );
      expect(lowered).toMatchObject({ sourceSeverity: "warning", severity: "Medium", displayPriority: 3 });
      const raised = nextOf(
        apply(lowered, event({ source_severity: "p1", severity: "Critical", display_priority: 1 })),
      );
      expect(raised).toMatchObject({ sourceSeverity: "p1", severity: "Critical", displayPriority: 1 });
    });
  });

  it("never overwrites a stored title with a fallback title, but takes a real one", () => {
    const row = stored(event());
    const fallback = nextOf(
      apply(row, event({ title: "alertmanager alert a1bc48475b20e73d", title_is_fallback: true })),
    );
    expect(fallback.title).toBe("HighLatency");
    expect(nextOf(apply(row, event({ title: "Renamed rule" }))).title).toBe("Renamed rule");
  });

  it("never overwrites a stored description with an empty one", () => {
    const row = stored(event());
    expect(nextOf(apply(row, event({ description: "" }))).description).toBe("p99 latency above 2s");
    expect(nextOf(apply(row, event({ description: "new text" }))).description).toBe("new text");
  });

  it("replaces the labels only when the event carries labels", () => {
    const row = stored(event());
    expect(nextOf(apply(row, event({ labels: {} }))).labels).toEqual({
      alertname: "HighLatency",
      service: "checkout",
    });
    expect(nextOf(apply(row, event({ labels: { team: "payments" } }))).labels).toEqual({ team: "payments" });
  });

  it("merges links: the stored ones stay, new ones are added once", () => {
    const row = stored(event());
    const runbook = { kind: "runbook" as const, url: "https://runbooks.example/latency" };
    const next = nextOf(
      apply(
        row,
        event({
          links: [runbook, { kind: "source", url: "https://prometheus.example/graph?g0.expr=up" }],
        }),
      ),
    );
    expect(next.links).toEqual([
      { kind: "source", url: "https://prometheus.example/graph?g0.expr=up" },
      runbook,
    ]);
    expect(nextOf(apply(next, event({ links: [] }))).links).toEqual(next.links);
  });

  it("keeps the newest five links of a kind when every delivery brings a new one", () => {
    const runbook = { kind: "runbook" as const, url: "https://runbooks.example/latency" };
    const run = (n: number) => ({
      kind: "source" as const,
      url: `https://splunk.example/app/search/@go?sid=run_${n}`,
    });
    let row = stored(event({ links: [runbook, run(1)] }));
    for (let n = 2; n <= 8; n++) row = nextOf(apply(row, event({ links: [run(n)] })));
    expect(row.links).toEqual([runbook, run(4), run(5), run(6), run(7), run(8)]);
  });

  it("never drops a link the delivery carries, however many of one kind it carries", () => {
    const doc = (n: number) => ({ kind: "runbook" as const, url: `https://wiki.example/doc/${n}` });
    const seven = [1, 2, 3, 4, 5, 6, 7].map(doc);
    const row = nextOf(apply(stored(event({ links: [doc(0)] })), event({ links: seven })));
    expect(row.links.filter((link) => link.kind === "runbook")).toEqual(seven);
  });

  it("keeps the raw payload of the newest delivery", () => {
    const row = stored(event());
    expect(
      nextOf(apply(row, event({ description: "b" }), context({ rawPayloadId: "{}" }))).rawPayloadId,
    ).toBe("{}");
  });
});

describe("planAlertChange: data comparison", () => {
  it("counts the same labels in another key order as unchanged", () => {
    const row = stored(event({ labels: { alertname: "DiskFull", severity: "critical" } }));
    // The store hands jsonb back in its own key order.
    const fromStore = { ...row, labels: { severity: "critical", alertname: "DiskFull" } };
    const repeat = event({ labels: { alertname: "DiskFull", severity: "critical" }, source_event: "repeat" });
    expect(apply(fromStore, repeat, context({ eventHash: "h-other" })).outcome).toBe("unchanged");
    const changed = event({ labels: { alertname: "DiskFull", severity: "warning" }, source_event: "repeat" });
    expect(apply(fromStore, changed, context({ eventHash: "h-changed" })).outcome).toBe("updated");
  });
});

describe("planAlertChange: events in any order (alert-sources.md 1.10, the timeline)", () => {
  const at = (time: string) => `2024-05-14T${time}:00.000Z`;
  const firing = (startsAt: string): AlertEvent => event({ triggered_at: at(startsAt) });
  const resolvedEvent = (startsAt: string | null, endsAt: string): AlertEvent =>
    event({
      status: "resolved",
      source_event: "resolved",
      triggered_at: startsAt === null ? null : at(startsAt),
      resolved_at: at(endsAt),
    });

  /** Creates the alert from the first event and applies the others in turn, as the ingest does. */
  function deliverAll(events: AlertEvent[]): { row: AlertRow; outcomes: string[] } {
    const [first, ...rest] = events;
    if (!first) throw new Error("no events");
    let row = stored(first);
    const outcomes = ["created"];
    for (const next of rest) {
      const plan = apply(row, next);
      outcomes.push(plan.outcome);
      row = plan.next ?? row;
    }
    return { row, outcomes };
  }

  /** What the alert shows of its episodes. */
  function shown(row: AlertRow) {
    return {
      status: row.status,
      triggered_at: row.triggeredAt.toISOString(),
      resolved_at: row.resolvedAt?.toISOString() ?? null,
      refire_count: row.refireCount,
      last_resolved_at: row.lastResolvedAt?.toISOString() ?? null,
    };
  }

  function permutations<T>(items: T[]): T[][] {
    if (items.length <= 1) return [items];
    return items.flatMap((item, index) =>
      permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
    );
  }

  it("re-opens nothing when an episode's firing arrives after its resolve (the delivery-order regression)", () => {
    const { row, outcomes } = deliverAll([
      resolvedEvent("00:10", "00:20"),
      resolvedEvent("01:10", "01:20"),
      firing("01:10"),
    ]);
    // The second resolve is a later episode of an already resolved alert: its start and end are
    // recorded, and its start, after the first resolve, makes it a re-fire. Its firing, delivered
    // last, starts before that episode's recorded resolve: it is that episode's, and re-opens nothing.
    expect(outcomes).toEqual(["created", "updated", "stale"]);
    expect(shown(row)).toEqual({
      status: "resolved",
      triggered_at: at("01:10"),
      resolved_at: at("01:20"),
      refire_count: 1,
      last_resolved_at: at("00:20"),
    });
  });

  it("re-fires a resolved alert for a firing that starts after the last resolve", () => {
    const { row, outcomes } = deliverAll([
      resolvedEvent("00:10", "00:20"),
      resolvedEvent("01:10", "01:20"),
      firing("01:21"),
    ]);
    expect(outcomes).toEqual(["created", "updated", "refired"]);
    expect(shown(row)).toEqual({
      status: "active",
      triggered_at: at("01:21"),
      resolved_at: null,
      refire_count: 2,
      last_resolved_at: at("01:20"),
    });
  });

  it("takes a firing at the very instant of the recorded resolve as the resolved episode's", () => {
    // In time order it came first (an episode starts before it ends): a later trigger time of the
    // episode, which the resolve then ended.
    const { row, outcomes } = deliverAll([resolvedEvent("00:10", "00:20"), firing("00:20")]);
    expect(outcomes).toEqual(["created", "updated"]);
    expect(shown(row)).toEqual({
      status: "resolved",
      triggered_at: at("00:20"),
      resolved_at: at("00:20"),
      refire_count: 0,
      last_resolved_at: null,
    });
  });

  it("moves a resolved alert's resolve time forward on a later resolve of the same episode", () => {
    const { row, outcomes } = deliverAll([resolvedEvent("00:10", "00:20"), resolvedEvent("00:10", "00:30")]);
    expect(outcomes).toEqual(["created", "updated"]);
    expect(shown(row)).toEqual({
      status: "resolved",
      triggered_at: at("00:10"),
      resolved_at: at("00:30"),
      refire_count: 0,
      last_resolved_at: null,
    });
  });

  it("splits a resolved period when a firing inside it arrives late", () => {
    // Resolved at 00:20 and again (no start given) at 00:40; a firing at 00:30 arrives last. In
    // time order it re-fired the alert between the two resolves.
    const { row, outcomes } = deliverAll([
      firing("00:10"),
      resolvedEvent(null, "00:20"),
      resolvedEvent(null, "00:40"),
      firing("00:30"),
    ]);
    expect(outcomes).toEqual(["created", "resolved", "updated", "updated"]);
    expect(shown(row)).toEqual({
      status: "resolved",
      triggered_at: at("00:30"),
      resolved_at: at("00:40"),
      refire_count: 1,
      last_resolved_at: at("00:20"),
    });
  });

  // Each set is one alert's events, with a re-notification or two. Every order of delivery must
  // give what the set gives in time order, written out by hand.
  const sets: { name: string; events: AlertEvent[]; expected: ReturnType<typeof shown> }[] = [
    {
      name: "two resolved episodes and a third still firing",
      events: [
        firing("00:10"),
        firing("00:10"),
        resolvedEvent("00:10", "00:20"),
        firing("01:10"),
        resolvedEvent("01:10", "01:20"),
        firing("02:10"),
      ],
      expected: {
        status: "active",
        triggered_at: at("02:10"),
        resolved_at: null,
        refire_count: 2,
        last_resolved_at: at("01:20"),
      },
    },
    {
      name: "three resolved episodes, one known only by its resolve",
      events: [
        resolvedEvent("00:10", "00:20"),
        resolvedEvent("01:10", "01:20"),
        firing("02:10"),
        firing("02:10"),
        resolvedEvent("02:10", "02:20"),
      ],
      expected: {
        status: "resolved",
        triggered_at: at("02:10"),
        resolved_at: at("02:20"),
        refire_count: 2,
        last_resolved_at: at("01:20"),
      },
    },
    {
      name: "resolves that carry no start (CloudWatch, Datadog)",
      events: [
        firing("00:10"),
        resolvedEvent(null, "00:20"),
        firing("00:30"),
        resolvedEvent(null, "00:40"),
        firing("00:50"),
        firing("00:50"),
      ],
      expected: {
        status: "active",
        triggered_at: at("00:50"),
        resolved_at: null,
        refire_count: 2,
        last_resolved_at: at("00:40"),
      },
    },
  ];
  for (const { name, events, expected } of sets) {
    it(`gives the time-order state in every delivery order: ${name}`, () => {
      const orders = permutations(events.map((_, index) => index));
      expect(orders.length).toBeGreaterThanOrEqual(120);
      for (const order of orders) {
        const { row } = deliverAll(order.map((index) => events[index] as AlertEvent));
        expect({ order, ...shown(row) }).toEqual({ order, ...expected });
      }
    });
  }

  it("applies events without their source time in delivery order, after every known point", () => {
    // The source dated the resolve after Vigil's clock (RECEIVED); a firing without a time that
    // arrives next still comes after it, just after the resolve rather than at the receive time.
    const ahead = "2024-05-14T12:30:00.000Z";
    const resolved = nextOf(apply(stored(event()), event({ status: "resolved", resolved_at: ahead })));
    const plan = apply(resolved, event({ triggered_at: null }));
    expect(plan.outcome).toBe("refired");
    expect(nextOf(plan)).toMatchObject({
      status: "active",
      refireCount: 1,
      lastResolvedAt: new Date(ahead),
      triggeredAt: new Date(Date.parse(ahead) + 1),
    });
    // A resolve without a time on a resolved alert, and a firing without one on an active alert,
    // repeat the status: they move no time.
    const repeatResolve = nextOf(apply(resolved, event({ status: "resolved", resolved_at: null })));
    expect(repeatResolve).toMatchObject({ resolvedAt: new Date(ahead), refireCount: 0 });
    const active = stored(event());
    expect(nextOf(apply(active, event({ triggered_at: null }))).triggeredAt).toEqual(new Date(T0));
  });

  it(`keeps the newest ${TIMELINE_POINTS} points: an event older than all of them is stale`, () => {
    // 40 episodes of 2 points each, delivered in order.
    const hour = 3_600_000;
    const base = Date.parse(T0);
    const episode = (n: number) => ({
      start: new Date(base + n * hour).toISOString(),
      end: new Date(base + n * hour + hour / 2).toISOString(),
    });
    let row = stored(event({ triggered_at: episode(0).start }));
    for (let n = 0; n < 40; n++) {
      const { start, end } = episode(n);
      if (n > 0) row = nextOf(apply(row, event({ triggered_at: start })));
      row = nextOf(apply(row, event({ status: "resolved", triggered_at: start, resolved_at: end })));
    }
    expect(row.timeline?.points).toHaveLength(TIMELINE_POINTS);
    expect(row.timeline?.trimmed).toBe(true);
    expect(shown(row)).toMatchObject({ status: "resolved", refire_count: 39 });
    // The first episodes' points were dropped: their events are stale and invent no re-fire.
    const oldest = apply(
      row,
      event({ status: "resolved", triggered_at: episode(1).start, resolved_at: episode(1).end }),
    );
    expect(oldest.outcome).toBe("stale");
    expect(nextOf(oldest).refireCount).toBe(39);
    // Within the kept points, late events are still placed exactly: a later trigger time of the
    // 31st episode, then a resolve between its two trigger times, which splits it in two.
    const minutes = (n: number) => new Date(Date.parse(episode(30).start) + n * 60_000).toISOString();
    const retrigger = apply(row, event({ triggered_at: minutes(10) }));
    expect(retrigger.outcome).toBe("stale");
    const split = apply(
      nextOf(retrigger),
      event({ status: "resolved", triggered_at: null, resolved_at: minutes(5) }),
    );
    expect(split.outcome).toBe("updated");
    expect(shown(nextOf(split))).toEqual({ ...shown(row), refire_count: 40 });
  });

  it("builds the timeline of an alert stored before timelines from the times it shows", () => {
    const legacy: AlertRow = {
      ...stored(event({ triggered_at: T2 })),
      refireCount: 2,
      lastResolvedAt: new Date(T1),
      timeline: null,
    };
    // Earlier than anything it shows: stale, as before.
    const late = apply(legacy, event({ status: "resolved", triggered_at: T0, resolved_at: T1 }));
    expect(late.outcome).toBe("stale");
    expect(nextOf(late)).toMatchObject({ status: "active", refireCount: 2, lastResolvedAt: new Date(T1) });
    // Later events go on from what it shows, and keep its count.
    let row = nextOf(apply(legacy, event({ status: "resolved", triggered_at: T2, resolved_at: T3 })));
    row = nextOf(apply(row, event({ triggered_at: "2024-05-14T11:45:00.000Z" })));
    expect(shown(row)).toEqual({
      status: "active",
      triggered_at: "2024-05-14T11:45:00.000Z",
      resolved_at: null,
      refire_count: 3,
      last_resolved_at: T3,
    });
  });
});
