import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseElastic } from "./elastic.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("elastic", name);
  return parseElastic({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseElastic({ body: JSON.stringify(payload), headers: {}, options });
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

// H("c2eaa090-5892-11ee-b32e-fbb9c39f0b1e", "*"), computed with python3 hashlib.
const SQUID_UID = "20ae2fa0f0132e04c4264bf6fc5573b9";

// Expected events below were written by hand from the fixture files and section 14 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "kibana-webhook-log-threshold-fired.json": [
    {
      external_uid: SQUID_UID,
      status: "active",
      ignore_reason: null,
      // Alert id `*` (no grouping) is not appended.
      title: "alert_squid_logs",
      title_is_fallback: false,
      description: "",
      source_severity: "logs.threshold.fired",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: {},
      links: [],
      is_test: false,
      source_event: "logs.threshold.fired",
      unmapped: [],
    },
  ],

  "kibana-webhook-log-threshold-recovered.json": [
    {
      external_uid: SQUID_UID,
      status: "resolved",
      ignore_reason: null,
      title: "alert_squid_logs",
      title_is_fallback: false,
      description: "",
      source_severity: "recovered",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: {},
      links: [],
      is_test: false,
      source_event: "recovered",
      unmapped: [],
    },
  ],

  "keep-connector-template-log-threshold.json": [
    {
      // H("5d2e8f40-11a2-11ef-9c1b-4b2f6a7c8d9e", "checkout"); alert.uuid is not used.
      external_uid: "04b4e965870c2d7bc05a40826d1ed4ce",
      status: "active",
      ignore_reason: null,
      title: "checkout error log spike (checkout)",
      title_is_fallback: false,
      description: "412 log entries in the last 5 mins for service.name: checkout. Alert when > 100.",
      source_severity: "logs.threshold.fired",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:15:00.000Z",
      resolved_at: null,
      labels: {
        environment: "production",
        team: "payments",
        rule_type: "logs.alert.document.count",
        space: "default",
      },
      links: [
        {
          kind: "source",
          url: "https://kibana.example.com/app/observability/alerts/4f9b2c1e-8a7d-4e53-9b61-0c2d3e4f5a6b",
        },
        {
          kind: "source",
          url: "https://kibana.example.com/app/logs/link-to/default/logs?time=1715681700000&filter=service.name%3A%20checkout",
        },
        {
          kind: "source",
          url: "https://kibana.example.com/app/management/insightsAndAlerting/triggersActions/rule/5d2e8f40-11a2-11ef-9c1b-4b2f6a7c8d9e",
        },
      ],
      is_test: false,
      source_event: "logs.threshold.fired",
      unmapped: [],
    },
  ],
};

describe("parseElastic: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("elastic", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// The rule action variables as a template renders them.
function kibana(
  alert: Record<string, unknown> = {},
  rule: Record<string, unknown> = {},
  rest: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    rule: { id: "rule-1", name: "CPU high", ...rule },
    alert: {
      id: "host-a",
      uuid: "u-1",
      actionGroup: "threshold met",
      actionGroupName: "Threshold met",
      ...alert,
    },
    ...rest,
  };
}

// H("rule-1", "host-a"), computed with python3 hashlib.
const HOST_A_UID = "9f9166550ed2386a3147093493f41ca0";

describe("parseElastic: documented variants", () => {
  it("builds a whole event from a full nested template", () => {
    expect(
      onlyEvent(
        kibana(
          { flapping: true },
          {
            tags: "severity:critical, env=prod,team",
            type: ".index-threshold",
            spaceId: "ops",
            url: "https://kibana.example.com/app/rule/rule-1",
          },
          {
            context: {
              message: "CPU is 97% on host-a",
              timestamp: "2024-05-14T12:15:00+02:00",
              alertDetailsUrl: "/app/observability/alerts/u-1",
            },
            date: "2024-05-14T10:16:00.000Z",
          },
        ),
      ),
    ).toEqual({
      external_uid: HOST_A_UID,
      status: "active",
      ignore_reason: null,
      title: "CPU high (host-a)",
      title_is_fallback: false,
      description: "CPU is 97% on host-a",
      source_severity: "critical",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:15:00.000Z",
      resolved_at: null,
      labels: {
        vigil_flapping: "true",
        severity: "critical",
        env: "prod",
        team: "",
        rule_type: ".index-threshold",
        space: "ops",
      },
      // A relative alertDetailsUrl has no base URL to resolve against: dropped.
      links: [{ kind: "source", url: "https://kibana.example.com/app/rule/rule-1" }],
      is_test: false,
      source_event: "threshold met",
      unmapped: [],
    });
  });

  it("keeps the uid across episodes: alert.uuid is not part of it", () => {
    expect(onlyEvent(kibana({ uuid: "u-2" })).external_uid).toBe(HOST_A_UID);
  });

  it("does not append an alert id equal to the action group id or name (Elasticsearch query rules)", () => {
    const event = onlyEvent(
      kibana({ id: "query matched", actionGroup: "query matched", actionGroupName: "Query matched" }),
    );
    expect(event).toMatchObject({ title: "CPU high", external_uid: "4d0b84484b0f7d3f64bb8e8cc89de7f2" });
    expect(onlyEvent(kibana({ id: "THRESHOLD MET" })).title).toBe("CPU high");
    expect(onlyEvent(kibana({ id: "*" })).external_uid).toBe("4dbd28bad301a2fee908ea6b5aa25e15");
  });

  it("titles an Elasticsearch query rule the same when it fires and when it recovers", () => {
    const query = { id: "query matched", actionGroupName: "Query matched" };
    const fired = onlyEvent(kibana({ ...query, actionGroup: "query matched" }, { name: "ES query rule" }));
    const recovered = onlyEvent(
      kibana({ ...query, actionGroup: "recovered", actionGroupName: "Recovered" }, { name: "ES query rule" }),
    );
    expect([fired.status, fired.title, fired.external_uid]).toEqual([
      "active",
      "ES query rule",
      recovered.external_uid,
    ]);
    expect([recovered.status, recovered.title]).toEqual(["resolved", "ES query rule"]);
    // Keep's template without actionGroupName reads the constant id alike.
    const keep = {
      webhook_body: {
        rule_info: JSON.stringify({ id: "rule-1", name: "ES query rule" }),
        alert_info: JSON.stringify({ id: "query matched", actionGroup: "recovered" }),
      },
    };
    expect(onlyEvent(keep).title).toBe("ES query rule");
    // Another alert id still names the instance on recovery.
    expect(onlyEvent(kibana({ actionGroup: "recovered" })).title).toBe("CPU high (host-a)");
  });

  it("hashes an empty part for a missing alert id", () => {
    expect(onlyEvent(kibana({ id: undefined }))).toMatchObject({
      external_uid: "1fdaeeded7c3b1d8eb4d7a59ef8b1fc8",
      title: "CPU high",
    });
  });

  it("falls back to the uid for a missing rule name", () => {
    expect(onlyEvent(kibana({}, { name: "" }))).toMatchObject({
      title: `elastic alert ${HOST_A_UID}`,
      title_is_fallback: true,
    });
  });

  describe("status from the action group", () => {
    it("recovered -> resolved, with resolved_at from context.timestamp, else date", () => {
      expect(
        onlyEvent(
          kibana({ actionGroup: "Recovered" }, {}, { context: { timestamp: "2024-05-14T10:20:00Z" } }),
        ),
      ).toMatchObject({
        status: "resolved",
        source_event: "Recovered",
        source_severity: "Recovered",
        severity: "info",
        triggered_at: null,
        resolved_at: "2024-05-14T10:20:00.000Z",
      });
      expect(
        onlyEvent(kibana({ actionGroup: "recovered" }, {}, { date: "2024-05-14T10:21:00Z" })),
      ).toMatchObject({
        resolved_at: "2024-05-14T10:21:00.000Z",
      });
    });

    it("uses actionGroupName when actionGroup is absent", () => {
      expect(onlyEvent(kibana({ actionGroup: undefined, actionGroupName: "Recovered" }))).toMatchObject({
        status: "resolved",
        source_event: "Recovered",
      });
    });

    it("makes any other group active and the date its triggered_at", () => {
      expect(
        onlyEvent(kibana({ actionGroup: "metrics.threshold.fired" }, {}, { date: 1715681700 })),
      ).toMatchObject({
        status: "active",
        triggered_at: "2024-05-14T10:15:00.000Z",
        resolved_at: null,
      });
    });

    it("makes an empty group unchanged without times", () => {
      expect(
        onlyEvent(kibana({ actionGroup: "", actionGroupName: "" }, {}, { date: "2024-05-14T10:21:00Z" })),
      ).toMatchObject({
        status: "unchanged",
        source_event: "",
        source_severity: "",
        severity_mapping: "missing",
        triggered_at: null,
        resolved_at: null,
        unmapped: [],
      });
    });

    it.each(["metrics.inventory_threshold.nodata", "No Data", "logs.no_data"])(
      "flags %s as no data, with bucket Low",
      (group) => {
        expect(onlyEvent(kibana({ actionGroup: group }))).toMatchObject({
          status: "active",
          source_severity: group,
          severity: "Low",
          labels: { vigil_no_data: "true" },
        });
      },
    );

    it("sets vigil_flapping only for a true flapping", () => {
      expect(onlyEvent(kibana({ flapping: "true" })).labels).toEqual({ vigil_flapping: "true" });
      expect(onlyEvent(kibana({ flapping: "false" })).labels).toEqual({});
      expect(onlyEvent(kibana({ flapping: false })).labels).toEqual({});
    });
  });

  describe("severity", () => {
    it.each([
      ["metrics.threshold.warning", "Medium"],
      ["Warning", "Medium"],
      ["threshold met", "High"],
      ["recovered", "info"],
    ])("action group %s -> %s", (group, bucket) => {
      expect(onlyEvent(kibana({ actionGroup: group }))).toMatchObject({
        source_severity: group,
        severity: bucket,
        severity_mapping: "mapped",
      });
    });

    it("prefers a severity rule tag, through the generic table", () => {
      expect(onlyEvent(kibana({}, { tags: ["team:a", "Severity=warning"] }))).toMatchObject({
        source_severity: "warning",
        severity: "Medium",
      });
      expect(onlyEvent(kibana({}, { tags: ["severity:sev1"] }))).toMatchObject({
        source_severity: "sev1",
        severity: "Medium",
        severity_mapping: "unmapped",
        unmapped: [{ field: "severity", value: "sev1" }],
      });
      // A bare `severity` tag has no value: the action group decides.
      expect(onlyEvent(kibana({}, { tags: ["severity"] })).source_severity).toBe("threshold met");
    });

    it("follows the registration's overrides", () => {
      expect(onlyEvent(kibana(), { severityOverrides: { "threshold met": "Low" } }).severity).toBe("Low");
    });
  });

  it("takes the description from context.reason, else context.message", () => {
    expect(onlyEvent(kibana({}, {}, { context: { reason: "R", message: "M" } })).description).toBe("R");
    expect(onlyEvent(kibana({}, {}, { context: { reason: "", message: "M" } })).description).toBe("M");
  });

  it("keeps rule_type and space over tags of the same key, and joins repeated tag keys", () => {
    expect(
      onlyEvent(
        kibana({}, { tags: ["space:x", "team:a", "team:b"], type: "apm.error_rate", spaceId: "default" }),
      ).labels,
    ).toEqual({ space: "default", team: "a,b", rule_type: "apm.error_rate" });
  });

  it("keeps viewInAppUrl and drops placeholder links", () => {
    expect(
      onlyEvent(
        kibana(
          {},
          { url: "{{rule.url}}" },
          { context: { viewInAppUrl: "https://kibana.example.com/app/metrics" } },
        ),
      ).links,
    ).toEqual([{ kind: "source", url: "https://kibana.example.com/app/metrics" }]);
  });

  it("reads Keep's template with objects instead of JSON text", () => {
    const event = onlyEvent({
      webhook_body: {
        alert_info: { actionGroup: "recovered", id: "host-a" },
        rule_info: { id: "rule-1", name: "CPU high" },
        context_info: "",
      },
    });
    expect(event).toMatchObject({ external_uid: HOST_A_UID, status: "resolved", title: "CPU high (host-a)" });
  });

  describe("security alert documents", () => {
    const flat = {
      "@timestamp": "2024-05-14T10:15:00.000Z",
      "kibana.alert.rule.uuid": "sec-rule-1",
      "kibana.alert.instance.id": "inst-1",
      "kibana.alert.status": "active",
      "kibana.alert.severity": "high",
      "kibana.alert.rule.name": "Suspicious login",
      "kibana.alert.reason": "login from a new country",
    };

    it("reads flat dotted keys", () => {
      expect(onlyEvent(flat)).toEqual({
        // H("sec-rule-1", "inst-1")
        external_uid: "3875cacb97951bf3772053c53d41a709",
        status: "active",
        ignore_reason: null,
        title: "Suspicious login (inst-1)",
        title_is_fallback: false,
        description: "login from a new country",
        source_severity: "high",
        severity: "High",
        display_priority: 2,
        severity_mapping: "mapped",
        // No kibana.alert.start in this document: @timestamp stands in.
        triggered_at: "2024-05-14T10:15:00.000Z",
        resolved_at: null,
        labels: {},
        links: [],
        is_test: false,
        source_event: "active",
        unmapped: [],
      });
    });

    describe("times", () => {
      const start = "2024-05-14T10:02:00.000Z";
      const end = "2024-05-14T10:14:30.000Z";

      it("takes kibana.alert.start, not @timestamp, as the trigger time of an active alert", () => {
        const event = onlyEvent({ ...flat, "kibana.alert.start": start });
        expect([event.triggered_at, event.resolved_at]).toEqual([start, null]);
      });

      it("takes kibana.alert.end as the resolve time, with the episode's kibana.alert.start", () => {
        const event = onlyEvent({
          ...flat,
          "kibana.alert.status": "recovered",
          "kibana.alert.start": start,
          "kibana.alert.end": end,
        });
        expect([event.status, event.triggered_at, event.resolved_at]).toEqual(["resolved", start, end]);
      });

      it("falls back to @timestamp for the resolve time when kibana.alert.end is absent", () => {
        const event = onlyEvent({ ...flat, "kibana.alert.status": "untracked" });
        expect([event.status, event.triggered_at, event.resolved_at]).toEqual([
          "resolved",
          null,
          "2024-05-14T10:15:00.000Z",
        ]);
      });

      it("reads nested and mixed kibana.alert.start and kibana.alert.end the same way", () => {
        const nested = {
          "@timestamp": "2024-05-14T10:15:00.000Z",
          kibana: {
            alert: {
              rule: { uuid: "sec-rule-1", name: "Suspicious login" },
              instance: { id: "inst-1" },
              status: "recovered",
              start,
              end,
            },
          },
        };
        const mixed = {
          "@timestamp": "2024-05-14T10:15:00.000Z",
          "kibana.alert.rule.uuid": "sec-rule-1",
          "kibana.alert": { status: "recovered", start, end },
        };
        for (const document of [nested, mixed]) {
          const event = onlyEvent(document);
          expect([event.status, event.triggered_at, event.resolved_at]).toEqual(["resolved", start, end]);
        }
      });
    });

    it("reads nested and mixed documents the same way", () => {
      const nested = {
        "@timestamp": "2024-05-14T10:15:00.000Z",
        kibana: {
          alert: {
            rule: { uuid: "sec-rule-1", name: "Suspicious login" },
            instance: { id: "inst-1" },
            status: "active",
            severity: "high",
            reason: "login from a new country",
          },
        },
      };
      const mixed = {
        "@timestamp": "2024-05-14T10:15:00.000Z",
        "kibana.alert": {
          "rule.uuid": "sec-rule-1",
          rule: { name: "Suspicious login" },
          "instance.id": "inst-1",
          status: "active",
          severity: "high",
          reason: "login from a new country",
        },
      };
      expect(onlyEvent(nested)).toEqual(onlyEvent(flat));
      expect(onlyEvent(mixed)).toEqual(onlyEvent(flat));
    });

    it.each([
      ["recovered", "resolved"],
      ["untracked", "resolved"],
      ["Active", "active"],
    ])("maps status %s to %s", (value, status) => {
      expect(onlyEvent({ ...flat, "kibana.alert.status": value })).toMatchObject({
        status,
        source_event: value,
      });
    });

    it("makes an unknown status unchanged and unmapped, and an unknown severity unmapped", () => {
      expect(
        onlyEvent({
          ...flat,
          "kibana.alert.status": "acknowledged",
          "kibana.alert.severity": "sev0",
          "kibana.alert.start": "2024-05-14T10:02:00.000Z",
        }),
      ).toMatchObject({
        status: "unchanged",
        // An unchanged event has no time, whatever the document's times.
        triggered_at: null,
        resolved_at: null,
        severity: "Medium",
        severity_mapping: "unmapped",
        unmapped: [
          { field: "status", value: "acknowledged" },
          { field: "severity", value: "sev0" },
        ],
      });
    });
  });
});

describe("parseElastic: bad input", () => {
  const notKibana = {
    ok: false,
    error:
      "not a Kibana webhook: expected a JSON object with rule and alert objects, webhook_body, or kibana.alert.* fields",
  };

  itRejectsUnreadableBodies(parseElastic, {
    empty: "",
    notJson: [
      ["plain text", "rule fired"],
      ["truncated JSON", '{"alert":{"actionGroup":"recovered","id":"*"},"rule":{"name":"x"'],
      // A template that forgets quotes around a variable.
      ["an unquoted Mustache value", '{"rule":{"id":"r"},"alert":{"actionGroup":logs.threshold.fired}}'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [kibana()]],
    ["a string", "recovered"],
    ["null", null],
    ["a Dynatrace body", { PID: "1", State: "OPEN" }],
    ["rule and alert as strings", { rule: "rule-1", alert: "host-a" }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notKibana);
  });

  it("names a missing rule.id", () => {
    expect(parseJson(kibana({}, { id: "" }))).toEqual({
      ok: false,
      error: "not a Kibana webhook: rule.id is missing",
    });
    expect(parseJson({ alert: { actionGroup: "recovered" } })).toEqual({
      ok: false,
      error: "not a Kibana webhook: rule.id is missing",
    });
  });

  it("names a missing action group", () => {
    expect(parseJson(kibana({ actionGroup: undefined, actionGroupName: undefined }))).toEqual({
      ok: false,
      error: "not a Kibana webhook: alert.actionGroup (or actionGroupName) is missing",
    });
    expect(parseJson({ rule: { id: "rule-1" } })).toEqual({
      ok: false,
      error: "not a Kibana webhook: alert.actionGroup (or actionGroupName) is missing",
    });
  });

  it.each([
    ["text that is not JSON", "{rule.id}"],
    ["JSON that is not an object", "[1,2]"],
    ["a number", 5],
  ])("names a Keep field holding %s", (_name, ruleInfo) => {
    expect(
      parseJson({
        webhook_body: { rule_info: ruleInfo, alert_info: '{"actionGroup":"x"}', context_info: "{}" },
      }),
    ).toEqual({ ok: false, error: "not a Kibana webhook: webhook_body.rule_info is not a JSON object" });
  });

  it("names what Keep's template lacks", () => {
    expect(parseJson({ webhook_body: { alert_info: '{"actionGroup":"x"}' } })).toEqual({
      ok: false,
      error: "not a Kibana webhook: rule.id is missing",
    });
  });
});
