import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";
import { parseUptimeKuma } from "./uptime-kuma.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("uptime-kuma", name);
  return parseUptimeKuma({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseUptimeKuma({ body: JSON.stringify(payload), headers: {}, options });
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

// Expected events below were written by hand from the fixture files and section 16 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "v1.23-http-down.json": [
    {
      external_uid: "29",
      status: "active",
      ignore_reason: null,
      title: "Test",
      title_is_fallback: false,
      description: "getaddrinfo ENOTFOUND test.com",
      source_severity: "0",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      // heartbeat.time is UTC without a zone (localDateTime 16:51:35 at -07:00 agrees).
      triggered_at: "2024-09-24T23:51:35.527Z",
      resolved_at: null,
      labels: { monitor_type: "http" },
      links: [],
      is_test: false,
      source_event: "0",
      unmapped: [],
    },
  ],

  "v1.23-http-up-recovered.json": [
    {
      external_uid: "12",
      status: "resolved",
      ignore_reason: null,
      title: "Checkout API",
      title_is_fallback: false,
      description: "200 - OK",
      source_severity: "1",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: "2024-09-25T08:02:11.204Z",
      labels: { env: "production", monitor_type: "http" },
      links: [],
      is_test: false,
      source_event: "1",
      unmapped: [],
    },
  ],

  // No heartbeat.time: localDateTime at timezoneOffset +00:00.
  "keep-test-minimal-up.json": [
    {
      external_uid: "1",
      status: "resolved",
      ignore_reason: null,
      title: "My Site",
      title_is_fallback: false,
      description: "Service online",
      source_severity: "1",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: "2022-08-26T01:02:24.000Z",
      labels: {},
      links: [],
      is_test: false,
      source_event: "1",
      unmapped: [],
    },
  ],
};

describe("parseUptimeKuma: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("uptime-kuma", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// A small 1.23-style body for the variants no fixture shows.
function payload(
  heartbeat: Record<string, unknown> = {},
  monitor: Record<string, unknown> = {},
  msg = "[DB port] [🔴 Down] connect ECONNREFUSED 10.0.0.5:5432",
) {
  return {
    heartbeat: {
      monitorID: 7,
      status: 0,
      time: "2024-05-14 10:12:31.250",
      msg: "connect ECONNREFUSED 10.0.0.5:5432",
      important: true,
      ...heartbeat,
    },
    monitor: { id: 7, name: "DB port", type: "port", hostname: "10.0.0.5", port: 5432, tags: [], ...monitor },
    msg,
  };
}

describe("parseUptimeKuma: documented variants", () => {
  it("builds a whole event for a port monitor with hostname and port", () => {
    expect(onlyEvent(payload())).toEqual({
      external_uid: "7",
      status: "active",
      ignore_reason: null,
      title: "DB port",
      title_is_fallback: false,
      description: "connect ECONNREFUSED 10.0.0.5:5432",
      source_severity: "0",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.250Z",
      resolved_at: null,
      labels: { hostname: "10.0.0.5", monitor_type: "port" },
      links: [],
      is_test: false,
      source_event: "0",
      unmapped: [],
    });
  });

  it("makes the Test button's message a test notification", () => {
    expect(parseJson({ heartbeat: null, monitor: null, msg: "My Webhook Testing" })).toEqual({
      ok: true,
      events: [
        {
          external_uid: "test-notification",
          status: "active",
          ignore_reason: null,
          title: "My Webhook Testing",
          title_is_fallback: false,
          description: "My Webhook Testing",
          source_severity: "",
          severity: "info",
          display_priority: 5,
          severity_mapping: "missing",
          triggered_at: null,
          resolved_at: null,
          labels: { vigil_test: "true" },
          links: [],
          is_test: true,
          source_event: "test",
          unmapped: [],
        },
      ],
    });
  });

  it("makes the Test button's message of a notification without a name a test notification", () => {
    expect(onlyEvent({ heartbeat: null, monitor: null, msg: " Testing" })).toMatchObject({
      external_uid: "test-notification",
      title: "Testing",
      is_test: true,
    });
  });

  it("makes a certificate expiry warning an alert of its own, not a test notification", () => {
    const msg =
      "[Shop][https://shop.example.com] server certificate shop.example.com will be expired in 7 days";
    expect(parseJson({ heartbeat: null, monitor: null, msg })).toEqual({
      ok: true,
      events: [
        {
          // H("[Shop][https://shop.example.com] server certificate shop.example.com"), computed with
          // python3 hashlib: the message without its countdown.
          external_uid: "e38d25f60c157d1c3be57151fa793ead",
          status: "active",
          ignore_reason: null,
          title: msg,
          title_is_fallback: false,
          description: msg,
          source_severity: "warning",
          severity: "Medium",
          display_priority: 3,
          severity_mapping: "mapped",
          triggered_at: null,
          resolved_at: null,
          labels: {},
          links: [],
          is_test: false,
          source_event: "notice",
          unmapped: [],
        },
      ],
    });
  });

  it("keeps one alert per certificate or domain across its expiry warnings", () => {
    const uidOf = (msg: string) => onlyEvent({ heartbeat: null, monitor: null, msg }).external_uid;
    const shop = "[Shop][https://shop.example.com] server certificate shop.example.com";
    // Uptime Kuma 1.23 and 2.x wordings of the 14-day and the 7-day warning of one certificate.
    expect(
      new Set([
        uidOf(`${shop} will be expired in 14 days`),
        uidOf(`${shop} will be expired in 7 days`),
        uidOf(`${shop} will expire in 7 days`),
      ]),
    ).toEqual(new Set(["e38d25f60c157d1c3be57151fa793ead"]));
    // Another certificate of the chain, another monitor, or the wording before 1.23: other subjects.
    const others = [
      "[Shop][https://shop.example.com] intermediate CA certificate R3 will be expired in 7 days",
      "[Blog][https://blog.example.com] server certificate blog.example.com will be expired in 7 days",
      "[Shop][https://shop.example.com] Certificate will be expired in 7 days",
    ].map(uidOf);
    expect(new Set([...others, uidOf(`${shop} will be expired in 7 days`)]).size).toBe(4);
    // Uptime Kuma 2.x domain expiry warnings.
    expect(uidOf("Domain name example.com will expire in 21 days")).toBe("ea1ea4635dfead9200bce4340147c970");
    expect(uidOf("Domain name example.com will expire in 7 days")).toBe("ea1ea4635dfead9200bce4340147c970");
  });

  it("makes any other message without a monitor an alert of that message, with the registration's overrides", () => {
    expect(
      onlyEvent(
        { heartbeat: null, monitor: null, msg: "Disk almost full on backup" },
        { severityOverrides: { warning: "High" } },
      ),
    ).toMatchObject({
      external_uid: "ca9a39cc888b4ac722d194b31c106a03",
      title: "Disk almost full on backup",
      source_severity: "warning",
      severity: "High",
      labels: {},
      is_test: false,
    });
  });

  it.each<[string, Record<string, unknown>, boolean | undefined]>([
    ["a resend while still down (important false)", { important: false }, true],
    ["a resend from a database that stores the flag as 0", { important: 0 }, true],
    ["the change to DOWN (important true)", { important: true }, undefined],
    // JSON leaves an undefined field out: a body without `important`.
    ["a DOWN without the important field", { important: undefined }, undefined],
    ["an UP that is not important", { status: 1, important: false }, undefined],
  ])("marks %s as a reminder of the episode under way: %s", (_name, heartbeat, reminder) => {
    expect(onlyEvent(payload(heartbeat)).reminder).toBe(reminder);
  });

  it("dates a resend by its own heartbeat: the reminder mark, not the time, tells it from a trigger", () => {
    expect(onlyEvent(payload({ important: false }))).toMatchObject({
      status: "active",
      triggered_at: "2024-05-14T10:12:31.250Z",
      reminder: true,
    });
  });

  it("makes PENDING unchanged and Medium, without a time", () => {
    expect(onlyEvent(payload({ status: 2 }))).toMatchObject({
      status: "unchanged",
      ignore_reason: null,
      source_severity: "2",
      severity: "Medium",
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      source_event: "2",
      unmapped: [],
    });
  });

  it("makes MAINTENANCE ignored with the reason maintenance, bucket info", () => {
    expect(onlyEvent(payload({ status: 3 }))).toMatchObject({
      status: "ignored",
      ignore_reason: "uptime-kuma: maintenance",
      source_severity: "3",
      severity: "info",
      triggered_at: null,
      resolved_at: null,
      source_event: "3",
    });
  });

  it.each([
    ["down", "active", "Critical"],
    [" UP ", "resolved", "info"],
    ["Pending", "unchanged", "Medium"],
    ["maintenance", "ignored", "info"],
  ])("accepts the status as the string %j", (status, eventStatus, bucket) => {
    const event = onlyEvent(payload({ status }));
    expect([event.status, event.severity, event.severity_mapping, event.unmapped]).toEqual([
      eventStatus,
      bucket,
      "mapped",
      [],
    ]);
    expect(event.source_event).toBe(status.trim());
  });

  it("makes an unknown status unchanged and its bucket unmapped", () => {
    expect(onlyEvent(payload({ status: 9 }))).toMatchObject({
      status: "unchanged",
      source_severity: "9",
      severity: "Medium",
      severity_mapping: "unmapped",
      triggered_at: null,
      source_event: "9",
      unmapped: [
        { field: "status", value: "9" },
        { field: "severity", value: "9" },
      ],
    });
    expect(onlyEvent(payload({ status: null }))).toMatchObject({
      status: "unchanged",
      source_severity: "",
      severity_mapping: "missing",
      unmapped: [{ field: "status", value: "" }],
    });
  });

  it("lets a severity tag from the generic table override the bucket", () => {
    const tags = [
      { name: "team", value: "db" },
      { name: "severity", value: "warning" },
    ];
    expect(onlyEvent(payload({}, { tags }))).toMatchObject({
      status: "active",
      source_severity: "warning",
      severity: "Medium",
      severity_mapping: "mapped",
      labels: { monitor_type: "port", hostname: "10.0.0.5", severity: "warning", team: "db" },
    });
    // On UP as well: the tag is the monitor's severity, whatever the heartbeat.
    expect(onlyEvent(payload({ status: 1 }, { tags: [{ name: "severity", value: "P1" }] }))).toMatchObject({
      status: "resolved",
      source_severity: "P1",
      severity: "Critical",
    });
  });

  it("ignores a severity tag the generic table does not list", () => {
    expect(onlyEvent(payload({}, { tags: [{ name: "severity", value: "sev0" }] }))).toMatchObject({
      source_severity: "0",
      severity: "Critical",
      severity_mapping: "mapped",
      unmapped: [],
      labels: { hostname: "10.0.0.5", monitor_type: "port", severity: "sev0" },
    });
  });

  it("applies the registration's severity overrides to the status value", () => {
    expect(onlyEvent(payload({ status: 2 }), { severityOverrides: { "2": "High" } })).toMatchObject({
      source_severity: "2",
      severity: "High",
    });
  });

  it('turns tags into labels: empty or null values as "", repeated names joined', () => {
    const tags = [
      { id: 1, monitor_id: 7, tag_id: 1, name: "region", value: "eu", color: "#000" },
      { name: "region", value: "us" },
      { name: "critical-path", value: null },
      { name: "beta", value: "" },
      { name: "", value: "dropped" },
      { value: "no name" },
      "not-a-tag",
    ];
    expect(onlyEvent(payload({}, { tags, hostname: null })).labels).toEqual({
      beta: "",
      "critical-path": "",
      monitor_type: "port",
      region: "eu,us",
    });
  });

  it("uses heartbeat.monitorID when the monitor has no id", () => {
    expect(onlyEvent(payload({ monitorID: 31 }, { id: null })).external_uid).toBe("31");
    expect(onlyEvent({ ...payload({ monitorID: 31 }), monitor: null })).toMatchObject({
      external_uid: "31",
      title: "uptime-kuma alert 31",
      title_is_fallback: true,
      labels: {},
    });
  });

  it("reads localDateTime with timezoneOffset when there is no time, and never a naive local time", () => {
    const local = { time: undefined, localDateTime: "2024-05-14 12:12:31", timezoneOffset: "+02:00" };
    expect(onlyEvent(payload(local)).triggered_at).toBe("2024-05-14T10:12:31.000Z");
    expect(onlyEvent(payload({ ...local, timezoneOffset: undefined })).triggered_at).toBeNull();
  });

  it("falls back to the top-level msg when the heartbeat has none", () => {
    expect(onlyEvent(payload({ msg: "" })).description).toBe(
      "[DB port] [🔴 Down] connect ECONNREFUSED 10.0.0.5:5432",
    );
  });

  it("ignores the fields Uptime Kuma 2.x adds", () => {
    const v2 = payload(
      { retries: 3, response: "refused", lastDownTime: "2024-05-14 10:10:00", end_time: null },
      { conditions: [], kafkaProducerSaslOptions: { mechanism: "None" }, cacheBust: false },
    );
    expect(onlyEvent(v2)).toEqual(onlyEvent(payload()));
  });
});

describe("parseUptimeKuma: bad input", () => {
  itRejectsUnreadableBodies(parseUptimeKuma, {
    empty: "",
    notJson: [
      ["plain text", "[DB port] [🔴 Down] refused"],
      ["truncated JSON", '{"heartbeat":{"monitorID":7,"status":0},"monitor":{"id":7,"name":"DB'],
    ],
  });

  it.each([
    ["an array", [payload()]],
    ["null", null],
    ["a string", "down"],
  ])("rejects %s", (_name, body) => {
    expect(parseJson(body)).toEqual({
      ok: false,
      error: "not an Uptime Kuma webhook: expected a JSON object with heartbeat and monitor",
    });
  });

  it.each([
    ["an empty object", {}],
    ["only msg (no null monitor and heartbeat)", { msg: "hello" }],
    ["a null heartbeat with a monitor", { heartbeat: null, monitor: { id: 1, name: "x" }, msg: "x" }],
    ["a heartbeat as a string", { heartbeat: "down", monitor: { id: 1 }, msg: "x" }],
    ["a monitor as an array", { heartbeat: { status: 0, monitorID: 1 }, monitor: [1], msg: "x" }],
    ["an Alertmanager body", { version: "4", alerts: [] }],
  ])("rejects %s", (_name, body) => {
    expect(parseJson(body)).toEqual({
      ok: false,
      error: "not an Uptime Kuma webhook: expected heartbeat and monitor objects",
    });
  });

  it.each([
    ["no msg", { heartbeat: null, monitor: null }],
    ["an empty msg", { heartbeat: null, monitor: null, msg: "  " }],
  ])("rejects a body without monitor and heartbeat and %s", (_name, body) => {
    expect(parseJson(body)).toEqual({
      ok: false,
      error: "not an Uptime Kuma webhook: msg is empty and there is no monitor or heartbeat",
    });
  });

  it("rejects a heartbeat without any monitor id", () => {
    expect(parseJson(payload({ monitorID: undefined }, { id: undefined }))).toEqual({
      ok: false,
      error: "not an Uptime Kuma webhook: neither monitor.id nor heartbeat.monitorID is set",
    });
  });
});
