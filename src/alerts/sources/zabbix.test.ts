import { describe, expect, it } from "vitest";
import { deliverAlerts, readAlert, registerTrigger } from "../../../test/alerts.ts";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { describeEachEngine } from "../../../test/harness.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import type { AlertEvent, AlertLink, ParseResult, ParserOptions } from "./types.ts";
import { parseZabbix } from "./zabbix.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("zabbix", name);
  return parseZabbix({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseZabbix({ body: JSON.stringify(payload), headers: {}, options });
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

const CPU_TAGS = {
  class: "os",
  component: "cpu",
  environment: "production",
  scope: "performance",
  target: "linux",
  host: "k8s-node-07.prod",
};
const CPU_LINKS: AlertLink[] = [
  { kind: "source", url: "https://zabbix.example.com/tr_events.php?triggerid=23711&eventid=31254" },
];

// Expected events below were written by hand from the fixture files and section 12 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "zulip-mediatype-problem.json": [
    {
      // The triggerid of `link`.
      external_uid: "14032",
      status: "active",
      ignore_reason: null,
      title: "Zabbix agent on www.example.com is unreachable for 5 minutes",
      title_is_fallback: false,
      description: "Agent ping is Up (1)",
      source_severity: "Average",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: { host: "www.example.com" },
      links: [
        { kind: "source", url: "https://zabbix.example.com/tr_events.php?triggerid=14032&eventid=10528" },
      ],
      is_test: false,
      source_event: "PROBLEM",
      unmapped: [],
    },
  ],

  "zulip-mediatype-ok.json": [
    {
      // Same trigger as the problem, although the eventid differs.
      external_uid: "14032",
      status: "resolved",
      ignore_reason: null,
      title: "Zabbix agent on www.example.com is reachable",
      title_is_fallback: false,
      description: "Agent ping is Up (1)",
      source_severity: "Average",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: { host: "www.example.com" },
      links: [
        { kind: "source", url: "https://zabbix.example.com/tr_events.php?triggerid=14032&eventid=10529" },
      ],
      is_test: false,
      source_event: "OK",
      unmapped: [],
    },
  ],

  "keep-script-problem-high.json": [
    {
      external_uid: "23711",
      status: "active",
      ignore_reason: null,
      title: "High CPU utilization (over 90% for 5m)",
      title_is_fallback: false,
      description:
        "Problem started at 10:12:31 on 2024.05.14\r\nProblem name: High CPU utilization (over 90% for 5m)\r\nHost: k8s-node-07.prod\r\nSeverity: High\r\nOperational data: Current utilization: 94.21 %\r\nOriginal problem ID: 31254",
      source_severity: "High",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: null,
      labels: CPU_TAGS,
      links: CPU_LINKS,
      is_test: false,
      // `value` decides before `status`.
      source_event: "1",
      unmapped: [],
    },
  ],

  "keep-script-resolved.json": [
    {
      external_uid: "23711",
      status: "resolved",
      ignore_reason: null,
      title: "High CPU utilization (over 90% for 5m)",
      title_is_fallback: false,
      description:
        "Problem has been resolved at 10:31:02 on 2024.05.14\r\nProblem name: High CPU utilization (over 90% for 5m)\r\nProblem duration: 18m 31s\r\nHost: k8s-node-07.prod\r\nSeverity: High\r\nOriginal problem ID: 31254",
      source_severity: "High",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      // On recovery `time` is still the problem's time of day, of an unknown date: no triggered_at.
      triggered_at: null,
      resolved_at: "2024-05-14T10:31:02.000Z",
      labels: CPU_TAGS,
      links: CPU_LINKS,
      is_test: false,
      source_event: "0",
      unmapped: [],
    },
  ],

  "keep-script-acknowledged-update.json": [
    {
      external_uid: "23744",
      status: "unchanged",
      ignore_reason: null,
      title: "Space is critically low on /var/lib/docker (used > 90%, total 99.9GB)",
      title_is_fallback: false,
      // Not the message: on an update it tells about the acknowledgement.
      description:
        "Two conditions should match: First, space utilization should be above {$VFS.FS.PUSED.MAX.CRIT}.",
      source_severity: "Disaster",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      // lastReceived 2024.05.14 10:40:05 with the problem's time 10:35:47.
      triggered_at: "2024-05-14T10:35:47.000Z",
      resolved_at: null,
      labels: {
        class: "os",
        component: "storage",
        environment: "staging",
        filesystem: "/var/lib/docker",
        host: "db-primary-01",
      },
      links: [
        { kind: "source", url: "https://zabbix.example.com/tr_events.php?triggerid=23744&eventid=31260" },
      ],
      is_test: false,
      source_event: "acknowledged",
      unmapped: [],
    },
  ],
};

describe("parseZabbix: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("zabbix", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// Zabbix's own media types name their parameters event_*, trigger_* and host.
function zabbixMediaType(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_id: "900",
    trigger_id: "500",
    event_name: "Disk full on web-01",
    event_nseverity: "4",
    event_severity: "High",
    event_value: "1",
    event_status: "PROBLEM",
    event_update_action: "{EVENT.UPDATE.ACTION}",
    event_tags_json: [
      { tag: "service", value: "web" },
      { tag: "service", value: "api" },
    ],
    host: "web-01",
    ...overrides,
  };
}

describe("parseZabbix: documented variants", () => {
  it("reads the parameter names of Zabbix's own media types, with unexpanded macros as absent", () => {
    expect(onlyEvent(zabbixMediaType())).toEqual({
      external_uid: "500",
      status: "active",
      ignore_reason: null,
      title: "Disk full on web-01",
      title_is_fallback: false,
      description: "",
      source_severity: "4",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: null,
      labels: { service: "web,api", host: "web-01" },
      links: [],
      is_test: false,
      source_event: "1",
      unmapped: [],
    });
  });

  it("takes trigger_name and event_tags_json as text", () => {
    const event = onlyEvent(
      zabbixMediaType({
        event_name: undefined,
        trigger_name: "Trigger name",
        event_tags_json: '[{"tag":"team","value":"ops"}]',
      }),
    );
    expect(event).toMatchObject({ title: "Trigger name", labels: { team: "ops", host: "web-01" } });
  });

  it("keeps a tag named host over the host parameter", () => {
    const event = onlyEvent(zabbixMediaType({ event_tags_json: [{ tag: "host", value: "vip" }] }));
    expect(event.labels).toEqual({ host: "vip" });
  });

  it("reads {EVENT.TAGS} tag strings when the tags are not JSON", () => {
    const event = onlyEvent(zabbixMediaType({ event_tags_json: undefined, tags: "class:os, scope=perf" }));
    expect(event.labels).toEqual({ class: "os", scope: "perf", host: "web-01" });
  });

  it("ignores an unexpanded tags macro", () => {
    const event = onlyEvent(zabbixMediaType({ event_tags_json: undefined, tags: "{EVENT.TAGSJSON}" }));
    expect(event.labels).toEqual({ host: "web-01" });
  });

  it("derives the uid from host and title without a trigger id", () => {
    const event = onlyEvent(zabbixMediaType({ trigger_id: "{TRIGGER.ID}" }));
    expect(event.external_uid).toBe("5ba54d4c0e2469f536cc330f3cb36d97");
    expect(onlyEvent({ trigger: "Disk full on web-01", status: "PROBLEM" }).external_uid).toBe(
      "940a356e7a780f29f83e52b1bdb06e64",
    );
  });

  it("prefers triggerId over trigger_id and the link, and hashes an id that is not path-safe", () => {
    const link = "https://z.example.com/tr_events.php?triggerid=3&eventid=4";
    expect(onlyEvent({ triggerId: "1", trigger_id: "2", link, name: "X" }).external_uid).toBe("1");
    expect(onlyEvent({ trigger_id: "2", link, name: "X" }).external_uid).toBe("2");
    expect(onlyEvent({ triggerId: "23 711", name: "X" }).external_uid).toBe(
      "1749e4a8a5b86e1f2c42fbaf3b38465b",
    );
  });

  describe("status from an update operation", () => {
    it.each([
      ["closed", "resolved"],
      ["acknowledged, commented, closed", "resolved"],
      ["suppressed", "ignored"],
      ["commented, Suppressed", "ignored"],
      ["unsuppressed", "active"],
      ["unacknowledged", "unchanged"],
      ["changed severity from Warning to High", "unchanged"],
      ["ranked as cause", "unchanged"],
    ])("%s -> %s", (action, status) => {
      const event = onlyEvent(zabbixMediaType({ event_update_action: action }));
      expect(event).toMatchObject({ status, source_event: action, unmapped: [] });
      expect(event.ignore_reason).toBe(status === "ignored" ? "zabbix: suppressed" : null);
    });

    it("gives the problem back as it stands when a suppression ends", () => {
      const unsuppressed = (fields: Record<string, unknown>) =>
        onlyEvent(zabbixMediaType({ event_update_action: "unsuppressed", ...fields }));
      expect(unsuppressed({ event_value: "0" })).toMatchObject({
        status: "resolved",
        source_event: "unsuppressed",
      });
      expect(unsuppressed({ event_value: "{EVENT.VALUE}", event_status: "PROBLEM" }).status).toBe("active");
      // Without a state in the body, nothing to go by.
      expect(unsuppressed({ event_value: "{EVENT.VALUE}", event_status: "{EVENT.STATUS}" })).toMatchObject({
        status: "unchanged",
        unmapped: [],
      });
    });

    it("wins over value and status", () => {
      const event = onlyEvent(zabbixMediaType({ event_update_action: "closed", event_value: "1" }));
      expect(event.status).toBe("resolved");
    });
  });

  it("takes the status from value, then the status text", () => {
    expect(onlyEvent(zabbixMediaType({ event_value: "0" }))).toMatchObject({
      status: "resolved",
      source_event: "0",
    });
    expect(
      onlyEvent(zabbixMediaType({ event_value: "{EVENT.VALUE}", event_status: "RESOLVED" })),
    ).toMatchObject({ status: "resolved", source_event: "RESOLVED" });
    expect(onlyEvent({ name: "X", status: " ok " })).toMatchObject({
      status: "resolved",
      source_event: "ok",
    });
    expect(onlyEvent({ name: "X", status: "problem" })).toMatchObject({ status: "active" });
  });

  it("makes an unknown or missing status unchanged and unmapped", () => {
    expect(onlyEvent({ name: "X", status: "UNKNOWN" })).toMatchObject({
      status: "unchanged",
      source_event: "UNKNOWN",
      unmapped: [{ field: "status", value: "UNKNOWN" }],
    });
    expect(onlyEvent({ name: "X" })).toMatchObject({
      status: "unchanged",
      source_event: "",
      unmapped: [{ field: "status", value: "" }],
    });
  });

  describe("severity", () => {
    it.each([
      [{ nseverity: "5", severity: "Information" }, "5", "Critical"],
      [{ event_nseverity: "3", severity: "Disaster" }, "3", "Medium"],
      [{ severity: "2" }, "2", "Low"],
      [{ severity: "1" }, "1", "info"],
      [{ severity: "0" }, "0", "info"],
      [{ severity: "Warning" }, "Warning", "Low"],
      [{ severity: "not classified" }, "not classified", "info"],
      [{ severity: "information" }, "information", "info"],
      [{ event_severity: "Average" }, "Average", "Medium"],
      [{ severity: "{EVENT.SEVERITY}", event_severity: "High" }, "High", "High"],
    ])("%j -> %s %s", (fields, source, bucket) => {
      expect(onlyEvent({ name: "X", status: "PROBLEM", ...fields })).toMatchObject({
        source_severity: source,
        severity: bucket,
        severity_mapping: "mapped",
        unmapped: [],
      });
    });

    it("leaves a renamed name or a generic word unmapped: the Zabbix table replaces the generic one", () => {
      for (const name of ["Sev-1 Page", "critical", "7"]) {
        expect(onlyEvent({ name: "X", status: "PROBLEM", severity: name })).toMatchObject({
          source_severity: name,
          severity: "Medium",
          severity_mapping: "unmapped",
          unmapped: [{ field: "severity", value: name }],
        });
      }
    });

    it("is missing when no severity is sent, and follows the registration's overrides", () => {
      expect(onlyEvent({ name: "X", status: "PROBLEM" })).toMatchObject({
        source_severity: "",
        severity: "Medium",
        severity_mapping: "missing",
      });
      const options: ParserOptions = { severityOverrides: { "Sev-1 Page": "Critical" } };
      expect(onlyEvent({ name: "X", status: "PROBLEM", severity: "Sev-1 Page" }, options)).toMatchObject({
        severity: "Critical",
        severity_mapping: "mapped",
      });
    });
  });

  describe("times", () => {
    const base = { triggerId: "1", name: "X", value: "1", lastReceived: "2024.05.14 00:05:00" };

    it("puts a problem time later than lastReceived on the day before", () => {
      expect(onlyEvent({ ...base, time: "23:58:10" }).triggered_at).toBe("2024-05-13T23:58:10.000Z");
    });

    it("uses lastReceived when time is absent or unreadable", () => {
      expect(onlyEvent(base).triggered_at).toBe("2024-05-14T00:05:00.000Z");
      expect(onlyEvent({ ...base, time: "{EVENT.TIME}" }).triggered_at).toBe("2024-05-14T00:05:00.000Z");
      expect(onlyEvent({ ...base, time: "25:00:00" }).triggered_at).toBe("2024-05-14T00:05:00.000Z");
    });

    it("gives resolved_at on a recovery and on a close", () => {
      expect(onlyEvent({ ...base, value: "0", time: "23:00:00" })).toMatchObject({
        triggered_at: null,
        resolved_at: "2024-05-14T00:05:00.000Z",
      });
      expect(onlyEvent({ ...base, update_action: "closed" })).toMatchObject({
        triggered_at: null,
        resolved_at: "2024-05-14T00:05:00.000Z",
      });
    });

    it("gives triggered_at on a suppressing update", () => {
      expect(onlyEvent({ ...base, update_action: "suppressed", time: "00:01:00" })).toMatchObject({
        status: "ignored",
        triggered_at: "2024-05-14T00:01:00.000Z",
        resolved_at: null,
      });
    });
  });

  it("takes the description from message, then description, then item", () => {
    expect(onlyEvent({ name: "X", message: "M", description: "D", item: "I" }).description).toBe("M");
    expect(onlyEvent({ name: "X", description: "D", item: "I" }).description).toBe("D");
    expect(onlyEvent({ name: "X", update_action: "commented", message: "M", item: "I" }).description).toBe(
      "I",
    );
  });

  it("falls back to the uid for a title made only of a trigger id", () => {
    expect(onlyEvent({ triggerId: "77", status: "PROBLEM" })).toMatchObject({
      title: "zabbix alert 77",
      title_is_fallback: true,
    });
  });

  it("builds Keep's event link only from an absolute url, without a double slash", () => {
    const keep = { triggerId: "1", id: "2", name: "X", status: "PROBLEM" };
    expect(onlyEvent({ ...keep, url: "https://z.example.com/zabbix/" }).links).toEqual([
      { kind: "source", url: "https://z.example.com/zabbix/tr_events.php?triggerid=1&eventid=2" },
    ]);
    expect(onlyEvent({ ...keep, url: "{$ZABBIX.URL}" }).links).toEqual([]);
    expect(onlyEvent({ ...keep, url: "zabbix.example.com" }).links).toEqual([]);
    expect(onlyEvent({ ...keep, id: undefined, url: "https://z.example.com" }).links).toEqual([]);
  });
});

describe("parseZabbix: bad input", () => {
  const notZabbix = {
    ok: false,
    error:
      "not a Zabbix webhook: expected a JSON object with a trigger id (triggerId, trigger_id or a link with triggerid) or a trigger name (name, event_name, trigger, trigger_name)",
  };

  itRejectsUnreadableBodies(parseZabbix, {
    empty: "  ",
    notJson: [
      ["plain text", "PROBLEM: Disk full"],
      ["truncated JSON", '{"triggerId":"23711","name":"High CPU'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [{ triggerId: "1" }]],
    ["a string", "PROBLEM"],
    ["null", null],
    ["only status and severity", { status: "PROBLEM", severity: "High" }],
    ["unexpanded macros only", { triggerId: "{TRIGGER.ID}", name: "{EVENT.NAME}", status: "PROBLEM" }],
    ["a link without triggerid", { link: "https://z.example.com/zabbix.php?action=problem.view" }],
    ["an Alertmanager body", { alerts: [{ labels: { alertname: "X" } }] }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notZabbix);
  });
});

describeEachEngine("Zabbix maintenance through the store", (harness) => {
  it("hides a problem while it is suppressed and shows it again when the suppression ends", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const triggerPath = await registerTrigger(h, auth, { source: "zabbix", integration: "maintenance" });
    const deliver = async (fields: Record<string, unknown>) => {
      const body = zabbixMediaType({ trigger_id: "777", event_time: "10:00:00", ...fields });
      return (await deliverAlerts(h, triggerPath, JSON.stringify(body)))[0]?.outcome;
    };
    expect(await deliver({})).toBe("created");
    expect(await deliver({ event_update_action: "suppressed" })).toBe("ignored");
    expect(await readAlert(h, auth, "777")).toMatchObject({
      status: "ignored",
      ignore_reason: "zabbix: suppressed",
    });
    await deliver({ event_update_action: "unsuppressed" });
    expect(await readAlert(h, auth, "777")).toMatchObject({
      status: "active",
      ignore_reason: null,
      refire_count: 0,
    });
  });
});
