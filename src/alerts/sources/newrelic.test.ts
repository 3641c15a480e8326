import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseNewrelic } from "./newrelic.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("newrelic", name);
  return parseNewrelic({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseNewrelic({ body: JSON.stringify(payload), headers: {}, options });
}

const CRITICAL = {
  source_severity: "CRITICAL",
  severity: "Critical",
  display_priority: 1,
  severity_mapping: "mapped",
} as const;

// Expected events below were written by hand from the fixture files and section 10 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "workflow-default-incident-created.json": [
    {
      external_uid: "208c5e92-f250-40be-b7c2-50508c268c15",
      status: "active",
      ignore_reason: null,
      title: "MAIN-APP-UBUNTU query result is > 2.0 for 1 minutes on 'High CPU'",
      title_is_fallback: false,
      description: "",
      ...CRITICAL,
      triggered_at: "2024-04-22T06:36:29.495Z",
      resolved_at: null,
      labels: { policy: "Golden Signals", condition: "High CPU", entity: "MAIN-APP-UBUNTU" },
      links: [
        {
          kind: "source",
          url: "https://radar-api.service.newrelic.com/accounts/1/issues/0ea2df1c-adab-45d2-aae0-042b609d2322?notifier=SLACK",
        },
      ],
      is_test: false,
      source_event: "CREATED",
      unmapped: [],
    },
  ],

  // New Relic reports this acknowledgement as state ACTIVATED (trigger USER_ACTION): section 10
  // maps the state, so it stays active.
  "workflow-default-incident-acknowledged.json": [
    {
      external_uid: "13bbcdca-f0b6-470d-b0be-b34583c58869",
      status: "active",
      ignore_reason: null,
      title: "PIETER-UBUNTU query result is > 1.0 for 5 minutes on 'Storage on Host Exceeded Threshold'",
      title_is_fallback: false,
      description: "",
      source_severity: "HIGH",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-04-22T07:12:29.493Z",
      resolved_at: null,
      labels: {
        policy: "Golden Signals",
        condition: "Storage on Host Exceeded Threshold",
        entity: "PIETER-UBUNTU",
      },
      links: [
        {
          kind: "source",
          url: "https://radar-api.service.newrelic.com/accounts/4420147/issues/13bbcdca-f0b6-470d-b0be-b34583c58869?notifier=WEBHOOK",
        },
      ],
      is_test: false,
      source_event: "ACTIVATED",
      unmapped: [],
    },
  ],

  "workflow-default-incident-closed.json": [
    {
      external_uid: "95a9344a-2590-48ce-8d83-07e28b6d22c6",
      status: "resolved",
      ignore_reason: null,
      title: "main_app-UBUNTU query result is > 2.0 for 1 minutes on 'High CPU'",
      title_is_fallback: false,
      description: "",
      ...CRITICAL,
      triggered_at: "2024-04-22T06:16:30.228Z",
      resolved_at: "2024-04-22T06:17:37.383Z",
      labels: { policy: "Golden Signals", condition: "High CPU", entity: "main_app-UBUNTU" },
      links: [
        {
          kind: "source",
          url: "https://radar-api.service.newrelic.com/accounts/1/issues/0ea2df1c-adab-45d2-aae0-042b609d2322?notifier=SLACK",
        },
      ],
      is_test: false,
      source_event: "CLOSED",
      unmapped: [],
    },
  ],

  // incident_id 0 is New Relic's "send test notification"; the one target has an empty name.
  "legacy-channel-v1-incident-open.json": [
    {
      external_uid: "0",
      status: "active",
      ignore_reason: null,
      title: "New Relic Alert - Test Condition",
      title_is_fallback: false,
      description: "I am a test Violation",
      source_severity: "INFO",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: "2020-09-25T11:23:27.849Z",
      resolved_at: null,
      labels: {
        vigil_test: "true",
        policy: "New Relic Alert - Test Policy",
        condition: "New Relic Alert - Test Condition",
      },
      links: [
        { kind: "source", url: "https://alerts.newrelic.com/accounts/11111/incidents/0" },
        { kind: "runbook", url: "http://localhost/runbook/url" },
      ],
      is_test: true,
      source_event: "open",
      unmapped: [],
    },
  ],
};

describe("parseNewrelic: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("newrelic", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    const result = parseFixture(name);
    expect(result).toEqual({ ok: true, events: expected });
    expect(result.ok && "note" in result).toBe(false);
  });
});

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

function workflow(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: "5b0e7c7e-2f7e-4c65-9a4c-0f7c1b9d2e11",
    issueUrl: "https://radar-api.service.newrelic.com/accounts/7/issues/5b0e7c7e-2f7e-4c65-9a4c-0f7c1b9d2e11",
    title: "checkout error rate > 5%",
    priority: "HIGH",
    impactedEntities: ["checkout-api"],
    totalIncidents: 1,
    state: "ACTIVATED",
    trigger: "STATE_CHANGE",
    isCorrelated: true,
    createdAt: 1715681551000,
    updatedAt: 1715681611000,
    sources: ["newrelic"],
    alertPolicyNames: ["Checkout"],
    alertConditionNames: ["Error rate"],
    workflowName: "SRE",
    ...overrides,
  };
}

// A real (non-test) legacy incident with targets and their labels.
function legacy(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account_id: 11111,
    account_name: "Shop",
    condition_id: 42,
    condition_name: "Apdex low",
    current_state: "open",
    details: "Apdex < 0.7 for at least 5 minutes on 'checkout-api'",
    event_type: "INCIDENT",
    incident_acknowledge_url: "https://alerts.newrelic.com/accounts/11111/incidents/987/acknowledge",
    incident_id: 987,
    incident_url: "https://alerts.newrelic.com/accounts/11111/incidents/987",
    owner: "",
    policy_name: "Checkout",
    policy_url: "https://alerts.newrelic.com/accounts/11111/policies/5",
    runbook_url: "https://runbooks.example.com/apdex",
    severity: "CRITICAL",
    targets: [
      {
        id: "1",
        name: "checkout-api",
        link: "https://rpm.newrelic.com/accounts/11111/applications/1",
        labels: { env: "production", team: "payments" },
        product: "APM",
        type: "Application",
      },
      { id: "2", name: "checkout-worker", labels: { env: "staging" }, product: "APM", type: "Application" },
      { id: "3", name: "", labels: {}, product: "APM", type: "Application" },
    ],
    timestamp: 1715681551512,
    version: "1.0",
    ...overrides,
  };
}

describe("parseNewrelic: documented variants", () => {
  it("builds a whole event from a legacy incident with targets", () => {
    expect(onlyEvent(legacy())).toEqual({
      external_uid: "987",
      status: "active",
      ignore_reason: null,
      title: "Apdex low",
      title_is_fallback: false,
      description: "Apdex < 0.7 for at least 5 minutes on 'checkout-api'",
      ...CRITICAL,
      triggered_at: "2024-05-14T10:12:31.512Z",
      resolved_at: null,
      labels: {
        policy: "Checkout",
        condition: "Apdex low",
        entity: "checkout-api,checkout-worker",
        env: "production,staging",
        team: "payments",
      },
      links: [
        { kind: "source", url: "https://alerts.newrelic.com/accounts/11111/incidents/987" },
        { kind: "runbook", url: "https://runbooks.example.com/apdex" },
      ],
      is_test: false,
      source_event: "open",
      unmapped: [],
    });
  });

  it("accepts a legacy payload without version and targets", () => {
    expect(onlyEvent(legacy({ version: undefined, targets: undefined }))).toMatchObject({
      external_uid: "987",
      labels: { policy: "Checkout", condition: "Apdex low" },
    });
  });

  it("maps the legacy states; the timestamp is the resolve time of a close", () => {
    expect(onlyEvent(legacy({ current_state: "acknowledged" }))).toMatchObject({
      status: "unchanged",
      source_event: "acknowledged",
      triggered_at: "2024-05-14T10:12:31.512Z",
      resolved_at: null,
      unmapped: [],
    });
    expect(onlyEvent(legacy({ current_state: "closed" }))).toMatchObject({
      status: "resolved",
      source_event: "closed",
      triggered_at: null,
      resolved_at: "2024-05-14T10:12:31.512Z",
    });
    expect(onlyEvent(legacy({ current_state: "muted" }))).toMatchObject({
      status: "unchanged",
      unmapped: [{ field: "status", value: "muted" }],
    });
  });

  it("maps the legacy severities through the generic table", () => {
    expect(onlyEvent(legacy({ severity: "WARNING" }))).toMatchObject({
      source_severity: "WARNING",
      severity: "Medium",
    });
    expect(onlyEvent(legacy({ severity: "INFO" }))).toMatchObject({ severity: "info", display_priority: 5 });
    expect(onlyEvent(legacy({ severity: undefined }))).toMatchObject({
      source_severity: "",
      severity_mapping: "missing",
    });
  });

  it("is a legacy payload when it has current_state or incident_id", () => {
    expect(onlyEvent({ incident_id: "55", condition_name: "C" })).toMatchObject({
      external_uid: "55",
      status: "unchanged",
      source_event: "",
      title: "C",
    });
  });

  it("treats a string incident_id 0 as a test notification too", () => {
    expect(onlyEvent(legacy({ incident_id: "0", severity: "CRITICAL" }))).toMatchObject({
      external_uid: "0",
      is_test: true,
      source_severity: "CRITICAL",
      severity: "info",
      display_priority: 5,
      labels: { vigil_test: "true" },
    });
  });

  it("titles a legacy incident by policy when it has no condition name", () => {
    expect(onlyEvent(legacy({ condition_name: "" })).title).toBe("Checkout");
  });

  it("maps the workflow states", () => {
    const statusOf = (state: unknown) => {
      const event = onlyEvent(workflow({ state }));
      return [event.status, event.source_event, event.resolved_at, event.unmapped];
    };
    expect(statusOf("CREATED")).toEqual(["active", "CREATED", null, []]);
    expect(statusOf("activated")).toEqual(["active", "activated", null, []]);
    expect(statusOf("ACKNOWLEDGED")).toEqual(["unchanged", "ACKNOWLEDGED", null, []]);
    expect(statusOf("DEACTIVATED")).toEqual(["resolved", "DEACTIVATED", "2024-05-14T10:13:31.000Z", []]);
    expect(statusOf("CLOSED")).toEqual(["resolved", "CLOSED", "2024-05-14T10:13:31.000Z", []]);
    expect(statusOf("INVESTIGATING")).toEqual([
      "unchanged",
      "INVESTIGATING",
      null,
      [{ field: "status", value: "INVESTIGATING" }],
    ]);
  });

  it("accepts isCorrelated as a boolean or a string", () => {
    const asBoolean = onlyEvent(workflow({ isCorrelated: true }));
    expect(onlyEvent(workflow({ isCorrelated: "true" }))).toEqual(asBoolean);
  });

  it("joins the workflow name lists with commas", () => {
    expect(
      onlyEvent(
        workflow({
          alertPolicyNames: ["Checkout", "Golden Signals", "Checkout"],
          alertConditionNames: ["Error rate", ""],
          impactedEntities: ["checkout-api", "checkout-db"],
        }),
      ).labels,
    ).toEqual({
      policy: "Checkout,Golden Signals",
      condition: "Error rate",
      entity: "checkout-api,checkout-db",
    });
  });

  it("maps the workflow priorities and applies overrides", () => {
    expect(onlyEvent(workflow({ priority: "LOW" }))).toMatchObject({ severity: "Low", display_priority: 4 });
    expect(onlyEvent(workflow({ priority: "MEDIUM" }))).toMatchObject({ severity: "Medium" });
    expect(onlyEvent(workflow({ priority: "URGENT" }))).toMatchObject({
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "URGENT" }],
    });
    expect(
      onlyEvent(workflow({ priority: "HIGH" }), { severityOverrides: { high: "Critical" } }),
    ).toMatchObject({ severity: "Critical" });
  });

  it("falls back to the uid when a workflow has no title", () => {
    expect(onlyEvent(workflow({ title: "" }))).toMatchObject({
      title: "newrelic alert 5b0e7c7e-2f7e-4c65-9a4c-0f7c1b9d2e11",
      title_is_fallback: true,
    });
  });

  it("never marks a workflow payload as a test", () => {
    expect(onlyEvent(workflow({ id: "0" }))).toMatchObject({ external_uid: "0", is_test: false });
  });
});

describe("parseNewrelic: bad input", () => {
  itRejectsUnreadableBodies(parseNewrelic, {
    empty: "",
    notJson: [
      ["plain text", "New Relic incident opened"],
      ["truncated JSON", '{"id":"5b0e7c7e","state":"ACTIVATED","title":"checkout'],
    ],
  });

  it.each([
    ["an array", [workflow()]],
    ["null", null],
    ["a string", "CREATED"],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error: "not a New Relic webhook: expected a JSON object",
    });
  });

  it.each([
    ["an empty object", {}],
    ["a workflow without id", workflow({ id: undefined })],
    ["a workflow with an object id", workflow({ id: { value: "x" } })],
    ["an Alertmanager body", { version: "4", alerts: [] }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error:
        "not a New Relic webhook: expected a workflow payload with an id or a legacy payload with incident_id",
    });
  });

  it.each([
    ["absent", undefined],
    ["null", null],
    ["empty", ""],
  ])("rejects a legacy payload whose incident_id is %s", (_name, incidentId) => {
    expect(parseJson(legacy({ incident_id: incidentId }))).toEqual({
      ok: false,
      error: "not a New Relic legacy webhook: incident_id is missing",
    });
  });
});
