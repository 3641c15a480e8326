import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseOpsgenie } from "./opsgenie.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("opsgenie", name);
  return parseOpsgenie({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseOpsgenie({ body: JSON.stringify(payload), headers: {}, options });
}

// The docs/Zulip alert 052652ac-... as every fixture action but Create-with-priority shows it.
const DOCS_ALERT_ID = "052652ac-5d1c-464a-812a-7dd18bbfba8c";
// createdAt 1420452191104 (epoch ms).
const DOCS_CREATED_AT = "2015-01-05T10:03:11.104Z";

const NO_SEVERITY = {
  source_severity: "",
  severity: "Medium",
  display_priority: 3,
  severity_mapping: "missing",
} as const;

// Expected events below were written by hand from the fixture files and section 6 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "docs-create.json": [
    {
      external_uid: DOCS_ALERT_ID,
      status: "active",
      ignore_reason: null,
      // " test alert", trimmed.
      title: "test alert",
      title_is_fallback: false,
      description: "",
      ...NO_SEVERITY,
      triggered_at: DOCS_CREATED_AT,
      resolved_at: null,
      // entity "" gives no label; teams are joined.
      labels: { tag1: "", tag2: "", team: "team1,team2" },
      links: [],
      is_test: false,
      source_event: "Create",
      unmapped: [],
    },
  ],

  "create-with-priority.json": [
    {
      external_uid: "ec03dad6-62c8-4c94-b38b-d88f398e900f",
      status: "active",
      ignore_reason: null,
      title: "another alert",
      title_is_fallback: false,
      description: "",
      // priority 3 (a number): priority digits.
      source_severity: "3",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      // createdAt 1502709956288.
      triggered_at: "2017-08-14T11:25:56.288Z",
      resolved_at: null,
      // An empty teams list gives no team label.
      labels: { entity: "Server", vip: "" },
      links: [],
      is_test: false,
      source_event: "Create",
      unmapped: [],
    },
  ],

  "acknowledge.json": [
    {
      external_uid: DOCS_ALERT_ID,
      status: "unchanged",
      ignore_reason: null,
      title: "test alert",
      title_is_fallback: false,
      description: "",
      ...NO_SEVERITY,
      triggered_at: DOCS_CREATED_AT,
      resolved_at: null,
      labels: { tag1: "", tag2: "" },
      links: [],
      is_test: false,
      source_event: "Acknowledge",
      // "every other action" is a listed value, not an unmapped one.
      unmapped: [],
    },
  ],

  "addnote.json": [
    {
      external_uid: DOCS_ALERT_ID,
      status: "unchanged",
      ignore_reason: null,
      title: "test alert",
      title_is_fallback: false,
      description: "",
      ...NO_SEVERITY,
      triggered_at: DOCS_CREATED_AT,
      resolved_at: null,
      labels: { tag1: "", tag2: "" },
      links: [],
      is_test: false,
      source_event: "AddNote",
      unmapped: [],
    },
  ],

  "close.json": [
    {
      external_uid: DOCS_ALERT_ID,
      status: "resolved",
      ignore_reason: null,
      title: "test alert",
      title_is_fallback: false,
      description: "",
      ...NO_SEVERITY,
      triggered_at: DOCS_CREATED_AT,
      // updatedAt 1420452374669001603 ns.
      resolved_at: "2015-01-05T10:06:14.669Z",
      labels: {},
      links: [],
      is_test: false,
      source_event: "Close",
      unmapped: [],
    },
  ],
};

describe("parseOpsgenie: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("opsgenie", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    const result = parseFixture(name);
    expect(result).toEqual({ ok: true, events: expected });
    expect(result.ok && "note" in result).toBe(false);
  });
});

// A minimal action body for the variants no fixture shows.
function alertAction(
  action: string,
  alert: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  return {
    action,
    alert: {
      alertId: "a1b2c3d4-0000-4000-8000-000000000001",
      message: "Disk full on db-1",
      tags: ["env:prod", "team=payments", "vip"],
      entity: "db-1",
      createdAt: 1715681551512,
      updatedAt: 1715685151512000000,
      ...alert,
    },
    source: { name: "web", type: "API" },
    integrationId: "37c8f316-17c6-49d7-899b-9c7e540c048d",
    integrationName: "Vigil",
    ...extra,
  };
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

describe("parseOpsgenie: documented variants", () => {
  it("builds a whole event from a Create with priority P1 and a description", () => {
    expect(
      onlyEvent(alertAction("Create", { priority: "P1", description: "  / is 98% full  ", teams: ["ops"] })),
    ).toEqual({
      external_uid: "a1b2c3d4-0000-4000-8000-000000000001",
      status: "active",
      ignore_reason: null,
      title: "Disk full on db-1",
      title_is_fallback: false,
      description: "/ is 98% full",
      source_severity: "P1",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.512Z",
      resolved_at: null,
      labels: { entity: "db-1", env: "prod", team: "payments,ops", vip: "" },
      links: [],
      is_test: false,
      source_event: "Create",
      unmapped: [],
    });
  });

  it("takes the uid from an Escalate whose alert holds only alertId", () => {
    const escalate = {
      action: "Escalate",
      alert: { alertId: "e5c4a1a7-1111-4222-8333-444455556666" },
      escalationId: "7c8b2a4e-9d1f-4e2a-b3c4-d5e6f7a8b9c0",
      escalationName: "Payments_escalation",
      escalationTime: 1715681551512,
      escalationNotify: { type: "team", name: "payments" },
      source: { name: "", type: "system" },
      integrationId: "37c8f316-17c6-49d7-899b-9c7e540c048d",
      integrationName: "Vigil",
    };
    expect(onlyEvent(escalate)).toEqual({
      external_uid: "e5c4a1a7-1111-4222-8333-444455556666",
      status: "unchanged",
      ignore_reason: null,
      title: "opsgenie alert e5c4a1a7-1111-4222-8333-444455556666",
      title_is_fallback: true,
      description: "",
      ...NO_SEVERITY,
      // Escalate carries no alert time; escalationTime is not the trigger time.
      triggered_at: null,
      resolved_at: null,
      labels: {},
      links: [],
      is_test: false,
      source_event: "Escalate",
      unmapped: [],
    });
  });

  it.each(["Snooze", "Delete"])("ignores the alert on %s", (action) => {
    const extra = action === "Snooze" ? { snoozeEndDate: 1715692351512 } : {};
    expect(onlyEvent(alertAction(action, {}, extra))).toMatchObject({
      status: "ignored",
      ignore_reason: `opsgenie: ${action}`,
      source_event: action,
      resolved_at: null,
      unmapped: [],
    });
  });

  it("makes every other action unchanged, without an unmapped entry", () => {
    for (const action of [
      "AddTags",
      "RemoveTags",
      "AddRecipient",
      "AddTeam",
      "AssignOwnership",
      "TakeOwnership",
      "UnAcknowledge",
      "EscalateNext",
      "AddResponder",
      "UpdatePriority",
      "UpdateMessage",
      "UpdateDescription",
      "AddDetails",
      "RemoveDetails",
      "Restart web tier",
    ]) {
      expect(onlyEvent(alertAction(action))).toMatchObject({
        status: "unchanged",
        ignore_reason: null,
        source_event: action,
        resolved_at: null,
        unmapped: [],
      });
    }
  });

  it("reads the alert's tags on AddTags, not addedTags", () => {
    const event = onlyEvent(
      alertAction("AddTags", { tags: ["env:prod", "sev:high"] }, { addedTags: "sev:high" }),
    );
    expect(event.labels).toEqual({ entity: "db-1", env: "prod", sev: "high" });
  });

  it("ingests TestAction as an active test notification with bucket info", () => {
    expect(onlyEvent(alertAction("TestAction", { priority: "P1" }))).toMatchObject({
      status: "active",
      source_event: "TestAction",
      is_test: true,
      source_severity: "P1",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      labels: { vigil_test: "true", entity: "db-1", env: "prod", team: "payments", vip: "" },
    });
  });

  it("matches actions case-insensitively after trimming", () => {
    expect(onlyEvent(alertAction(" close "))).toMatchObject({
      status: "resolved",
      source_event: "close",
      resolved_at: "2024-05-14T11:12:31.512Z",
    });
    expect(onlyEvent(alertAction("SNOOZE"))).toMatchObject({
      status: "ignored",
      ignore_reason: "opsgenie: SNOOZE",
    });
    expect(onlyEvent(alertAction("testaction"))).toMatchObject({ status: "active", is_test: true });
  });

  it("marks a body without an action unchanged and unmapped", () => {
    const { action: _action, ...noAction } = alertAction("Create");
    expect(onlyEvent(noAction)).toMatchObject({
      status: "unchanged",
      source_event: "",
      unmapped: [{ field: "status", value: "" }],
    });
  });

  it.each([
    ["P1", "Critical", 1],
    ["p2", "High", 2],
    [" P3 ", "Medium", 3],
    ["P4", "Low", 4],
    ["P5", "info", 5],
    [1, "Critical", 1],
    [2, "High", 2],
    [4, "Low", 4],
    [5, "info", 5],
  ] as const)("maps priority %j", (priority, severity, displayPriority) => {
    expect(onlyEvent(alertAction("Create", { priority }))).toMatchObject({
      source_severity: String(priority).trim(),
      severity,
      display_priority: displayPriority,
      severity_mapping: "mapped",
      unmapped: [],
    });
  });

  it("marks an unknown priority unmapped and never reads a P1 tag as the priority", () => {
    expect(onlyEvent(alertAction("Create", { priority: "P7" }))).toMatchObject({
      source_severity: "P7",
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "P7" }],
    });
    expect(onlyEvent(alertAction("Create", { tags: ["P1"] }))).toMatchObject({
      ...NO_SEVERITY,
      labels: { entity: "db-1", P1: "" },
    });
  });

  it("applies the registration's severity overrides", () => {
    expect(
      onlyEvent(alertAction("Create", { priority: "P3" }), { severityOverrides: { p3: "High" } }),
    ).toMatchObject({ source_severity: "P3", severity: "High", display_priority: 2 });
  });

  it("sets resolved_at only on Close", () => {
    expect(onlyEvent(alertAction("Acknowledge")).resolved_at).toBeNull();
    expect(onlyEvent(alertAction("Close")).resolved_at).toBe("2024-05-14T11:12:31.512Z");
  });

  it("reads teams as a list and skips an empty entity", () => {
    expect(onlyEvent(alertAction("Create", { entity: "  ", teams: ["a", null, " b ", ""] })).labels).toEqual({
      env: "prod",
      team: "payments,a,b",
      vip: "",
    });
  });

  it("hashes an alertId that is not path-safe", () => {
    // H("alert/42") computed independently with python3 hashlib.
    expect(onlyEvent(alertAction("Create", { alertId: "alert/42" })).external_uid).toBe(
      "f69f59aca1890de3894b6230a1ea4ed3",
    );
  });

  it("falls back to the uid when the message is empty", () => {
    expect(onlyEvent(alertAction("Create", { message: " \n " }))).toMatchObject({
      title: "opsgenie alert a1b2c3d4-0000-4000-8000-000000000001",
      title_is_fallback: true,
    });
  });
});

describe("parseOpsgenie: bad input", () => {
  itRejectsUnreadableBodies(parseOpsgenie, {
    empty: "  ",
    notJson: [
      ["plain text", "Opsgenie says hi"],
      ["truncated JSON", '{"action":"Create","alert":{"alertId":"052652ac'],
      ["single quotes", "{'action': 'Create'}"],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [alertAction("Create")]],
    ["null", null],
    ["a string", "Create"],
    ["alert null", { action: "Create", alert: null }],
    ["alert as a string", { action: "Create", alert: "052652ac" }],
    ["a PagerDuty body", { event: { event_type: "incident.triggered", data: { id: "Q1" } } }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error: "not an Opsgenie webhook: expected a JSON object with an alert object",
    });
  });

  it.each([
    ["absent", undefined],
    ["empty", ""],
    ["blank", "  "],
    ["null", null],
    ["an object", { id: "x" }],
  ])("rejects an alertId that is %s", (_name, alertId) => {
    expect(parseJson(alertAction("Create", { alertId }))).toEqual({
      ok: false,
      error: "not an Opsgenie webhook: alert.alertId is missing",
    });
  });
});
