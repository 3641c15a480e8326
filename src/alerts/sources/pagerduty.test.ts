import { describe, expect, it } from "vitest";
import { deliverAlerts, readAlert, registerTrigger } from "../../../test/alerts.ts";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { describeEachEngine } from "../../../test/harness.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parsePagerduty } from "./pagerduty.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("pagerduty", name);
  return parsePagerduty({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parsePagerduty({ body: JSON.stringify(payload), headers: {}, options });
}

const HIGH_URGENCY = {
  source_severity: "high",
  severity: "High",
  display_priority: 2,
  severity_mapping: "mapped",
} as const;

const PIG208_LABELS = { service: "pig208", escalation_policy: "Default", urgency: "high" };

// The Zulip fixtures carry no created_at, so triggered_at falls back to event.occurred_at.
function pig208Event(
  uid: string,
  title: string,
  status: "active" | "unchanged" | "resolved",
  occurredAt: string,
  eventType: string,
): AlertEvent {
  return {
    external_uid: uid,
    status,
    ignore_reason: null,
    title,
    title_is_fallback: false,
    description: "",
    ...HIGH_URGENCY,
    // A resolve's occurred_at is when it ended, not when it began; the incident has no created_at.
    triggered_at: status === "resolved" ? null : occurredAt,
    resolved_at: status === "resolved" ? occurredAt : null,
    // teams is [] there: no team label.
    labels: PIG208_LABELS,
    links: [{ kind: "source", url: `https://pig208.pagerduty.com/incidents/${uid}` }],
    is_test: false,
    source_event: eventType,
    unmapped: [],
  };
}

// Expected events below were written by hand from the fixture files and section 5 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "docs-incident-priority-updated.json": [
    {
      external_uid: "PGR0VU2",
      status: "unchanged",
      ignore_reason: null,
      title: "A little bump in the road",
      title_is_fallback: false,
      description: "",
      source_severity: "P1",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      // reopened_at wins over created_at.
      triggered_at: "2020-10-02T18:45:22.000Z",
      resolved_at: null,
      labels: { service: "API Service", escalation_policy: "Default", team: "Engineering", urgency: "high" },
      links: [{ kind: "source", url: "https://acme.pagerduty.com/incidents/PGR0VU2" }],
      is_test: false,
      source_event: "incident.priority_updated",
      unmapped: [],
    },
  ],
  "incident-triggered.json": [
    pig208Event("PFQZPSY", "Test Incident 3", "active", "2021-06-04T13:35:29.781Z", "incident.triggered"),
  ],
  "incident-acknowledged.json": [
    pig208Event("PQ1K5C8", "Test Incident", "unchanged", "2021-06-04T13:55:30.394Z", "incident.acknowledged"),
  ],
  "incident-resolved.json": [
    pig208Event("PCPZE64", "Test Incident", "resolved", "2021-06-04T13:16:53.816Z", "incident.resolved"),
  ],
  // A note: data is an incident_note; the incident reference gives uid, title and link, and the
  // note's content never becomes the description.
  "incident-annotated-note.json": [
    {
      external_uid: "Q3B15VLMF3ASBD",
      status: "unchanged",
      ignore_reason: null,
      title: "Critical: Checkout API High Latency",
      title_is_fallback: false,
      description: "",
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
      triggered_at: "2026-04-01T02:18:59.674Z",
      resolved_at: null,
      labels: {},
      links: [{ kind: "source", url: "https://harsh0303.pagerduty.com/incidents/Q3B15VLMF3ASBD" }],
      is_test: false,
      source_event: "incident.annotated",
      unmapped: [],
    },
  ],
};

describe("parsePagerduty: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("pagerduty", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// A minimal V3 incident event for the variants no fixture shows.
function incidentEvent(
  eventType: string,
  data: Record<string, unknown> = {},
  event: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    event: {
      id: "01ABC",
      event_type: eventType,
      resource_type: "incident",
      occurred_at: "2024-05-14T10:20:00.000Z",
      agent: null,
      client: null,
      data: {
        id: "PINC001",
        type: "incident",
        html_url: "https://acme.pagerduty.com/incidents/PINC001",
        status: "triggered",
        title: "Checkout latency",
        created_at: "2024-05-14T10:12:31Z",
        urgency: "low",
        ...data,
      },
      ...event,
    },
  };
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

describe("parsePagerduty: V3 variants", () => {
  it("builds a whole event from a minimal incident with created_at and automation as agent", () => {
    expect(onlyEvent(incidentEvent("incident.triggered"))).toEqual({
      external_uid: "PINC001",
      status: "active",
      ignore_reason: null,
      title: "Checkout latency",
      title_is_fallback: false,
      description: "",
      source_severity: "low",
      severity: "Low",
      display_priority: 4,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: null,
      labels: { urgency: "low" },
      links: [{ kind: "source", url: "https://acme.pagerduty.com/incidents/PINC001" }],
      is_test: false,
      source_event: "incident.triggered",
      unmapped: [],
    });
  });

  it("treats a reopened incident as a re-fire from reopened_at", () => {
    expect(
      onlyEvent(incidentEvent("incident.reopened", { reopened_at: "2024-05-14T11:00:00Z" })),
    ).toMatchObject({ status: "active", triggered_at: "2024-05-14T11:00:00.000Z" });
  });

  it("dates a reopen without reopened_at by occurred_at, never by the incident's created_at", () => {
    for (const reopenedAt of [null, undefined, ""]) {
      expect(
        onlyEvent(
          incidentEvent(
            "incident.reopened",
            { created_at: "2024-05-14T10:00:00Z", reopened_at: reopenedAt },
            { occurred_at: "2024-05-14T11:00:00Z" },
          ),
        ),
      ).toMatchObject({ status: "active", triggered_at: "2024-05-14T11:00:00.000Z", resolved_at: null });
    }
    // Other events of a reopened incident keep the chain: reopened_at, else created_at.
    expect(
      onlyEvent(incidentEvent("incident.acknowledged", { reopened_at: "2024-05-14T11:00:00Z" })).triggered_at,
    ).toBe("2024-05-14T11:00:00.000Z");
  });

  it("takes resolved_at from occurred_at and keeps triggered_at from created_at", () => {
    expect(onlyEvent(incidentEvent("incident.resolved", { status: "resolved" }))).toMatchObject({
      status: "resolved",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: "2024-05-14T10:20:00.000Z",
    });
  });

  it("gives a resolve without created_at no start: its occurred_at is when it ended", () => {
    for (const createdAt of [null, undefined, ""]) {
      expect(
        onlyEvent(
          incidentEvent(
            "incident.resolved",
            { status: "resolved", created_at: createdAt },
            { occurred_at: "2024-05-14T10:20:00Z" },
          ),
        ),
      ).toMatchObject({ status: "resolved", triggered_at: null, resolved_at: "2024-05-14T10:20:00.000Z" });
    }
  });

  it.each([
    "incident.acknowledged",
    "incident.unacknowledged",
    "incident.priority_updated",
    "incident.escalated",
    "incident.delegated",
    "incident.reassigned",
    "incident.annotated",
    "incident.responder.added",
    "incident.responder.replied",
    "incident.status_update_published",
    "incident.workflow.started",
    "INCIDENT.Triggered_Later",
  ])("makes %s unchanged without recording it as unmapped", (eventType) => {
    expect(onlyEvent(incidentEvent(eventType))).toMatchObject({
      status: "unchanged",
      source_event: eventType,
      unmapped: [],
    });
  });

  it("matches event types case-insensitively", () => {
    expect(onlyEvent(incidentEvent(" Incident.Resolved "))).toMatchObject({
      status: "resolved",
      source_event: "Incident.Resolved",
    });
  });

  it("makes an event type outside incident.* unchanged and unmapped", () => {
    expect(onlyEvent(incidentEvent("alert.created"))).toMatchObject({
      status: "unchanged",
      unmapped: [{ field: "status", value: "alert.created" }],
    });
  });

  it.each([
    [
      "a status update",
      {
        id: "PSTATUS",
        type: "incident_status_update",
        message: "We are investigating",
        incident: {
          id: "PINC002",
          type: "incident_reference",
          html_url: "https://acme.pagerduty.com/incidents/PINC002",
          summary: "Payments down",
        },
      },
      "incident.status_update_published",
    ],
    [
      "a responder request",
      {
        type: "incident_responder",
        user: { id: "PUSER", type: "user_reference" },
        incident: {
          id: "PINC002",
          type: "incident_reference",
          html_url: "https://acme.pagerduty.com/incidents/PINC002",
          summary: "Payments down",
        },
        message: "Please help",
        state: "pending",
      },
      "incident.responder.added",
    ],
  ])("reads the incident reference of %s", (_name, data, eventType) => {
    expect(
      onlyEvent({
        event: {
          id: "01DEF",
          event_type: eventType,
          resource_type: "incident",
          occurred_at: "2024-05-14T10:30:00.000Z",
          agent: null,
          client: null,
          data,
        },
      }),
    ).toEqual({
      external_uid: "PINC002",
      status: "unchanged",
      ignore_reason: null,
      title: "Payments down",
      title_is_fallback: false,
      description: "",
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
      triggered_at: "2024-05-14T10:30:00.000Z",
      resolved_at: null,
      labels: {},
      links: [{ kind: "source", url: "https://acme.pagerduty.com/incidents/PINC002" }],
      is_test: false,
      source_event: eventType,
      unmapped: [],
    });
  });

  it("maps priorities through the generic table and leaves account-specific names unmapped", () => {
    expect(onlyEvent(incidentEvent("incident.triggered", { priority: { summary: "P3" } }))).toMatchObject({
      source_severity: "P3",
      severity: "Medium",
      severity_mapping: "mapped",
    });
    expect(onlyEvent(incidentEvent("incident.triggered", { priority: { summary: "SEV-1" } }))).toMatchObject({
      source_severity: "SEV-1",
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "SEV-1" }],
    });
    expect(
      onlyEvent(incidentEvent("incident.triggered", { priority: { summary: "SEV-1" } }), {
        severityOverrides: { "sev-1": "Critical" },
      }),
    ).toMatchObject({ severity: "Critical", severity_mapping: "mapped" });
  });

  it("is missing a severity without priority and urgency", () => {
    expect(onlyEvent(incidentEvent("incident.triggered", { priority: null, urgency: null }))).toMatchObject({
      source_severity: "",
      severity_mapping: "missing",
      labels: {},
    });
  });

  it("joins team names and skips teams without one", () => {
    expect(
      onlyEvent(
        incidentEvent("incident.triggered", {
          teams: [{ summary: "Payments" }, { id: "PX" }, { summary: "SRE" }],
          service: { summary: "Checkout" },
        }),
      ).labels,
    ).toEqual({ service: "Checkout", team: "Payments,SRE", urgency: "low" });
  });

  it("hashes an incident id that is not path-safe", () => {
    expect(onlyEvent(incidentEvent("incident.triggered", { id: "P/1" })).external_uid).toBe(
      "3fe6128645704271e31656f3475eea62",
    );
  });

  it("reads an incident event without resource_type from its event type", () => {
    expect(onlyEvent(incidentEvent("incident.triggered", {}, { resource_type: undefined })).status).toBe(
      "active",
    );
  });

  it("falls back to the uid title when there is no title", () => {
    expect(onlyEvent(incidentEvent("incident.triggered", { title: "" }))).toMatchObject({
      title: "pagerduty alert PINC001",
      title_is_fallback: true,
    });
  });
});

describe("parsePagerduty: messages without an alert", () => {
  it("yields no event for pagey.ping", () => {
    expect(
      parseJson({
        event: {
          id: "01C0000000000000000000",
          event_type: "pagey.ping",
          resource_type: "pagey",
          occurred_at: "2024-05-14T10:00:00.000Z",
          agent: null,
          client: null,
          data: { message: "Hello from your friend Pagey!", type: "ping" },
        },
      }),
    ).toEqual({ ok: true, events: [], note: "PagerDuty pagey.ping carries no incident: no alert event" });
  });

  it("yields no event for service events", () => {
    expect(
      parseJson({
        event: {
          id: "01D",
          event_type: "service.updated",
          resource_type: "service",
          occurred_at: "2024-05-14T10:00:00.000Z",
          data: { id: "PSVC", type: "service", name: "Checkout" },
        },
      }),
    ).toEqual({
      ok: true,
      events: [],
      note: "PagerDuty service.updated carries no incident: no alert event",
    });
  });
});

// A deprecated V2 message, in the shape of PagerDuty's V2 webhook documentation.
function v2Message(event: string, incident: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event,
    id: `msg-${event}`,
    created_on: "2017-09-26T15:30:00Z",
    incident: {
      id: "P2A6J96",
      type: "incident",
      incident_number: 1,
      title: "The server is on fire.",
      description: "The server is on fire.",
      created_at: "2017-09-26T15:14:36Z",
      status: "triggered",
      html_url: "https://webdemo.pagerduty.com/incidents/P2A6J96",
      service: { id: "PYXIW5O", type: "service_reference", summary: "My Application Service" },
      escalation_policy: {
        id: "PUS0KTE",
        type: "escalation_policy_reference",
        summary: "Another Escalation Policy",
      },
      teams: [],
      priority: { id: "P53ZZH5", type: "priority", summary: "P2" },
      urgency: "high",
      ...incident,
    },
    log_entries: [],
  };
}

describe("parsePagerduty: deprecated V2 body", () => {
  it("yields one event per message with the same field rules", () => {
    const common = {
      external_uid: "P2A6J96",
      ignore_reason: null,
      title: "The server is on fire.",
      title_is_fallback: false,
      description: "",
      source_severity: "P2",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2017-09-26T15:14:36.000Z",
      labels: {
        service: "My Application Service",
        escalation_policy: "Another Escalation Policy",
        urgency: "high",
      },
      links: [{ kind: "source", url: "https://webdemo.pagerduty.com/incidents/P2A6J96" }],
      is_test: false,
    } as const;
    expect(
      parseJson({
        messages: [
          v2Message("incident.trigger"),
          v2Message("incident.acknowledge"),
          v2Message("incident.resolve", { status: "resolved" }),
          v2Message("ping"),
        ],
      }),
    ).toEqual({
      ok: true,
      events: [
        { ...common, status: "active", resolved_at: null, source_event: "incident.trigger", unmapped: [] },
        {
          ...common,
          status: "unchanged",
          resolved_at: null,
          source_event: "incident.acknowledge",
          unmapped: [],
        },
        {
          ...common,
          status: "resolved",
          resolved_at: "2017-09-26T15:30:00.000Z",
          source_event: "incident.resolve",
          unmapped: [],
        },
        {
          ...common,
          status: "unchanged",
          resolved_at: null,
          source_event: "ping",
          unmapped: [{ field: "status", value: "ping" }],
        },
      ],
    });
  });

  it("reads the incident's created_on when it has no created_at", () => {
    const message = v2Message("incident.resolve", {
      status: "resolved",
      created_at: undefined,
      created_on: "2017-09-26T15:14:36Z",
    });
    expect(onlyEvent({ messages: [message] })).toMatchObject({
      status: "resolved",
      triggered_at: "2017-09-26T15:14:36.000Z",
      resolved_at: "2017-09-26T15:30:00.000Z",
    });
    // created_at wins when a message carries both.
    const both = v2Message("incident.trigger", { created_on: "2017-09-26T15:00:00Z" });
    expect(onlyEvent({ messages: [both] }).triggered_at).toBe("2017-09-26T15:14:36.000Z");
  });

  it("rejects a message without an incident id, naming its index", () => {
    expect(parseJson({ messages: [v2Message("incident.trigger"), { event: "incident.trigger" }] })).toEqual({
      ok: false,
      error: "not a PagerDuty V2 webhook: messages[1] has no incident with an id",
    });
  });
});

describe("parsePagerduty: bad input", () => {
  it("rejects an event without event_type or resource_type", () => {
    expect(parseJson({ event: { id: "01X", data: { id: "P1", type: "incident" } } })).toEqual({
      ok: false,
      error: "not a PagerDuty webhook: event has no event_type or resource_type",
    });
  });

  const notPagerduty = {
    ok: false,
    error:
      "not a PagerDuty webhook: expected a JSON object with an event object (V3) or a messages array (V2)",
  };

  itRejectsUnreadableBodies(parsePagerduty, {
    notJson: [
      ["plain text", "PagerDuty says hi"],
      ["truncated JSON", '{"event":{"id":"01BZ","event_type":"incident.triggered","data":{"id":"P'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [incidentEvent("incident.triggered")]],
    ["null", null],
    ["event as a string", { event: "incident.triggered" }],
    ["messages as an object", { messages: v2Message("incident.trigger") }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notPagerduty);
  });

  it.each([
    ["without data", { event: { event_type: "incident.triggered", resource_type: "incident" } }],
    [
      "whose data is neither an incident nor a reference",
      {
        event: {
          event_type: "incident.annotated",
          resource_type: "incident",
          data: { type: "incident_note" },
        },
      },
    ],
    [
      "whose incident has no id",
      { event: { event_type: "incident.triggered", resource_type: "incident", data: { type: "incident" } } },
    ],
  ])("rejects an incident event %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error: "not a PagerDuty incident event: event.data has no incident id (data.id or data.incident.id)",
    });
  });
});

describeEachEngine("PagerDuty incidents through the store", (harness) => {
  it("keeps the episode's start when its resolve has no created_at (as PagerDuty's own examples)", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const triggerPath = await registerTrigger(h, auth, { source: "pagerduty", integration: "no-created" });
    for (const [eventType, occurredAt] of [
      ["incident.triggered", "2024-05-14T10:00:00Z"],
      ["incident.resolved", "2024-05-14T10:10:00Z"],
    ] as const) {
      const body = incidentEvent(
        eventType,
        {
          id: "PNOCREATED",
          created_at: null,
          ...(eventType === "incident.resolved" && { status: "resolved" }),
        },
        { occurred_at: occurredAt },
      );
      await deliverAlerts(h, triggerPath, JSON.stringify(body));
    }
    const alert = await readAlert(h, auth, "PNOCREATED");
    expect([alert.status, alert.triggered_at, alert.resolved_at, alert.refire_count]).toEqual([
      "resolved",
      "2024-05-14T10:00:00.000Z",
      "2024-05-14T10:10:00.000Z",
      0,
    ]);
  });

  it("re-opens a resolved incident on incident.reopened without reopened_at", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const triggerPath = await registerTrigger(h, auth, { source: "pagerduty", integration: "reopen" });
    const deliver = async (eventType: string, occurredAt: string, data: Record<string, unknown> = {}) => {
      const body = incidentEvent(
        eventType,
        { id: "PREOPEN1", created_at: "2024-05-14T10:00:00Z", reopened_at: null, ...data },
        { occurred_at: occurredAt },
      );
      return (await deliverAlerts(h, triggerPath, JSON.stringify(body))).map((alert) => alert.outcome);
    };
    expect(await deliver("incident.triggered", "2024-05-14T10:00:00Z")).toEqual(["created"]);
    expect(await deliver("incident.resolved", "2024-05-14T10:10:00Z", { status: "resolved" })).toEqual([
      "resolved",
    ]);
    expect(await deliver("incident.reopened", "2024-05-14T11:00:00Z")).toEqual(["refired"]);
    const alert = await readAlert(h, auth, "PREOPEN1");
    expect({
      status: alert.status,
      triggered_at: alert.triggered_at,
      resolved_at: alert.resolved_at,
      refire_count: alert.refire_count,
      last_resolved_at: alert.last_resolved_at,
    }).toEqual({
      status: "active",
      triggered_at: "2024-05-14T11:00:00.000Z",
      resolved_at: null,
      refire_count: 1,
      last_resolved_at: "2024-05-14T10:10:00.000Z",
    });
  });
});
