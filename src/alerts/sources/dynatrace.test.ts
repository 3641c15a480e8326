import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseDynatrace } from "./dynatrace.ts";
import type { AlertEvent, AlertLink, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("dynatrace", name);
  return parseDynatrace({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseDynatrace({ body: JSON.stringify(payload), headers: {}, options });
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

const CHECKOUT_PID = "-5478917203434817392_1715672400000V2";
const CHECKOUT_LABELS = {
  Environment: "PROD",
  "k8s-namespace": "checkout",
  "k8s-cluster": "prod-eu-west-1",
  team: "payments",
  impacted_entity: "checkout-service",
  problem_impact: "SERVICE",
};
const CHECKOUT_LINKS: AlertLink[] = [
  {
    kind: "source",
    url: `https://abc12345.live.dynatrace.com/#problems/problemdetails;pid=${CHECKOUT_PID}`,
  },
];

// Expected events below were written by hand from the fixture files and section 13 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "test-notification.json": [
    {
      // PID is the unreplaced `{PID}`, so the uid is ProblemID.
      external_uid: "TESTID",
      status: "active",
      ignore_reason: null,
      title: "Dynatrace problem notification test run",
      title_is_fallback: false,
      description: "Dynatrace problem notification test run details",
      source_severity: "",
      severity: "info",
      display_priority: 5,
      severity_mapping: "missing",
      triggered_at: null,
      resolved_at: null,
      // `{Tags}` is unreplaced: no tag labels.
      labels: { vigil_test: "true", impacted_entity: "Test run" },
      links: [],
      is_test: true,
      source_event: "OPEN",
      unmapped: [],
    },
  ],

  "default-payload-open-harness-docs.json": [
    {
      external_uid: "PID-F5D7459A6CD9842B",
      status: "active",
      ignore_reason: null,
      title: "Response time degradation",
      title_is_fallback: false,
      description: "High response time detected",
      // No severity in the default template: the impact stands in.
      source_severity: "APPLICATION",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: {
        production: "",
        payment: "",
        critical: "",
        impacted_entity: "SERVICE-F5D7459A6CD9842B",
        problem_impact: "APPLICATION",
      },
      links: [{ kind: "source", url: "https://dynatrace.example.com/problems/PID-F5D7459A6CD9842B" }],
      is_test: false,
      source_event: "OPEN",
      unmapped: [],
    },
  ],

  "custom-payload-open-service-error.json": [
    {
      external_uid: CHECKOUT_PID,
      status: "active",
      ignore_reason: null,
      title: "Failure rate increase",
      title_is_fallback: false,
      description:
        "Failure rate increase\nService: checkout-service\nFailure rate: 12.4 % (threshold 5 %)\nAffected requests: 1,203 / min\nRoot cause: checkout-service-6b7c9d4f8-2lq9m (namespace checkout, cluster prod-eu-west-1)",
      source_severity: "ERROR",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: CHECKOUT_LABELS,
      links: CHECKOUT_LINKS,
      is_test: false,
      source_event: "OPEN",
      unmapped: [],
    },
  ],

  "custom-payload-resolved-service-error.json": [
    {
      external_uid: CHECKOUT_PID,
      status: "resolved",
      ignore_reason: null,
      title: "Failure rate increase",
      title_is_fallback: false,
      description:
        "Failure rate increase (resolved)\nService: checkout-service\nProblem duration: 23 min\nRoot cause: checkout-service-6b7c9d4f8-2lq9m (namespace checkout, cluster prod-eu-west-1)",
      source_severity: "ERROR",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: CHECKOUT_LABELS,
      links: CHECKOUT_LINKS,
      is_test: false,
      source_event: "RESOLVED",
      unmapped: [],
    },
  ],
};

describe("parseDynatrace: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("dynatrace", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// A custom template with ProblemDetailsJSON and Tags as an array.
function problem(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    PID: "PID-1",
    ProblemID: "P-1",
    State: "OPEN",
    ProblemTitle: "CPU saturation",
    ProblemDetailsMarkdown: "**CPU** saturation on host-1",
    ProblemDetailsJSON: { severityLevel: "RESOURCE_CONTENTION", startTime: 1715672400123, endTime: -1 },
    Tags: ["[AWS]Name:web", "team:ops", "team:dev", "bare"],
    ...overrides,
  };
}

describe("parseDynatrace: documented variants", () => {
  it("builds a whole event from a custom template with ProblemDetailsJSON", () => {
    expect(onlyEvent(problem())).toEqual({
      external_uid: "PID-1",
      status: "active",
      ignore_reason: null,
      title: "CPU saturation",
      title_is_fallback: false,
      description: "**CPU** saturation on host-1",
      source_severity: "RESOURCE_CONTENTION",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T07:40:00.123Z",
      resolved_at: null,
      // The [AWS] context is dropped; the first team wins.
      labels: { Name: "web", team: "ops", bare: "" },
      links: [],
      is_test: false,
      source_event: "OPEN",
      unmapped: [],
    });
  });

  it("reads ProblemDetailsJSON sent as JSON text and its endTime on a resolve", () => {
    const details = JSON.stringify({
      severityLevel: "AVAILABILITY",
      startTime: 1715672400000,
      endTime: 1715673000000,
    });
    expect(onlyEvent(problem({ State: "RESOLVED", ProblemDetailsJSON: details }))).toMatchObject({
      status: "resolved",
      source_severity: "AVAILABILITY",
      severity: "Critical",
      triggered_at: "2024-05-14T07:40:00.000Z",
      resolved_at: "2024-05-14T07:50:00.000Z",
    });
  });

  it.each([
    ["OPEN", "active"],
    ["resolved", "resolved"],
    ["MERGED", "resolved"],
  ])("maps State %s to %s", (state, status) => {
    expect(onlyEvent(problem({ State: state }))).toMatchObject({ status, source_event: state, unmapped: [] });
  });

  it("makes an unknown or missing State unchanged and unmapped", () => {
    expect(onlyEvent(problem({ State: "CLOSED" }))).toMatchObject({
      status: "unchanged",
      unmapped: [{ field: "status", value: "CLOSED" }],
    });
    expect(onlyEvent(problem({ State: "{State}" }))).toMatchObject({
      status: "unchanged",
      source_event: "",
      unmapped: [{ field: "status", value: "" }],
    });
  });

  describe("severity", () => {
    it.each([
      ["AVAILABILITY", "Critical"],
      ["ERROR", "High"],
      ["PERFORMANCE", "Medium"],
      ["RESOURCE_CONTENTION", "Medium"],
      ["CUSTOM_ALERT", "Medium"],
      ["MONITORING_UNAVAILABLE", "Low"],
      ["INFO", "info"],
    ])("ProblemSeverity %s -> %s", (level, bucket) => {
      expect(onlyEvent(problem({ ProblemSeverity: level }))).toMatchObject({
        source_severity: level,
        severity: bucket,
        severity_mapping: "mapped",
      });
    });

    it("prefers ProblemSeverity over severityLevel, and both over the impact", () => {
      expect(
        onlyEvent(problem({ ProblemSeverity: "INFO", ProblemImpact: "APPLICATION" })).source_severity,
      ).toBe("INFO");
      expect(onlyEvent(problem({ ProblemImpact: "APPLICATION" })).source_severity).toBe(
        "RESOURCE_CONTENTION",
      );
    });

    it.each([
      ["APPLICATION", "High"],
      ["SERVICE", "High"],
      ["INFRASTRUCTURE", "Medium"],
      ["ENVIRONMENT", "Medium"],
    ])("ProblemImpact %s -> %s without a severity", (impact, bucket) => {
      expect(onlyEvent(problem({ ProblemDetailsJSON: undefined, ProblemImpact: impact }))).toMatchObject({
        source_severity: impact,
        severity: bucket,
        severity_mapping: "mapped",
      });
    });

    it("is missing without severity and impact, and unmapped for an unknown level", () => {
      expect(
        onlyEvent(problem({ ProblemDetailsJSON: undefined, ProblemSeverity: "{ProblemSeverity}" })),
      ).toMatchObject({ source_severity: "", severity: "Medium", severity_mapping: "missing", unmapped: [] });
      expect(onlyEvent(problem({ ProblemSeverity: "SLOWDOWN" }))).toMatchObject({
        source_severity: "SLOWDOWN",
        severity: "Medium",
        severity_mapping: "unmapped",
        unmapped: [{ field: "severity", value: "SLOWDOWN" }],
      });
    });

    it("follows the registration's overrides", () => {
      expect(
        onlyEvent(problem({ ProblemSeverity: "PERFORMANCE" }), {
          severityOverrides: { performance: "High" },
        }),
      ).toMatchObject({ severity: "High" });
    });
  });

  it("takes the description from text, markdown, HTML, then ProblemDetails", () => {
    const descriptionOf = (fields: Record<string, unknown>) =>
      onlyEvent(problem({ ProblemDetailsMarkdown: undefined, ...fields })).description;
    expect(
      descriptionOf({ ProblemDetailsText: "T", ProblemDetailsMarkdown: "M", ProblemDetailsHTML: "<b>H</b>" }),
    ).toBe("T");
    expect(descriptionOf({ ProblemDetailsMarkdown: "M", ProblemDetails: "D" })).toBe("M");
    expect(
      descriptionOf({
        ProblemDetailsHTML:
          '<h1>Problem 1</h1><p>Response time &gt; 2&nbsp;s on <a href="x">svc&amp;co</a><br/>since &#8220;10:00&#x201D;</p><p>&lt;b&gt; stays text</p>',
        ProblemDetails: "D",
      }),
    ).toBe("Problem 1\nResponse time > 2 s on svc&co\nsince \u201c10:00\u201d\n<b> stays text");
    // Entities are decoded once: `&amp;lt;` is the text `&lt;`.
    expect(descriptionOf({ ProblemDetailsHTML: "a &amp;lt; b &#38;gt; c" })).toBe("a &lt; b &gt; c");
    expect(descriptionOf({ ProblemDetailsHTML: "{ProblemDetailsHTML}", ProblemDetails: "D" })).toBe("D");
    expect(descriptionOf({})).toBe("");
  });

  it("takes Tags as text, drops contexts, keeps the first value of a key", () => {
    expect(
      onlyEvent(problem({ Tags: " [Kubernetes]app:web , app:api,[Environment]stage=prod,, " })).labels,
    ).toEqual({
      app: "web",
      stage: "prod",
    });
  });

  it("adds impacted_entity and problem_impact over tags of the same key", () => {
    expect(
      onlyEvent(
        problem({ Tags: "problem_impact:x", ImpactedEntity: "host-1", ProblemImpact: "INFRASTRUCTURE" }),
      ).labels,
    ).toEqual({ problem_impact: "INFRASTRUCTURE", impacted_entity: "host-1" });
  });

  it("prefers ProblemURL over Problem URL and drops a placeholder URL", () => {
    expect(
      onlyEvent(
        problem({ ProblemURL: "https://dt.example.com/a", "Problem URL": "https://dt.example.com/b" }),
      ).links,
    ).toEqual([{ kind: "source", url: "https://dt.example.com/a" }]);
    expect(onlyEvent(problem({ ProblemURL: "{ProblemURL}" })).links).toEqual([]);
  });

  it("uses ProblemID when PID is absent, and hashes an id that is not path-safe", () => {
    expect(onlyEvent(problem({ PID: undefined })).external_uid).toBe("P-1");
    expect(onlyEvent(problem({ PID: "PID/1" })).external_uid).toBe("905a6f8332635f4b29e51e1c04c429e7");
  });

  it("detects a test notification by ProblemID TESTID or PID {PID}", () => {
    expect(onlyEvent(problem({ ProblemID: "TESTID" }))).toMatchObject({
      external_uid: "PID-1",
      is_test: true,
      severity: "info",
      display_priority: 5,
      source_severity: "RESOURCE_CONTENTION",
    });
    expect(onlyEvent(problem({ PID: "{PID}" }))).toMatchObject({ external_uid: "P-1", is_test: true });
    expect(onlyEvent(problem()).is_test).toBe(false);
  });

  it("falls back to the uid for a missing title", () => {
    expect(onlyEvent(problem({ ProblemTitle: "{ProblemTitle}" }))).toMatchObject({
      title: "dynatrace alert PID-1",
      title_is_fallback: true,
    });
  });
});

describe("parseDynatrace: bad input", () => {
  const notDynatrace = {
    ok: false,
    error: "not a Dynatrace problem notification: expected a JSON object with PID or ProblemID",
  };

  itRejectsUnreadableBodies(parseDynatrace, {
    empty: "",
    notJson: [
      ["plain text", "Problem P-1 is open"],
      ["truncated JSON", '{"PID":"PID-1","State":"OPEN","ProblemTitle":"CPU'],
      // The default template inserts {ProblemDetailsJSON} unquoted: without replacement it is not JSON.
      ["an unreplaced object placeholder", '{"PID":"1","ProblemDetailsJSON":{ProblemDetailsJSON}}'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [problem()]],
    ["a string", "OPEN"],
    ["null", null],
    ["a number", 1],
    ["a problem without ids", { State: "OPEN", ProblemTitle: "CPU" }],
    ["unreplaced ids only", { PID: "{PID}", ProblemID: "{ProblemID}", State: "OPEN" }],
    ["ids of the wrong type", { PID: { id: 1 }, ProblemID: ["P-1"] }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notDynatrace);
  });
});
