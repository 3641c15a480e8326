import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { eventsOf, onlyEventOf } from "../../../test/parse-results.ts";
import { parseGrafana } from "./grafana.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("grafana", name);
  return parseGrafana({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseGrafana({ body: JSON.stringify(payload), headers: {}, options });
}

const MISSING_SEVERITY = {
  source_severity: "",
  severity: "Medium",
  display_priority: 3,
  severity_mapping: "missing",
} as const;

// Expected events below were written by hand from the fixture files and section 3 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "docs-firing-2-alerts.json": [
    ["c6eadffa33fcdf37", "High memory usage", "us-1", "2021-10-12T07:51:03.157Z", "1afz29v7z", "T2"],
    ["bc97ff14869b13e3", "High CPU usage", "eu-1", "2021-10-12T07:56:03.157Z", "d1rdpdv7k", "T1"],
  ].map(([uid, alertname, zone, startsAt, rule, silenced]) => ({
    external_uid: uid as string,
    status: "active",
    ignore_reason: null,
    title: alertname as string,
    title_is_fallback: false,
    description: `This alert was triggered for zone ${zone}\n\nThe system has ${alertname === "High CPU usage" ? "high CPU usage" : "high memory usage"}`,
    ...MISSING_SEVERITY,
    // +02:00 offset, microseconds truncated.
    triggered_at: startsAt as string,
    resolved_at: null,
    labels: { alertname: alertname as string, team: "blue", zone: zone as string },
    // dashboardURL and panelURL are "": no dashboard links.
    links: [
      { kind: "source", url: `https://play.grafana.org/alerting/${rule}/edit` },
      {
        kind: "silence",
        url: `https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matchers=alertname%3D${silenced}%2Cteam%3Dblue%2Czone%3D${zone}`,
      },
      { kind: "runbook", url: "https://myrunbook.com/runbook/1234" },
    ],
    is_test: false,
    source_event: "firing",
    unmapped: [],
  })),

  // The top-level `state: ok` and `status: resolved` are not read; the alert's own status is.
  "v9-resolved-single.json": [
    {
      external_uid: "d8a21484c9c25a60",
      status: "resolved",
      ignore_reason: null,
      title: "Test alert",
      title_is_fallback: false,
      description: "This is a summary field, failure on <no value>\n\nThis is a description",
      ...MISSING_SEVERITY,
      triggered_at: "2022-06-17T00:41:00.782Z",
      resolved_at: "2022-06-17T00:51:24.067Z",
      labels: { alertname: "Test alert", test: "true" },
      links: [
        { kind: "source", url: "https://grafana.example.com/alerting/grafana/zTjxv_C7k/view" },
        {
          kind: "silence",
          url: "https://grafana.example.com/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DTest+alert&matcher=test%3Dtrue",
        },
        { kind: "runbook", url: "https://example.com/" },
      ],
      is_test: false,
      source_event: "resolved",
      unmapped: [],
    },
  ],

  "v11-firing-values-imageurl.json": [
    {
      external_uid: "e6349a25f5ef0e9e",
      status: "active",
      ignore_reason: null,
      title: "Memory (copy)",
      title_is_fallback: false,
      description: "High memory usage",
      ...MISSING_SEVERITY,
      triggered_at: "2024-03-01T02:09:00.000Z",
      resolved_at: null,
      // grafana_folder is stripped.
      labels: { alertname: "Memory (copy)", debug: "true" },
      links: [
        {
          kind: "source",
          url: "https://play.grafana.org/alerting/grafana/dd2f0260-3cfc-4c65-a4c4-f3f632c551f4/view?orgId=1",
        },
        { kind: "dashboard", url: "https://play.grafana.org/d/ece9fb32-7f71-4be9-bd94-2f23608ae5b9?orgId=1" },
        {
          kind: "dashboard",
          url: "https://play.grafana.org/d/ece9fb32-7f71-4be9-bd94-2f23608ae5b9?orgId=1&viewPanel=2",
        },
        {
          kind: "silence",
          url: "https://play.grafana.org/alerting/silence/new?alertmanager=grafana&matcher=alertname%3DMemory+%28copy%29&matcher=debug%3Dtrue&matcher=grafana_folder%3Ddevice&orgId=1",
        },
        { kind: "image", url: "https://grafana.com/assets/img/blog/mixed_styles.png" },
      ],
      is_test: false,
      source_event: "firing",
      unmapped: [],
    },
  ],

  // Grafana's test alert: bucket info whatever the severity, vigil_test, relative generatorURL
  // resolved against externalURL.
  "v12-test-notification.json": [
    {
      external_uid: "c4edaaf9f9f839b0",
      status: "active",
      ignore_reason: null,
      title: "TestAlert",
      title_is_fallback: false,
      description: "TEST\n\nTest Description",
      source_severity: "",
      severity: "info",
      display_priority: 5,
      severity_mapping: "missing",
      triggered_at: "2026-05-05T13:04:57.622Z",
      resolved_at: null,
      labels: { vigil_test: "true", alertname: "TestAlert", instance: "Grafana" },
      links: [
        { kind: "source", url: "https://grafana.example.com/?orgId=1" },
        { kind: "dashboard", url: "https://grafana.example.com/d/dashboard_uid" },
        { kind: "dashboard", url: "https://grafana.example.com/d/dashboard_uid?viewPanel=1" },
        { kind: "silence", url: "https://grafana.example.com/alerting/silence/new" },
      ],
      is_test: true,
      source_event: "firing",
      unmapped: [],
    },
  ],

  "legacy-alerting-evalmatches-tags.json": [
    {
      external_uid: "legacy-58",
      status: "active",
      ignore_reason: null,
      title: "Testing -> Battery Voltage alert",
      title_is_fallback: false,
      description: "Battery Voltage dropped below 23.7 Volts, please investigate",
      source_severity: "warning",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      // The rule's tags, not the evalMatches' tags.
      labels: {
        enabled: "true",
        relay: "7",
        "on-alerting": "relay-on",
        "on-ok": "ignore",
        environment: "Staging",
        severity: "warning",
        service: "Physical",
        group: "BatteryPower",
      },
      links: [
        {
          kind: "source",
          url: "https://grafana.logreposit.com/d/Rs6E_oHWk/playground?fullscreen&edit&tab=alert&panelId=2&orgId=1",
        },
      ],
      is_test: false,
      source_event: "alerting",
      unmapped: [],
    },
  ],
};

describe("parseGrafana: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("grafana", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// A minimal unified alert for the variants no fixture shows.
function alert(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    status: "firing",
    labels: { alertname: "DiskFull", instance: "db-1", severity: "critical" },
    annotations: { summary: "Disk is full" },
    startsAt: "2024-05-14T10:12:31Z",
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: "https://grafana.example.com/alerting/grafana/abc/view",
    fingerprint: "1111222233334444",
    ...overrides,
  };
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

describe("parseGrafana: unified alerting variants", () => {
  it("builds a whole event from a minimal alert", () => {
    expect(onlyEvent({ alerts: [alert()] })).toEqual({
      external_uid: "1111222233334444",
      status: "active",
      ignore_reason: null,
      title: "DiskFull",
      title_is_fallback: false,
      description: "Disk is full",
      source_severity: "critical",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: null,
      labels: { alertname: "DiskFull", instance: "db-1", severity: "critical" },
      links: [{ kind: "source", url: "https://grafana.example.com/alerting/grafana/abc/view" }],
      is_test: false,
      source_event: "firing",
      unmapped: [],
    });
  });

  it("fingerprints the labels as received when there is no fingerprint, then strips __ labels", () => {
    const labels = { alertname: "DiskFull", __alert_rule_uid__: "abc", instance: "db-1" };
    for (const fingerprint of [undefined, null, ""]) {
      expect(onlyEvent({ alerts: [alert({ labels, fingerprint })] })).toMatchObject({
        // FNV-1a 64 over the three labels, computed independently.
        external_uid: "683eafd2928e758b",
        labels: { alertname: "DiskFull", instance: "db-1" },
      });
    }
  });

  it("decides status per alert in a group mixing firing and resolved alerts", () => {
    const events = eventsOf(
      parseJson({
        status: "firing",
        state: "alerting",
        alerts: [
          alert({ fingerprint: "aaaaaaaaaaaaaaaa", endsAt: "2024-05-14T10:17:31Z" }),
          alert({ fingerprint: "bbbbbbbbbbbbbbbb", status: "resolved", endsAt: "2024-05-14T11:00:00.250Z" }),
        ],
      }),
    );
    expect(events.map((event) => [event.external_uid, event.status, event.resolved_at])).toEqual([
      ["aaaaaaaaaaaaaaaa", "active", null],
      ["bbbbbbbbbbbbbbbb", "resolved", "2024-05-14T11:00:00.250Z"],
    ]);
  });

  it("never takes the status from the top-level status or state", () => {
    expect(onlyEvent({ status: "resolved", state: "ok", alerts: [alert()] }).status).toBe("active");
  });

  it("ignores an alert resolved because its rule was paused", () => {
    expect(
      onlyEvent({
        alerts: [
          alert({
            status: "resolved",
            endsAt: "2024-05-14T11:00:00Z",
            annotations: { summary: "Disk is full", grafana_state_reason: "Paused" },
          }),
        ],
      }),
    ).toMatchObject({
      status: "ignored",
      ignore_reason: "grafana: Paused",
      source_event: "resolved",
      resolved_at: null,
      unmapped: [],
    });
  });

  it.each(["MissingSeries", "RuleDeleted", "Updated"])("resolves an alert with state reason %s", (reason) => {
    expect(
      onlyEvent({
        alerts: [
          alert({
            status: "resolved",
            endsAt: "2024-05-14T11:00:00Z",
            annotations: { grafana_state_reason: reason },
          }),
        ],
      }),
    ).toMatchObject({ status: "resolved", ignore_reason: null, resolved_at: "2024-05-14T11:00:00.000Z" });
  });

  it("flags NoData from the state reason or the DatasourceNoData alert name", () => {
    expect(
      onlyEvent({ alerts: [alert({ annotations: { grafana_state_reason: "NoData" } })] }).labels,
    ).toEqual({ vigil_no_data: "true", alertname: "DiskFull", instance: "db-1", severity: "critical" });
    expect(
      onlyEvent({ alerts: [alert({ labels: { alertname: "DatasourceNoData", rulename: "Disk" } })] }),
    ).toMatchObject({ status: "active", labels: { vigil_no_data: "true", alertname: "DatasourceNoData" } });
  });

  it("makes an unknown alert status unchanged and unmapped", () => {
    expect(onlyEvent({ alerts: [alert({ status: "pending" })] })).toMatchObject({
      status: "unchanged",
      source_event: "pending",
      unmapped: [{ field: "status", value: "pending" }],
    });
  });

  it("marks an unknown severity unmapped and applies overrides", () => {
    const labels = { alertname: "X", severity: "page" };
    expect(onlyEvent({ alerts: [alert({ labels })] })).toMatchObject({
      source_severity: "page",
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "page" }],
    });
    expect(
      onlyEvent({ alerts: [alert({ labels })] }, { severityOverrides: { page: "Critical" } }),
    ).toMatchObject({ severity: "Critical", severity_mapping: "mapped", unmapped: [] });
  });

  it("falls back from alertname to the summary, then to the uid", () => {
    expect(onlyEvent({ alerts: [alert({ labels: { severity: "low" } })] })).toMatchObject({
      title: "Disk is full",
      title_is_fallback: false,
    });
    expect(onlyEvent({ alerts: [alert({ labels: {}, annotations: {} })] })).toMatchObject({
      title: "grafana alert 1111222233334444",
      title_is_fallback: true,
      description: "",
    });
  });

  it("uses message when there is no description annotation", () => {
    expect(onlyEvent({ alerts: [alert({ annotations: { summary: "S", message: "M" } })] }).description).toBe(
      "S\n\nM",
    );
  });

  it("resolves only a relative generatorURL against externalURL and drops other relative links", () => {
    expect(
      onlyEvent({
        externalURL: "https://grafana.example.com/grafana/",
        alerts: [alert({ generatorURL: "alerting/grafana/abc/view?orgId=1", dashboardURL: "/d/abc" })],
      }).links,
    ).toEqual([
      { kind: "source", url: "https://grafana.example.com/grafana/alerting/grafana/abc/view?orgId=1" },
    ]);
    expect(onlyEvent({ alerts: [alert({ generatorURL: "?orgId=1" })] }).links).toEqual([]);
  });

  it("is not a test notification unless both TestAlert and instance Grafana are present", () => {
    expect(onlyEvent({ alerts: [alert({ labels: { alertname: "TestAlert" } })] }).is_test).toBe(false);
    expect(
      onlyEvent({ alerts: [alert({ labels: { alertname: "TestAlert", instance: "Grafana" } })] }),
    ).toMatchObject({ is_test: true, severity: "info", display_priority: 5 });
  });

  it("yields no events for an empty alerts list", () => {
    expect(parseJson({ status: "firing", alerts: [] })).toEqual({ ok: true, events: [] });
  });
});

// A legacy (Grafana 7 and older) notification.
function legacy(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    evalMatches: [{ value: 95, metric: "cpu", tags: { host: "db-1" } }],
    message: "CPU is high",
    ruleId: 7,
    ruleName: "CPU alert",
    ruleUrl: "https://grafana.example.com/d/abc?panelId=2",
    state: "alerting",
    tags: { team: "db" },
    title: "[Alerting] CPU alert",
    ...overrides,
  };
}

describe("parseGrafana: legacy alerting variants", () => {
  it.each([
    ["alerting", "active", null, []],
    ["ok", "resolved", null, []],
    ["no_data", "active", null, ["vigil_no_data"]],
    ["paused", "ignored", "grafana: paused", []],
    ["pending", "unchanged", null, []],
    ["Alerting", "active", null, []],
  ])("maps state %s", (state, status, ignoreReason, flags) => {
    const event = onlyEvent(legacy({ state }));
    expect(event).toMatchObject({ status, ignore_reason: ignoreReason, source_event: state, unmapped: [] });
    expect(Object.keys(event.labels)).toEqual([...flags, "team"]);
  });

  it("makes an unknown state unchanged and unmapped", () => {
    expect(onlyEvent(legacy({ state: "unknown" }))).toMatchObject({
      status: "unchanged",
      unmapped: [{ field: "status", value: "unknown" }],
    });
  });

  it("takes the title from title without its [State] tag when there is no ruleName", () => {
    expect(onlyEvent(legacy({ ruleName: undefined })).title).toBe("CPU alert");
    expect(onlyEvent(legacy({ ruleName: "", title: "[No Data] Disk [sda] alert" })).title).toBe(
      "Disk [sda] alert",
    );
  });

  it("keeps imageUrl as an image link and reads severity from tags", () => {
    expect(
      onlyEvent(legacy({ imageUrl: "https://grafana.example.com/render/x.png", tags: { severity: "high" } })),
    ).toMatchObject({
      source_severity: "high",
      severity: "High",
      links: [
        { kind: "source", url: "https://grafana.example.com/d/abc?panelId=2" },
        { kind: "image", url: "https://grafana.example.com/render/x.png" },
      ],
    });
  });

  it("recognises a body with only evalMatches as legacy", () => {
    expect(onlyEvent({ evalMatches: [], state: "ok" })).toMatchObject({
      // No ruleId: the uid is derived from the (empty) rule name.
      external_uid: "6ee49af0d267f6310528fcd5e2ed2f51",
      status: "resolved",
      title: "grafana alert 6ee49af0d267f6310528fcd5e2ed2f51",
      title_is_fallback: true,
    });
  });

  it("reads Grafana's legacy test notification as a test", () => {
    const testNotification = {
      title: "[Alerting] Test notification",
      ruleId: 0,
      ruleName: "Test notification",
      state: "alerting",
      evalMatches: [
        { value: 100, metric: "High value", tags: null },
        { value: 200, metric: "Higher Value", tags: null },
      ],
      orgId: 0,
      dashboardId: 0,
      panelId: 0,
      tags: {},
      message: "Someone is testing the alert notification within Grafana.",
      ruleUrl: "http://localhost:3000/",
    };
    expect(onlyEvent(testNotification)).toEqual({
      external_uid: "legacy-0",
      status: "active",
      ignore_reason: null,
      title: "Test notification",
      title_is_fallback: false,
      description: "Someone is testing the alert notification within Grafana.",
      source_severity: "",
      severity: "info",
      display_priority: 5,
      severity_mapping: "missing",
      triggered_at: null,
      resolved_at: null,
      labels: { vigil_test: "true" },
      links: [{ kind: "source", url: "http://localhost:3000/" }],
      is_test: true,
      source_event: "alerting",
      unmapped: [],
    });
    expect(onlyEvent({ ...testNotification, ruleId: undefined })).toMatchObject({
      external_uid: "7577517a36b8217df95f7e533bdd1a9b",
      is_test: true,
    });
    expect(onlyEvent({ ...testNotification, ruleId: 12 }).is_test).toBe(false);
  });
});

describe("parseGrafana: bad input", () => {
  const notGrafana = {
    ok: false,
    error:
      "not a Grafana webhook: expected a JSON object with an alerts array (unified alerting) or evalMatches, ruleId or ruleName (legacy alerting)",
  };

  itRejectsUnreadableBodies(parseGrafana, {
    empty: "  ",
    notJson: [
      ["plain text", "Grafana says hi"],
      ["truncated JSON", '{"receiver":"webhook","alerts":[{"status":"firing","labels":{"alertname":"X"'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [alert()]],
    ["null", null],
    ["alerts as an object", { alerts: alert() }],
    ["alerts null beside legacy keys", { alerts: null, ruleName: "X" }],
    ["a notification without alerts", { receiver: "webhook", status: "firing", title: "[FIRING:1] X" }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notGrafana);
  });

  it.each([
    ["null", null],
    ["a string", "firing"],
    ["an alert without labels", { ...alert(), labels: undefined }],
    ["labels as an array", alert({ labels: ["alertname=X"] })],
  ])("rejects an alert that is %s, naming its index", (_name, bad) => {
    expect(parseJson({ alerts: [alert(), bad] })).toEqual({
      ok: false,
      error: "not a Grafana webhook: alerts[1] is not an object with labels",
    });
  });
});
