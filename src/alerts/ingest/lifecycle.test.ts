// Unit tests of planAlertChange, one block per rule of alert-sources.md 1.10 and the AlertV1 field
// notes of the spec. Expectations are written from those texts; the events are built by hand.
import { describe, expect, it } from "vitest";
import type { AlertEvent } from "../sources/types.ts";
import { type AlertRow, type EventContext, planAlertChange } from "./lifecycle.ts";

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
      shortSummary: null,
      initialInvestigation: null,
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
      stormPending: false,
      ingestedVia: "push",
      rawPayloadId: '{"alerts":[]}',
      lastEventHash: "h-create",
      eventSeq: 0,
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
    const before: AlertRow = { ...row, ingestedVia: "pull", analysisStatus: "completed" };
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

  it("calls a change of data an update and a repeat without changes unchanged", () => {
    const row = stored(event());
    expect(apply(row, event({ description: "new text" })).outcome).toBe("updated");
    const repeat = apply(row, event());
    expect(repeat.outcome).toBe("unchanged");
    expect(repeat.history).toMatchObject({
      kind: "unchanged",
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

  it("treats a resolve older than the last status change as stale: nothing changes, history says so", () => {
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
      context({ eventHash: "late" }),
    );
    expect(plan.outcome).toBe("stale");
    const next = nextOf(plan);
    // Everything the alert shows stays; only the remembered event hash may move, so a retry of the
    // stale delivery is a duplicate.
    expect({ ...next, lastEventHash: row.lastEventHash, updatedAt: row.updatedAt }).toEqual(row);
    expect(plan.history).toEqual({
      kind: "stale",
      sourceEvent: "resolved",
      statusBefore: "active",
      statusAfter: "active",
      detail: expect.objectContaining({ event_time: T1 }),
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
