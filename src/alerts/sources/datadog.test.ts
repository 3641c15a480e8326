import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { eventsOf, onlyEventOf } from "../../../test/parse-results.ts";
import { parseDatadog } from "./datadog.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("datadog", name);
  return parseDatadog({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseDatadog({ body: JSON.stringify(payload), headers: {}, options });
}

// H("352347", "High tracking", ""), the example of alert-sources.md 1.2: the default template has no
// monitor id, so the uid comes from the org, the monitor name and the (empty) scope.
const HIGH_TRACKING_UID = "4836aed9c3d6d24f072b852736e4e4c2";
// H("1325540", "98765432", "kube_namespace:checkout,pod_name:checkout-6b7c9d4f8-2lq9m"), computed
// independently with Python's hashlib.
const POD_CPU_UID = "2425283b561280496d8ddc1f49154ab3";

const POD_CPU_LABELS = {
  env: "production",
  kube_cluster_name: "prod-us1",
  kube_namespace: "checkout",
  monitor: "",
  pod_name: "checkout-6b7c9d4f8-2lq9m",
  service: "checkout",
  team: "payments",
};

function podCpuDescription(transition: string, value: string): string {
  return `## Pod CPU near limit\n${transition} for:\n- kube_namespace: checkout\n- pod_name: checkout-6b7c9d4f8-2lq9m\n- Value: ${value} (Threshold: 90.0)\n\n@webhook-keep-datadog-webhook-integration`;
}

function podCpuUrl(fromTs: string, toTs: string, eventId: string): string {
  return `https://app.datadoghq.com/monitors/98765432?group=kube_namespace%3Acheckout%2Cpod_name%3Acheckout-6b7c9d4f8-2lq9m&from_ts=${fromTs}&to_ts=${toTs}&event_id=${eventId}`;
}

// Expected events below were written by hand from the fixture files and section 4 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "default-template-triggered-p1.json": [
    {
      external_uid: HIGH_TRACKING_UID,
      status: "active",
      ignore_reason: null,
      title: "High tracking",
      title_is_fallback: false,
      description: "We get high datadog.event.tracking.intakev2.audit.bytes",
      source_severity: "P1",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2025-10-01T18:33:04.000Z",
      resolved_at: null,
      labels: {},
      links: [],
      is_test: false,
      source_event: "Triggered",
      unmapped: [],
    },
  ],

  "default-template-recovered-p1.json": [
    {
      external_uid: HIGH_TRACKING_UID,
      status: "resolved",
      ignore_reason: null,
      title: "High tracking",
      title_is_fallback: false,
      description: "We get high datadog.event.tracking.intakev2.audit.bytes",
      source_severity: "P1",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: "2025-10-01T18:35:04.000Z",
      labels: {},
      links: [],
      is_test: false,
      source_event: "Recovered",
      unmapped: [],
    },
  ],

  // No priority and no alert_type: the severity comes from the transition (Triggered -> High).
  "default-template-no-priority-warning.json": [
    {
      // H("352347", "Network alert", "")
      external_uid: "3b7e696ab2fab9d7513834ef8338e463",
      status: "active",
      ignore_reason: null,
      title: "Network alert",
      title_is_fallback: false,
      description: "Network issue detected",
      source_severity: "Triggered",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2025-10-01T18:37:04.000Z",
      resolved_at: null,
      labels: {},
      links: [],
      is_test: false,
      source_event: "Triggered",
      unmapped: [],
    },
  ],

  "keep-template-triggered-k8s-cpu.json": [
    {
      external_uid: POD_CPU_UID,
      status: "active",
      ignore_reason: null,
      title: "Pod CPU near limit",
      title_is_fallback: false,
      description: podCpuDescription("Triggered", "93.41"),
      source_severity: "P2",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:00:12.000Z",
      resolved_at: null,
      labels: POD_CPU_LABELS,
      links: [{ kind: "source", url: podCpuUrl("1715679912000", "1715680812000", "7712345678901234567") }],
      is_test: false,
      source_event: "Triggered",
      unmapped: [],
    },
  ],

  // The priority (P2) comes before alert_type (success), so the bucket stays High.
  "keep-template-recovered-k8s-cpu.json": [
    {
      external_uid: POD_CPU_UID,
      status: "resolved",
      ignore_reason: null,
      title: "Pod CPU near limit",
      title_is_fallback: false,
      description: podCpuDescription("Recovered", "61.07"),
      source_severity: "P2",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: "2024-05-14T10:15:12.000Z",
      labels: POD_CPU_LABELS,
      links: [{ kind: "source", url: podCpuUrl("1715680812000", "1715681712000", "7712345678901298765") }],
      is_test: false,
      source_event: "Recovered",
      unmapped: [],
    },
  ],
};

describe("parseDatadog: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("datadog", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

describe("parseDatadog: title tags", () => {
  it("reads priority, transition and scope from the title when the fields are absent", () => {
    expect(
      onlyEvent({ title: "[P4] [Re-No Data on {host:a, env:prod}] Disk latency", date: 1715680812 }),
    ).toEqual({
      // H("", "Disk latency", "env:prod,host:a"): no org, the scope sorted.
      external_uid: "32be561b662acb2e61c1226237116a9b",
      status: "active",
      ignore_reason: null,
      title: "Disk latency",
      title_is_fallback: false,
      description: "",
      source_severity: "P4",
      severity: "Low",
      display_priority: 4,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:00:12.000Z",
      resolved_at: null,
      labels: { vigil_no_data: "true", env: "prod", host: "a" },
      links: [],
      is_test: false,
      source_event: "Re-No Data",
      unmapped: [],
      reminder: true,
    });
  });

  it("stops at the first bracket that is neither a priority nor a transition", () => {
    expect(onlyEvent({ title: "[P1] [prod] [Triggered] Disk" })).toMatchObject({
      // H("", "[prod] [Triggered] Disk", "")
      external_uid: "457dc5c2e376f979237cf4ec0378aab4",
      title: "[prod] [Triggered] Disk",
      source_severity: "P1",
      // No transition at all: unchanged, not unmapped.
      status: "unchanged",
      source_event: "",
      unmapped: [],
    });
  });

  it("matches the tags case-insensitively, in either order", () => {
    expect(onlyEvent({ title: "[warn] [p3] Disk" })).toMatchObject({
      // H("", "Disk", "")
      external_uid: "ec7f646872030c0812a9cf2826e5a950",
      title: "Disk",
      status: "active",
      source_event: "warn",
      source_severity: "p3",
      severity: "Medium",
    });
  });

  it("prefers the fields to the title tags", () => {
    expect(
      onlyEvent({
        title: "[P1] [Triggered on {host:a}] Disk",
        alert_transition: "Recovered",
        alert_priority: "P5",
        alert_scope: "host:b",
      }),
    ).toMatchObject({ status: "resolved", source_severity: "P5", severity: "info", labels: { host: "b" } });
  });
});

describe("parseDatadog: transitions", () => {
  it.each([
    ["Triggered", "active", null],
    ["Re-Triggered", "active", null],
    ["Warn", "active", null],
    ["Re-Warn", "active", null],
    ["Renotify", "active", null],
    ["Recovered", "resolved", null],
    ["Muted", "ignored", "datadog: Muted"],
    ["Null", "unchanged", null],
    ["", "unchanged", null],
  ])("maps %s", (transition, status, ignoreReason) => {
    expect(onlyEvent({ title: "Disk", transition })).toMatchObject({
      status,
      ignore_reason: ignoreReason,
      source_event: transition,
      unmapped: [],
    });
  });

  it.each([
    ["Re-Triggered", "transition", true],
    ["Re-Warn", "alert_transition", true],
    ["Re-No Data", "transition", true],
    ["Renotify", "alert_transition", true],
    ["Triggered", "transition", undefined],
    ["Warn", "alert_transition", undefined],
    ["No Data", "transition", undefined],
    ["Recovered", "transition", undefined],
  ])("marks %s (field %s) as a reminder of the episode under way: %s", (transition, field, reminder) => {
    expect(onlyEvent({ title: "Disk", [field]: transition, date: 1715680812000 }).reminder).toBe(reminder);
  });

  it("reads a renotification from the title tag when the template sends no transition", () => {
    const event = onlyEvent({ title: "[P2] [Renotify on {host:a}] Disk", date: 1715680812000 });
    expect(event).toMatchObject({ status: "active", source_event: "Renotify", reminder: true });
    expect(onlyEvent({ title: "[P2] [Triggered on {host:a}] Disk" }).reminder).toBeUndefined();
  });

  it("flags No Data", () => {
    expect(onlyEvent({ title: "Disk", alert_transition: "No Data" })).toMatchObject({
      status: "active",
      labels: { vigil_no_data: "true" },
      source_severity: "No Data",
      severity: "Low",
    });
  });

  it("makes an unknown transition unchanged and unmapped, without a severity", () => {
    expect(onlyEvent({ title: "Disk", alert_transition: "Escalated", date: 1715680812000 })).toMatchObject({
      status: "unchanged",
      source_event: "Escalated",
      severity_mapping: "missing",
      triggered_at: null,
      resolved_at: null,
      unmapped: [{ field: "status", value: "Escalated" }],
    });
  });

  it("gives a muted event no time and no severity", () => {
    expect(onlyEvent({ title: "[Muted] Disk", date: 1715680812000 })).toMatchObject({
      status: "ignored",
      source_severity: "",
      severity_mapping: "missing",
      triggered_at: null,
      resolved_at: null,
    });
  });
});

describe("parseDatadog: severity", () => {
  it.each([
    [{ priority: "2" }, "2", "High"],
    [{ priority: 4 }, "4", "Low"],
    [{ severity: "critical" }, "critical", "Critical"],
    [{ alert_type: "error" }, "error", "High"],
    [{ alert_type: "warning" }, "warning", "Medium"],
    [{ alert_type: "info" }, "info", "info"],
    [{ alert_type: "success", transition: "Triggered" }, "success", "info"],
    [{ transition: "Warn" }, "Warn", "Medium"],
    [{ transition: "Re-Triggered" }, "Re-Triggered", "High"],
    [{ transition: "Recovered" }, "Recovered", "info"],
  ])("maps %o", (fields, sourceSeverity, bucket) => {
    expect(onlyEvent({ title: "Disk", ...fields })).toMatchObject({
      source_severity: sourceSeverity,
      severity: bucket,
      severity_mapping: "mapped",
      unmapped: [],
    });
  });

  it("marks an unknown priority or alert_type unmapped", () => {
    expect(onlyEvent({ title: "Disk", alert_priority: "SEV-1" })).toMatchObject({
      source_severity: "SEV-1",
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "SEV-1" }],
    });
    expect(onlyEvent({ title: "Disk", alert_type: "user_update" })).toMatchObject({
      source_severity: "user_update",
      severity_mapping: "unmapped",
    });
  });

  it("is missing when nothing gives a severity", () => {
    expect(onlyEvent({ title: "Disk" })).toMatchObject({
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
    });
  });

  it("applies the registration's severity overrides", () => {
    expect(
      onlyEvent({ title: "Disk", alert_priority: "P3" }, { severityOverrides: { p3: "Critical" } }),
    ).toMatchObject({ severity: "Critical", severity_mapping: "mapped" });
  });
});

describe("parseDatadog: other template keys", () => {
  it("uses monitor_id or alert_id, org_id, alert_scope, array tags, link and last_updated", () => {
    expect(
      onlyEvent({
        id: "999",
        title: "[Triggered on {b:2,a:1}] Disk",
        org_id: 7,
        alert_id: "12345",
        alert_scope: " b:2, a:1, ,",
        tags: ["team:db", "a:0", "bare"],
        link: "https://app.datadoghq.com/monitors/12345",
        last_updated: "1715680812000",
      }),
    ).toEqual({
      // H("7", "12345", "a:1,b:2")
      external_uid: "af332f0452e95337845f674e13770aa4",
      status: "active",
      ignore_reason: null,
      title: "Disk",
      title_is_fallback: false,
      description: "",
      source_severity: "Triggered",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:00:12.000Z",
      resolved_at: null,
      // The scope's a:1 wins over the tag a:0.
      labels: { a: "1", b: "2", bare: "", team: "db" },
      links: [{ kind: "source", url: "https://app.datadoghq.com/monitors/12345" }],
      is_test: false,
      source_event: "Triggered",
      unmapped: [],
    });
  });

  it("reads alert_title, text_only_msg and date_posix when title, body and date are absent", () => {
    expect(
      onlyEvent({
        alert_title: "[P2] [Triggered on {host:web-1}] CPU high",
        text_only_msg: "CPU is at 97% on web-1",
        date_posix: "1715680812",
        org_id: "7",
        alert_id: "555",
      }),
    ).toEqual({
      // H("7", "555", "host:web-1"), computed with python3 hashlib.
      external_uid: "15bec808c874545acf073968ae9ddc4f",
      status: "active",
      ignore_reason: null,
      title: "CPU high",
      title_is_fallback: false,
      description: "CPU is at 97% on web-1",
      source_severity: "P2",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      // 1715680812 epoch seconds.
      triggered_at: "2024-05-14T10:00:12.000Z",
      resolved_at: null,
      labels: { host: "web-1" },
      links: [],
      is_test: false,
      source_event: "Triggered",
      unmapped: [],
    });
  });

  it("resolves at date_posix, with the monitor name of alert_title as identity without a monitor id", () => {
    expect(
      onlyEvent({
        alert_title: "[Recovered on {host:web-1}] CPU high",
        date_posix: 1715681712,
        org_id: "7",
      }),
    ).toMatchObject({
      // H("7", "CPU high", "host:web-1"), computed with python3 hashlib.
      external_uid: "8f59ba105da5dcbc2a47c7dc5d42cb2c",
      status: "resolved",
      title: "CPU high",
      triggered_at: null,
      resolved_at: "2024-05-14T10:15:12.000Z",
      source_event: "Recovered",
    });
  });

  it("prefers title, body and date to alert_title, text_only_msg and date_posix, and date_posix to last_updated", () => {
    const both = {
      title: "[Triggered] Disk full",
      alert_title: "[Triggered] Other name",
      body: "the event message",
      text_only_msg: "the text-only message",
      date: "1715680812000",
      date_posix: "1715681712",
      org_id: "7",
    };
    expect(onlyEvent(both)).toMatchObject({
      title: "Disk full",
      description: "the event message",
      triggered_at: "2024-05-14T10:00:12.000Z",
    });
    // last_updated (10:00:12) comes after date_posix (10:15:12), the time of the event itself.
    expect(
      onlyEvent({ title: "[Triggered] Disk full", date_posix: "1715681712", last_updated: "1715680812000" })
        .triggered_at,
    ).toBe("2024-05-14T10:15:12.000Z");
  });

  it("keeps one uid for a monitor whatever the event id and the scope's order", () => {
    const uids = [
      { id: "1", monitor_id: "12345", scopes: "a:1,b:2", title: "Disk", org: { id: "7" } },
      { id: "2", monitor_id: 12345, scopes: "b:2,a:1", title: "Other name", org_id: "7" },
    ].map((payload) => onlyEvent(payload).external_uid);
    expect(uids).toEqual(["af332f0452e95337845f674e13770aa4", "af332f0452e95337845f674e13770aa4"]);
  });

  it("drops the lines that are only %%% (surrounding spaces allowed)", () => {
    expect(
      onlyEvent({ title: "Disk", body: "%%%\r\nDisk **full** 100%%%\n %%% \n\nsee runbook\n%%%" })
        .description,
    ).toBe("Disk **full** 100%%%\n\nsee runbook");
  });

  it("decodes a form-encoded body, parsing a field that holds JSON", () => {
    const form = new URLSearchParams({
      title: "[P3] [Warn on {host:db-1}] Disk",
      org: '{"id":"42","name":"acme"}',
      body: "Disk is filling up",
      date: "1715680812000",
      url: "https://app.datadoghq.com/monitors/1",
    }).toString();
    const result = parseDatadog({
      body: form,
      headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
      options: {},
    });
    expect(eventsOf(result)).toEqual([
      {
        // H("42", "Disk", "host:db-1")
        external_uid: "a8ef8cec671ccdc8472b47919d3d7cc5",
        status: "active",
        ignore_reason: null,
        title: "Disk",
        title_is_fallback: false,
        description: "Disk is filling up",
        source_severity: "P3",
        severity: "Medium",
        display_priority: 3,
        severity_mapping: "mapped",
        triggered_at: "2024-05-14T10:00:12.000Z",
        resolved_at: null,
        labels: { host: "db-1" },
        links: [{ kind: "source", url: "https://app.datadoghq.com/monitors/1" }],
        is_test: false,
        source_event: "Warn",
        unmapped: [],
      },
    ]);
  });

  it("drops an unexpanded $LINK", () => {
    expect(onlyEvent({ title: "Disk", url: "$LINK" }).links).toEqual([]);
  });

  it("falls back to the uid title when only a monitor id is given", () => {
    expect(onlyEvent({ title: "[P1] [Triggered]", monitor_id: "12345", org_id: "7" })).toMatchObject({
      // H("7", "12345", "")
      external_uid: "49acbc141b413b1d07f728db160667ae",
      title_is_fallback: true,
    });
  });
});

describe("parseDatadog: bad input", () => {
  itRejectsUnreadableBodies(parseDatadog, {
    notJson: [
      ["plain text", "Datadog says hi"],
      ["truncated JSON", '{"title":"[P1] [Triggered] High tracking","org":{"id":"352347"'],
      ["a form body without the form content type", "title=Disk&org_id=1"],
    ],
  });

  it.each([
    ["an array", [{ title: "Disk" }]],
    ["a string", "Disk"],
    ["null", null],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual({ ok: false, error: "not a Datadog webhook: expected a JSON object" });
  });

  it.each([
    ["an empty object", {}],
    ["a body without title or monitor id", { id: "1", body: "x", org: { id: "1" } }],
    ["a title made only of tags", { title: "[P1] [Triggered on {host:a}]" }],
    ["a title that is not text", { title: { text: "Disk" } }],
    ["an alert_title made only of tags", { alert_title: "[Triggered on {host:a}]", text_only_msg: "x" }],
  ])("rejects %s, naming what is missing", (_name, payload) => {
    expect(parseJson(payload)).toEqual({
      ok: false,
      error:
        "not a Datadog webhook: expected a title ($EVENT_TITLE), an alert_title ($ALERT_TITLE) or a monitor_id/alert_id ($ALERT_ID)",
    });
  });
});
