import { describe, expect, it } from "vitest";
import { deliver, readAlert, registerTrigger } from "../../../test/alerts.ts";
import { fixtureFiles, itRejectsUnreadableBodies, readFixture } from "../../../test/fixtures.ts";
import { describeEachEngine } from "../../../test/harness.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseSentry } from "./sentry.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

// Integration-platform fixtures are sent with their resource header; the legacy plugin sends none.
const FIXTURE_RESOURCE: Record<string, string | undefined> = {
  "issue-created-integration-platform.json": "issue",
  "issue-resolved-integration-platform.json": "issue",
  "metric-alert-resolved-docs.json": "metric_alert",
  "event-alert-triggered-docs.json": "event_alert",
  "legacy-webhook-plugin-keep-mock.json": undefined,
};

function parseFixture(name: string, withHeader: boolean): ParseResult {
  const body = readFixture("sentry", name);
  const headers: Record<string, string | undefined> = { "content-type": "application/json" };
  if (withHeader) headers["sentry-hook-resource"] = FIXTURE_RESOURCE[name];
  return parseSentry({ body, headers, options: {} });
}

function parseJson(payload: unknown, resource?: string, options: ParserOptions = {}): ParseResult {
  const headers = resource === undefined ? {} : { "sentry-hook-resource": resource };
  return parseSentry({ body: JSON.stringify(payload), headers, options });
}

const ERROR_LEVEL = {
  source_severity: "error",
  severity: "High",
  display_priority: 2,
  severity_mapping: "mapped",
} as const;

// Expected events below were written by hand from the fixture files and section 11 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  // No web_url and a null permalink: no link.
  "issue-created-integration-platform.json": [
    {
      external_uid: "1635244907",
      status: "active",
      ignore_reason: null,
      title: "Exception: Custom exception!",
      title_is_fallback: false,
      description: "__main__ in <module>",
      ...ERROR_LEVEL,
      triggered_at: "2020-04-28T13:56:05.903Z",
      resolved_at: null,
      labels: { project: "zulip-integration-testing", platform: "python" },
      links: [],
      is_test: false,
      source_event: "created",
      unmapped: [],
    },
  ],

  // An issue resolve carries no resolve time.
  "issue-resolved-integration-platform.json": [
    {
      external_uid: "1638821441",
      status: "resolved",
      ignore_reason: null,
      title: "Exception: program has entered an invalid state.",
      title_is_fallback: false,
      description: "__main__ in <module>",
      ...ERROR_LEVEL,
      triggered_at: null,
      resolved_at: null,
      labels: { project: "zulip-integration-testing", platform: "python" },
      links: [],
      is_test: false,
      source_event: "resolved",
      unmapped: [],
    },
  ],

  // The docs example writes `\n` escaped, so the description holds a backslash and an n; its
  // date_closed is null.
  "metric-alert-resolved-docs.json": [
    {
      external_uid: "incident-4",
      status: "resolved",
      ignore_reason: null,
      title: "Too many errors",
      title_is_fallback: false,
      description: "1000 events in the last 10 minutes\\nFilter: level:error",
      source_severity: "resolved",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: { project: "bar" },
      links: [{ kind: "source", url: "https://sentry.io/organizations/baz/alerts/1/" }],
      is_test: false,
      source_event: "resolved",
      unmapped: [],
    },
  ],

  // The issue id, not event_id; the `user` tag is personal data and dropped.
  "event-alert-triggered-docs.json": [
    {
      external_uid: "1117540176",
      status: "active",
      ignore_reason: null,
      title: "ReferenceError: heck is not defined",
      title_is_fallback: false,
      description: "?(<anonymous>)",
      ...ERROR_LEVEL,
      triggered_at: "2019-08-19T21:06:17.677Z",
      resolved_at: null,
      labels: {
        browser: "Chrome 75.0.3770",
        "browser.name": "Chrome",
        handled: "no",
        level: "error",
        mechanism: "onerror",
        os: "Mac OS X 10.14.0",
        "os.name": "Mac OS X",
        url: "https://null.jsbin.com/runner",
      },
      links: [
        {
          kind: "source",
          url: "https://sentry.io/organizations/test-org/issues/1117540176/events/e4874d664c3540c1a32eab185f12c5ab/",
        },
      ],
      is_test: false,
      source_event: "triggered",
      unmapped: [],
    },
  ],

  // The plugin sends no action, so source_event is empty.
  "legacy-webhook-plugin-keep-mock.json": [
    {
      external_uid: "4616132097",
      status: "active",
      ignore_reason: null,
      title: "Failed to fetch user profile",
      title_is_fallback: false,
      description: "Failed to fetch user profile: NetworkError: Server responded with 504 Gateway Timeout",
      ...ERROR_LEVEL,
      triggered_at: "2024-03-09T13:34:45.873Z",
      resolved_at: null,
      labels: {
        browser: "Chrome 121.0.0.0",
        "error.type": "NetworkError",
        "http.status_code": "504",
        environment: "production",
        project: "frontend-app",
      },
      links: [{ kind: "source", url: "https://keep-dr.sentry.io/issues/4616132097/" }],
      is_test: false,
      source_event: "",
      unmapped: [],
    },
  ],
};

describe("parseSentry: shared fixtures", () => {
  it("has an expectation for every fixture file", () => {
    const files = fixtureFiles("sentry");
    expect(files).toEqual(Object.keys(EXPECTED_BY_FIXTURE).sort());
    expect(Object.keys(FIXTURE_RESOURCE).sort()).toEqual(files);
  });

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s with its resource header", (name, expected) => {
    const result = parseFixture(name, true);
    expect(result).toEqual({ ok: true, events: expected });
    expect(result.ok && "note" in result).toBe(false);
  });

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s recognised by its shape", (name, expected) => {
    expect(parseFixture(name, false)).toEqual({ ok: true, events: expected });
  });
});

function onlyEvent(payload: unknown, resource?: string, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, resource, options));
}

function issueBody(action: string, issue: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    action,
    data: {
      issue: {
        id: "42",
        title: "TypeError: cart is undefined",
        culprit: "checkout/cart.js in addItem",
        level: "warning",
        platform: "javascript",
        firstSeen: "2024-05-14T10:00:00.000000Z",
        lastSeen: "2024-05-14T10:12:31.512345Z",
        web_url: "https://sentry.io/organizations/shop/issues/42/",
        permalink: "https://sentry.io/organizations/shop/issues/42/?permalink",
        project: { id: "7", slug: "checkout-web", name: "Checkout Web" },
        ...issue,
      },
    },
    installation: { uuid: "7a485448-a9e2-4c85-8a3c-4f44175783c9" },
    actor: { type: "application", id: "sentry", name: "Sentry" },
  };
}

function errorEvent(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: "d1f6ba5e6d1b4f1ab2f8a1a4c0c6e9aa",
    issue_id: "42",
    title: "TypeError: cart is undefined",
    culprit: "checkout/cart.js in addItem",
    level: "fatal",
    timestamp: 1715681551.512,
    environment: "production",
    tags: [
      { key: "release", value: "web@1.4.2" },
      { key: "sentry:user", value: "id:17" },
      { key: "user", value: "email:a@example.com" },
    ],
    web_url: "https://sentry.io/organizations/shop/issues/42/events/d1f6ba5e6d1b4f1ab2f8a1a4c0c6e9aa/",
    ...overrides,
  };
}

function metricBody(action: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    action,
    data: {
      description_text: "1200 events in the last 10 minutes",
      metric_alert: {
        id: "4",
        title: "Sacred Marmot",
        projects: ["checkout-web", "checkout-api"],
        alert_rule: { name: "Too many errors", environment: "production" },
        date_started: "2024-05-14T10:11:00.000000Z",
        date_detected: "2024-05-14T10:12:31.000000Z",
        date_closed: "2024-05-14T11:00:00.000000Z",
        ...overrides,
      },
      web_url: "https://sentry.io/organizations/shop/alerts/rules/details/1/",
    },
  };
}

describe("parseSentry: issue webhooks", () => {
  it("builds a whole event from an issue with web_url", () => {
    expect(onlyEvent(issueBody("unresolved"), "issue")).toEqual({
      external_uid: "42",
      status: "active",
      ignore_reason: null,
      title: "TypeError: cart is undefined",
      title_is_fallback: false,
      description: "checkout/cart.js in addItem",
      source_severity: "warning",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      // An unresolve carries no time of its own (lastSeen is the issue's latest event, which may be
      // before the resolve): without Sentry-Hook-Timestamp it is left to the receive time.
      triggered_at: null,
      resolved_at: null,
      labels: { project: "checkout-web", platform: "javascript" },
      links: [{ kind: "source", url: "https://sentry.io/organizations/shop/issues/42/" }],
      is_test: false,
      source_event: "unresolved",
      unmapped: [],
    });
  });

  it("links the permalink when there is no web_url", () => {
    expect(onlyEvent(issueBody("created", { web_url: null }), "issue").links).toEqual([
      { kind: "source", url: "https://sentry.io/organizations/shop/issues/42/?permalink" },
    ]);
  });

  it.each([
    ["created", "active", null, "2024-05-14T10:00:00.000Z"],
    ["triggered", "active", null, "2024-05-14T10:12:31.512Z"],
    ["resolved", "resolved", null, null],
    ["ignored", "ignored", "sentry: ignored", null],
    ["archived", "ignored", "sentry: archived", null],
    ["assigned", "unchanged", null, null],
  ])("maps issue action %s", (action, status, ignoreReason, triggeredAt) => {
    expect(onlyEvent(issueBody(action), "issue")).toMatchObject({
      status,
      ignore_reason: ignoreReason,
      source_event: action,
      triggered_at: triggeredAt,
      resolved_at: null,
      unmapped: [],
    });
  });

  it("dates an unresolve and a resolve by Sentry-Hook-Timestamp, never by lastSeen", () => {
    // 1715681700 is 2024-05-14T10:15:00Z, after the issue's lastSeen (10:12:31).
    const sent = { "sentry-hook-resource": "issue", "sentry-hook-timestamp": "1715681700" };
    const parse = (action: string) =>
      onlyEventOf(parseSentry({ body: JSON.stringify(issueBody(action)), headers: sent, options: {} }));
    expect(parse("unresolved")).toMatchObject({
      status: "active",
      triggered_at: "2024-05-14T10:15:00.000Z",
      resolved_at: null,
    });
    expect(parse("resolved")).toMatchObject({
      status: "resolved",
      triggered_at: null,
      resolved_at: "2024-05-14T10:15:00.000Z",
    });
    // The other actions keep their own times; an ignore has none.
    expect(parse("created").triggered_at).toBe("2024-05-14T10:00:00.000Z");
    expect(parse("triggered").triggered_at).toBe("2024-05-14T10:12:31.512Z");
    expect(parse("ignored")).toMatchObject({ triggered_at: null, resolved_at: null });
    // An activity alert's unresolve as well.
    const activity = { ...sent, "sentry-hook-resource": "activity_alert" };
    const body = JSON.stringify(issueBody("unresolved"));
    expect(onlyEventOf(parseSentry({ body, headers: activity, options: {} })).triggered_at).toBe(
      "2024-05-14T10:15:00.000Z",
    );
  });

  it("makes an unknown issue action unchanged and unmapped", () => {
    expect(onlyEvent(issueBody("deleted"), "issue")).toMatchObject({
      status: "unchanged",
      triggered_at: null,
      unmapped: [{ field: "status", value: "deleted" }],
    });
  });

  it("matches actions and the resource header case-insensitively", () => {
    expect(onlyEvent(issueBody(" Resolved "), " Issue ")).toMatchObject({
      status: "resolved",
      source_event: "Resolved",
    });
  });

  it("reads an activity_alert like an issue, with only the active actions", () => {
    expect(onlyEvent(issueBody("triggered"), "activity_alert")).toMatchObject({
      external_uid: "42",
      status: "active",
      triggered_at: "2024-05-14T10:12:31.512Z",
      source_event: "triggered",
    });
    expect(onlyEvent(issueBody("resolved"), "activity_alert")).toMatchObject({
      status: "unchanged",
      unmapped: [{ field: "status", value: "resolved" }],
    });
  });

  it("hashes an issue id that is not path-safe and accepts a numeric one", () => {
    expect(onlyEvent(issueBody("created", { id: "issue 42" })).external_uid).toBe(
      "b97b209af1d8f9ffa9dc56c7644e803c",
    );
    expect(onlyEvent(issueBody("created", { id: 42 })).external_uid).toBe("42");
  });

  it("maps issue levels through the generic table and applies overrides", () => {
    expect(onlyEvent(issueBody("created", { level: "fatal" }))).toMatchObject({ severity: "Critical" });
    expect(onlyEvent(issueBody("created", { level: "debug" }))).toMatchObject({ severity: "info" });
    expect(onlyEvent(issueBody("created", { level: "sample" }))).toMatchObject({
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "sample" }],
    });
    expect(onlyEvent(issueBody("created", { level: null }))).toMatchObject({ severity_mapping: "missing" });
    expect(
      onlyEvent(issueBody("created", { level: "warning" }), "issue", {
        severityOverrides: { warning: "Low" },
      }),
    ).toMatchObject({ severity: "Low" });
  });
});

describe("parseSentry: error, event alert and legacy webhooks", () => {
  it("builds a whole event from an error webhook with {key, value} tags", () => {
    expect(onlyEvent({ action: "created", data: { error: errorEvent() } }, "error")).toEqual({
      external_uid: "42",
      status: "active",
      ignore_reason: null,
      title: "TypeError: cart is undefined",
      title_is_fallback: false,
      description: "checkout/cart.js in addItem",
      source_severity: "fatal",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.512Z",
      resolved_at: null,
      labels: { release: "web@1.4.2", environment: "production" },
      links: [
        {
          kind: "source",
          url: "https://sentry.io/organizations/shop/issues/42/events/d1f6ba5e6d1b4f1ab2f8a1a4c0c6e9aa/",
        },
      ],
      is_test: false,
      source_event: "created",
      unmapped: [],
    });
  });

  it("recognises an error webhook by its shape", () => {
    expect(onlyEvent({ action: "created", data: { error: errorEvent() } })).toEqual(
      onlyEvent({ action: "created", data: { error: errorEvent() } }, "error"),
    );
  });

  it("keeps the environment tag over the event's environment", () => {
    expect(
      onlyEvent({ data: { error: errorEvent({ tags: [["environment", "staging"]] }) } }, "error").labels,
    ).toEqual({ environment: "staging" });
  });

  it("prefers the event datetime over the timestamp", () => {
    const event = errorEvent({ datetime: "2024-05-14T09:00:00.123456Z" });
    expect(onlyEvent({ action: "triggered", data: { event, triggered_rule: "R" } }).triggered_at).toBe(
      "2024-05-14T09:00:00.123Z",
    );
  });

  it("never resolves an event alert or an error, whatever the action", () => {
    expect(
      onlyEvent({ action: "resolved", data: { event: errorEvent(), triggered_rule: "R" } }, "event_alert"),
    ).toMatchObject({ status: "active", source_event: "resolved", unmapped: [] });
    expect(onlyEvent({ data: { error: errorEvent() } }, "error")).toMatchObject({
      status: "active",
      source_event: "",
    });
  });

  it("reads a legacy body: title from message, then culprit; level from the event", () => {
    const legacy = {
      id: "99",
      project_slug: "checkout-web",
      culprit: "addItem",
      message: "cart is undefined",
      url: "https://sentry.example.com/shop/checkout-web/issues/99/",
      event: {
        level: "warning",
        timestamp: 1715681551,
        tags: [
          ["user", "id:1"],
          ["browser", "Firefox"],
        ],
      },
    };
    expect(onlyEvent(legacy)).toMatchObject({
      external_uid: "99",
      title: "cart is undefined",
      description: "cart is undefined",
      source_severity: "warning",
      triggered_at: "2024-05-14T10:12:31.000Z",
    });
    // The `user` tag is personal data.
    expect(onlyEvent(legacy).labels).toEqual({ browser: "Firefox", project: "checkout-web" });
    expect(onlyEvent({ ...legacy, message: "" })).toMatchObject({ title: "addItem", description: "" });
  });
});

describe("parseSentry: metric alerts", () => {
  it("builds a whole event from a critical metric alert", () => {
    expect(onlyEvent(metricBody("critical"), "metric_alert")).toEqual({
      external_uid: "incident-4",
      status: "active",
      ignore_reason: null,
      title: "Too many errors",
      title_is_fallback: false,
      description: "1200 events in the last 10 minutes",
      source_severity: "critical",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: null,
      labels: { project: "checkout-web,checkout-api", environment: "production" },
      links: [{ kind: "source", url: "https://sentry.io/organizations/shop/alerts/rules/details/1/" }],
      is_test: false,
      source_event: "critical",
      unmapped: [],
    });
  });

  it("maps warning and resolved, with their times", () => {
    expect(onlyEvent(metricBody("warning", { date_detected: null }))).toMatchObject({
      status: "active",
      severity: "Medium",
      triggered_at: "2024-05-14T10:11:00.000Z",
    });
    expect(onlyEvent(metricBody("resolved"))).toMatchObject({
      status: "resolved",
      severity: "info",
      triggered_at: null,
      resolved_at: "2024-05-14T11:00:00.000Z",
    });
  });

  it("makes an unknown metric action unchanged, with an unmapped status and severity", () => {
    expect(onlyEvent(metricBody("paused"))).toMatchObject({
      status: "unchanged",
      source_severity: "paused",
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [
        { field: "status", value: "paused" },
        { field: "severity", value: "paused" },
      ],
    });
  });

  it("titles by the incident title when the rule has no name and hashes an unsafe id", () => {
    expect(onlyEvent(metricBody("critical", { alert_rule: {}, id: "4/5" }))).toMatchObject({
      external_uid: "e4f6d599577325069ee90042608c9495",
      title: "Sacred Marmot",
      labels: { project: "checkout-web,checkout-api" },
    });
  });
});

describe("parseSentry: messages without an alert", () => {
  it.each([
    ["installation", { action: "created", data: { installation: { uuid: "x" } } }],
    ["comment", { action: "created", data: { comment: "looking", issue_id: 42 } }],
  ])("yields no event for %s, with or without the header", (resource, payload) => {
    const expected = { ok: true, events: [], note: `Sentry ${resource} webhook: carries no alert` };
    expect(parseJson(payload, resource)).toEqual(expected);
    expect(parseJson(payload)).toEqual(expected);
  });

  it("yields no event for an unknown resource header, whatever the body", () => {
    expect(parseJson(issueBody("created"), "seer")).toEqual({
      ok: true,
      events: [],
      note: "Sentry seer webhook: carries no alert",
    });
  });
});

describe("parseSentry: bad input", () => {
  itRejectsUnreadableBodies(parseSentry, {
    empty: "",
    notJson: [
      ["plain text", "Sentry issue created"],
      ["truncated JSON", '{"action":"created","data":{"issue":{"id":"42"'],
    ],
  });

  it.each([
    ["an array", [issueBody("created")]],
    ["null", null],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual({ ok: false, error: "not a Sentry webhook: expected a JSON object" });
  });

  it.each([
    ["an empty object", {}],
    ["an event without triggered_rule", { action: "triggered", data: { event: errorEvent() } }],
    ["an unknown data shape", { action: "created", data: { widget: {} } }],
    ["an Alertmanager body", { version: "4", alerts: [] }],
  ])("rejects %s without a header", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error:
        "not a Sentry webhook: expected data.issue, data.event with data.triggered_rule, data.error or data.metric_alert, or a legacy plugin body with id and event",
    });
  });

  it.each([
    ["issue", "data.issue", { action: "created", data: {} }],
    ["issue", "data.issue.id", issueBody("created", { id: null })],
    ["activity_alert", "data.issue", { action: "triggered", data: { issue: "42" } }],
    ["event_alert", "data.event", { action: "triggered", data: { error: errorEvent() } }],
    ["event_alert", "data.event.issue_id", { data: { event: errorEvent({ issue_id: undefined }) } }],
    ["error", "data.error.issue_id", { data: { error: errorEvent({ issue_id: true }) } }],
    ["metric_alert", "data.metric_alert", { action: "critical", data: { metric_alert: [] } }],
    ["metric_alert", "data.metric_alert.id", metricBody("critical", { id: "" })],
  ])("rejects a %s body without %s", (resource, what, payload) => {
    expect(parseJson(payload, resource)).toEqual({
      ok: false,
      error: `not a Sentry webhook: ${what} is missing`,
    });
  });

  it("rejects a legacy body without its id", () => {
    expect(parseJson({ project_slug: "checkout-web", culprit: "x", event: {} })).toEqual({
      ok: false,
      error: "not a Sentry webhook: id (the legacy plugin's issue id) is missing",
    });
  });
});

describeEachEngine("Sentry issues through the store", (harness) => {
  // Created, resolved by a person (no time in the payload), then unresolved by a person: lastSeen
  // is still the issue's first event.
  async function createResolveUnresolve(id: string, sentAt: (action: string) => Record<string, string>) {
    const h = harness();
    const { auth } = await h.createKey();
    const triggerPath = await registerTrigger(h, auth, { source: "sentry", integration: `unresolve-${id}` });
    const times = { firstSeen: "2024-05-14T10:00:00Z", lastSeen: "2024-05-14T10:00:00Z" };
    const outcomes: string[] = [];
    for (const action of ["created", "resolved", "unresolved"]) {
      const headers = {
        "content-type": "application/json",
        "sentry-hook-resource": "issue",
        ...sentAt(action),
      };
      const response = await deliver(
        h,
        triggerPath,
        JSON.stringify(issueBody(action, { id, ...times })),
        headers,
      );
      expect(response.statusCode, response.body).toBe(202);
      outcomes.push(response.json().alerts[0].outcome);
    }
    const alert = await readAlert(h, auth, id);
    return { outcomes, status: alert.status, refire_count: alert.refire_count };
  }

  it("re-opens a resolved issue on unresolved, dated by the receive time", async () => {
    expect(await createResolveUnresolve("9001", () => ({}))).toEqual({
      outcomes: ["created", "resolved", "refired"],
      status: "active",
      refire_count: 1,
    });
  });

  it("re-opens a resolved issue on unresolved, dated by Sentry-Hook-Timestamp", async () => {
    // Sent at 10:05 and 10:30 (Unix seconds), as Sentry writes the header.
    const sent: Record<string, string> = { resolved: "1715681100", unresolved: "1715682600" };
    const header = (action: string): Record<string, string> =>
      sent[action] === undefined ? {} : { "sentry-hook-timestamp": sent[action] };
    expect(await createResolveUnresolve("9002", header)).toEqual({
      outcomes: ["created", "resolved", "refired"],
      status: "active",
      refire_count: 1,
    });
  });
});
