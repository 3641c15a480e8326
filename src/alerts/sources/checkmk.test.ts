import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseCheckmk } from "./checkmk.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("checkmk", name);
  return parseCheckmk({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseCheckmk({ body: JSON.stringify(payload), headers: {}, options });
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

// H(site, host, service), computed independently with python3 hashlib.
const SERVER1_UID = "a0b53e7bcee5ed4dcebd5f385c5f5ce9"; // H("cmk", "server1", "")
const WORKER_UID = "b7bd81acf1c2763581c6bde341275259"; // H("cmk", "k8s-worker-03", "")
const DB_FS_UID = "c1bea310ddeeee1a1ae98805e6c4e57d"; // H("cmk", "db-primary-01", "Filesystem /var/lib/postgresql")

const DB_FS_LABELS = {
  check_command: "check_mk-df",
  host: "db-primary-01",
  service: "Filesystem /var/lib/postgresql",
  site: "cmk",
};

// Expected events below were written by hand from the fixture files and section 17 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  // No micro_time: long_date_time in UTC. The relative `url` is dropped (no site base URL).
  "keep-mock-host-recovery.json": [
    {
      external_uid: SERVER1_UID,
      status: "resolved",
      ignore_reason: null,
      title: "Host server1 is UP",
      title_is_fallback: false,
      description: "Packet received via smart PING",
      source_severity: "UP",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: "2024-10-26T23:20:39.000Z",
      labels: { check_command: "check-mk-host-smart", host: "server1", site: "cmk" },
      links: [],
      is_test: false,
      source_event: "RECOVERY",
      unmapped: [],
    },
  ],

  // Host severity comes from status (the script hard-codes severity OK); micro_time is µs.
  "keep-script-host-problem-down.json": [
    {
      external_uid: WORKER_UID,
      status: "active",
      ignore_reason: null,
      title: "Host k8s-worker-03 is DOWN",
      title_is_fallback: false,
      description: "CRIT - 10.10.4.23: rta nan, lost 100%",
      source_severity: "DOWN",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-10-27T03:14:09.123Z",
      resolved_at: null,
      labels: { check_command: "check-mk-host-smart", host: "k8s-worker-03", site: "cmk" },
      links: [],
      is_test: false,
      source_event: "PROBLEM",
      unmapped: [],
    },
  ],

  "keep-script-service-problem-critical.json": [
    {
      external_uid: DB_FS_UID,
      status: "active",
      ignore_reason: null,
      title: "Filesystem /var/lib/postgresql on db-primary-01",
      title_is_fallback: false,
      description:
        "Used: 95.12% - 475 GiB of 500 GiB (warn/crit at 80.00%/90.00% used)(!!), trend: +2.1 GiB / 24 hours",
      source_severity: "CRITICAL",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-10-27T09:41:55.482Z",
      resolved_at: null,
      labels: DB_FS_LABELS,
      links: [],
      is_test: false,
      source_event: "PROBLEM",
      unmapped: [],
    },
  ],

  "keep-script-service-recovery-ok.json": [
    {
      external_uid: DB_FS_UID,
      status: "resolved",
      ignore_reason: null,
      title: "Filesystem /var/lib/postgresql on db-primary-01",
      title_is_fallback: false,
      description: "Used: 71.40% - 357 GiB of 500 GiB, trend: -118 GiB / 24 hours",
      source_severity: "OK",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: null,
      resolved_at: "2024-10-27T11:02:18.117Z",
      labels: DB_FS_LABELS,
      links: [],
      is_test: false,
      source_event: "RECOVERY",
      unmapped: [],
    },
  ],
};

describe("parseCheckmk: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("checkmk", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// Keep-script bodies for the variants no fixture shows.
function service(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    host: "db-primary-01",
    service: "Filesystem /var/lib/postgresql",
    output: "Used: 85%",
    long_output: "",
    status: "DOWN",
    severity: "WARNING",
    check_command: "check_mk-df",
    site: "cmk",
    what: "SERVICE",
    notification_type: "PROBLEM",
    long_date_time: "Sun Oct 27 09:41:55 UTC 2024",
    short_date_time: "2024-10-27 09:41:55",
    micro_time: "1730022115482913",
    ...overrides,
  };
}

function host(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    host: "server1",
    output: "Packet received via smart PING",
    status: "UP",
    severity: "OK",
    check_command: "check-mk-host-smart",
    site: "cmk",
    what: "HOST",
    notification_type: "RECOVERY",
    long_date_time: "Sat Oct 26 23:20:39 UTC 2024",
    short_date_time: "2024-10-26 23:20:39",
    ...overrides,
  };
}

describe("parseCheckmk: notification types", () => {
  it.each([
    ["ACKNOWLEDGEMENT", "DOWN"],
    ["FLAPPINGSTOP", "DOWN"],
    ["FLAPPINGDISABLED", "DOWN"],
    ["CUSTOM", "DOWN"],
    ["ALERTHANDLER", "DOWN"],
    ["ALERTHANDLER (OK)", "DOWN"],
    ["ALERTHANDLER (FAILED)", "DOWN"],
    ["acknowledgement", "ACKNOWLEDGED"],
  ])("makes %s unchanged, without a time", (type, status) => {
    expect(onlyEvent(service({ notification_type: type, status }))).toMatchObject({
      status: "unchanged",
      ignore_reason: null,
      triggered_at: null,
      resolved_at: null,
      labels: DB_FS_LABELS,
      source_event: type,
      unmapped: [],
    });
  });

  it("flags FLAPPINGSTART", () => {
    expect(onlyEvent(service({ notification_type: "FLAPPINGSTART" }))).toMatchObject({
      status: "unchanged",
      labels: { vigil_flapping: "true", ...DB_FS_LABELS },
      source_event: "FLAPPINGSTART",
    });
  });

  it("ignores DOWNTIMESTART", () => {
    expect(onlyEvent(service({ notification_type: "DOWNTIMESTART" }))).toMatchObject({
      status: "ignored",
      ignore_reason: "checkmk: DOWNTIMESTART",
      triggered_at: null,
      source_event: "DOWNTIMESTART",
    });
  });

  it.each([
    // Services: the current state is the service state (the script's status is always DOWN here).
    [
      service({ notification_type: "DOWNTIMEEND", severity: "OK" }),
      "resolved",
      null,
      "2024-10-27T09:41:55.482Z",
    ],
    [
      service({ notification_type: "DOWNTIMEEND", severity: "CRITICAL" }),
      "active",
      "2024-10-27T09:41:55.482Z",
      null,
    ],
    [
      service({ notification_type: "DOWNTIMECANCELLED", severity: "WARN" }),
      "active",
      "2024-10-27T09:41:55.482Z",
      null,
    ],
    // Hosts: the current state is the host state.
    [
      host({ notification_type: "DOWNTIMECANCELLED", status: "UP" }),
      "resolved",
      null,
      "2024-10-26T23:20:39.000Z",
    ],
    [
      host({ notification_type: "DOWNTIMEEND", status: "UNREACH" }),
      "active",
      "2024-10-26T23:20:39.000Z",
      null,
    ],
  ])("decides the end of a downtime from the current state (%#)", (body, status, triggeredAt, resolvedAt) => {
    const event = onlyEvent(body);
    expect([event.status, event.triggered_at, event.resolved_at, event.unmapped]).toEqual([
      status,
      triggeredAt,
      resolvedAt,
      [],
    ]);
    expect(event.source_event).toBe(body.notification_type);
  });

  it("makes an unknown notification type unchanged and unmapped", () => {
    expect(onlyEvent(service({ notification_type: "PROBLEMISH" }))).toMatchObject({
      status: "unchanged",
      triggered_at: null,
      source_event: "PROBLEMISH",
      unmapped: [{ field: "status", value: "PROBLEMISH" }],
    });
  });

  it.each([
    ["UP", "resolved"],
    ["DOWN", "active"],
    ["UNREACH", "active"],
    ["unreachable", "active"],
    ["ACKNOWLEDGED", "unchanged"],
  ])("decides from status %s when there is no notification type (older scripts)", (status, eventStatus) => {
    const event = onlyEvent(service({ notification_type: undefined, status }));
    expect([event.status, event.source_event, event.unmapped]).toEqual([eventStatus, status, []]);
  });

  it("makes an unknown status without a notification type unchanged and unmapped", () => {
    expect(onlyEvent(service({ notification_type: "", status: "PENDING" }))).toMatchObject({
      status: "unchanged",
      source_event: "PENDING",
      unmapped: [{ field: "status", value: "PENDING" }],
    });
  });
});

describe("parseCheckmk: severity, text, times, labels, links", () => {
  it.each([
    [service({ severity: "CRIT" }), "CRIT", "Critical", "mapped"],
    [service({ severity: "WARNING" }), "WARNING", "Medium", "mapped"],
    [service({ severity: "warn" }), "warn", "Medium", "mapped"],
    [service({ severity: "UNKNOWN" }), "UNKNOWN", "Medium", "mapped"],
    [service({ severity: "UNKN" }), "UNKN", "Medium", "mapped"],
    [service({ severity: "OK" }), "OK", "info", "mapped"],
    // The Checkmk table replaces the generic one.
    [service({ severity: "high" }), "high", "Medium", "unmapped"],
    [service({ severity: "DOWN" }), "DOWN", "Medium", "unmapped"],
    [service({ severity: undefined }), "", "Medium", "missing"],
    [host({ status: "UNREACHABLE" }), "UNREACHABLE", "High", "mapped"],
    [host({ status: "UNREACH" }), "UNREACH", "High", "mapped"],
    [host({ status: "DOWN", severity: "OK" }), "DOWN", "Critical", "mapped"],
    [host({ status: "CRITICAL" }), "CRITICAL", "Medium", "unmapped"],
  ])("maps severity (%#)", (body, sourceSeverity, bucket, mapping) => {
    const event = onlyEvent(body);
    expect([event.source_severity, event.severity, event.severity_mapping]).toEqual([
      sourceSeverity,
      bucket,
      mapping,
    ]);
  });

  it("applies the registration's severity overrides", () => {
    expect(onlyEvent(service(), { severityOverrides: { warning: "High" } })).toMatchObject({
      source_severity: "WARNING",
      severity: "High",
    });
  });

  it("writes output, then long_output, with one line break between", () => {
    expect(onlyEvent(service({ long_output: "  /var 85%\n/tmp 12%  " })).description).toBe(
      "Used: 85%\n/var 85%\n/tmp 12%",
    );
    expect(onlyEvent(service({ output: "", long_output: "details" })).description).toBe("details");
  });

  it("turns the escaped line breaks of long_output into line breaks", () => {
    // Checkmk hands long plugin output to notification scripts with each line break written as the
    // two characters backslash and n; Keep's script passes the text on as it is.
    expect(onlyEvent(service({ long_output: "/var: 85% used\\n/tmp: 12% used\\n" })).description).toBe(
      "Used: 85%\n/var: 85% used\n/tmp: 12% used",
    );
    expect(onlyEvent(host({ long_output: "rta 0.1ms\\nlost 0%" })).description).toBe(
      "Packet received via smart PING\nrta 0.1ms\nlost 0%",
    );
  });

  it("turns the escaped line breaks of NOTIFY_LONGSERVICEOUTPUT and NOTIFY_LONGHOSTOUTPUT into line breaks", () => {
    const common = { NOTIFY_NOTIFICATIONTYPE: "PROBLEM", NOTIFY_HOSTNAME: "db-1", OMD_SITE: "cmk" };
    expect(
      onlyEvent({
        ...common,
        NOTIFY_WHAT: "SERVICE",
        NOTIFY_SERVICEDESC: "Disk",
        NOTIFY_SERVICESTATE: "WARNING",
        NOTIFY_SERVICEOUTPUT: "2 filesystems over 80%",
        NOTIFY_LONGSERVICEOUTPUT: "/var 85%\\n/srv 91%",
      }).description,
    ).toBe("2 filesystems over 80%\n/var 85%\n/srv 91%");
    expect(
      onlyEvent({
        ...common,
        NOTIFY_WHAT: "HOST",
        NOTIFY_HOSTSTATE: "DOWN",
        NOTIFY_HOSTOUTPUT: "CRIT - 10.0.0.9: rta nan, lost 100%",
        NOTIFY_LONGHOSTOUTPUT: "ping 1: timeout\\nping 2: timeout",
      }).description,
    ).toBe("CRIT - 10.0.0.9: rta nan, lost 100%\nping 1: timeout\nping 2: timeout");
  });

  describe("times without micro_time", () => {
    const noMicro = { micro_time: undefined };

    // short_date_time is the site's local wall time, as Checkmk writes it; the expected UTC times are
    // that wall time minus the zone's offset, worked out by hand.
    it.each([
      ["Mon Jul  1 08:00:00 EDT 2024", "2024-07-01 08:00:00", "2024-07-01T12:00:00.000Z"],
      ["Tue Jan 15 10:00:00 CET 2013", "2013-01-15 10:00:00", "2013-01-15T09:00:00.000Z"],
      ["Sun Jun 30 17:30:00 CEST 2024", "2024-06-30 17:30:00", "2024-06-30T15:30:00.000Z"],
      ["Tue Dec 31 20:00:00 PST 2024", "2024-12-31 20:00:00", "2025-01-01T04:00:00.000Z"],
      ["Mon Jan 13 06:15:00 CST 2025", "2025-01-13 06:15:00", "2025-01-13T12:15:00.000Z"],
      ["Mon Jul 01 09:00:00 BST 2024", "2024-07-01 09:00:00", "2024-07-01T08:00:00.000Z"],
      ["Mon Jul 01 15:00:00 MSK 2024", "2024-07-01 15:00:00", "2024-07-01T12:00:00.000Z"],
      ["Mon Jul 01 21:00:00 JST 2024", "2024-07-01 21:00:00", "2024-07-01T12:00:00.000Z"],
      ["Thu Jan 02 09:00:00 ACDT 2025", "2025-01-02 09:00:00", "2025-01-01T22:30:00.000Z"],
      ["Wed Jan 01 01:00:00 NZDT 2025", "2025-01-01 01:00:00", "2024-12-31T12:00:00.000Z"],
      ["Mon Jul 01 02:00:00 HST 2024", "2024-07-01 02:00:00", "2024-07-01T12:00:00.000Z"],
      // A zone without an abbreviation: the C library writes its numeric offset.
      ["Mon Jul 01 14:00:00 +0200 2024", "2024-07-01 14:00:00", "2024-07-01T12:00:00.000Z"],
      ["Mon Jul 01 17:30:00 +0530 2024", "2024-07-01 17:30:00", "2024-07-01T12:00:00.000Z"],
      ["Mon Jul 01 09:00:00 -03 2024", "2024-07-01 09:00:00", "2024-07-01T12:00:00.000Z"],
    ])("reads long_date_time %s in its zone", (longDateTime, shortDateTime, expected) => {
      const event = onlyEvent(
        service({ ...noMicro, long_date_time: longDateTime, short_date_time: shortDateTime }),
      );
      expect(event.triggered_at).toBe(expected);
    });

    it("reads the zone of a recovery's long_date_time for resolved_at", () => {
      const event = onlyEvent(
        host({ long_date_time: "Sat Oct 26 23:20:39 EEST 2024", short_date_time: "2024-10-26 23:20:39" }),
      );
      expect([event.triggered_at, event.resolved_at]).toEqual([null, "2024-10-26T20:20:39.000Z"]);
    });

    it("reads NOTIFY_LONGDATETIME in its zone", () => {
      const event = onlyEvent({
        NOTIFY_WHAT: "HOST",
        NOTIFY_NOTIFICATIONTYPE: "PROBLEM",
        NOTIFY_HOSTNAME: "server1",
        NOTIFY_HOSTSTATE: "DOWN",
        NOTIFY_LONGDATETIME: "Mon Jul  1 08:00:00 EDT 2024",
        NOTIFY_SHORTDATETIME: "2024-07-01 08:00:00",
        OMD_SITE: "cmk",
      });
      expect(event.triggered_at).toBe("2024-07-01T12:00:00.000Z");
    });
  });

  // The test that was here before the zones were read, with its CET case (then read from
  // short_date_time) replaced by zones that are still not resolved.
  it("reads long_date_time in UTC or GMT, short_date_time as UTC for an unresolved zone, and prefers micro_time", () => {
    const noMicro = { micro_time: undefined };
    expect(
      onlyEvent(service({ ...noMicro, long_date_time: "Sun Oct  6 09:41:55 GMT 2024" })).triggered_at,
    ).toBe("2024-10-06T09:41:55.000Z");
    // IST is India, Ireland or Israel; XYZT is no zone listed.
    for (const longDateTime of ["Mon Jul 01 17:30:00 IST 2024", "Mon Jul 01 17:30:00 XYZT 2024"]) {
      expect(
        onlyEvent(
          service({ ...noMicro, long_date_time: longDateTime, short_date_time: "2024-07-01 17:30:00" }),
        ).triggered_at,
      ).toBe("2024-07-01T17:30:00.000Z");
      expect(
        onlyEvent(service({ ...noMicro, long_date_time: longDateTime, short_date_time: undefined }))
          .triggered_at,
      ).toBeNull();
    }
    expect(
      onlyEvent(service({ ...noMicro, long_date_time: undefined, short_date_time: undefined })).triggered_at,
    ).toBeNull();
    // 1719835201500000 µs is 2024-07-01T12:00:01.500Z; the long_date_time says 12:00:00Z.
    expect(
      onlyEvent(
        service({
          micro_time: "1719835201500000",
          long_date_time: "Mon Jul  1 08:00:00 EDT 2024",
          short_date_time: "2024-07-01 08:00:00",
        }),
      ).triggered_at,
    ).toBe("2024-07-01T12:00:01.500Z");
  });

  it("keeps the service label for services only", () => {
    expect(onlyEvent(host({ service: "$SERVICEDESC$", check_command: "" })).labels).toEqual({
      host: "server1",
      site: "cmk",
    });
  });

  it("takes a body without `what` as a service notification when it names a service", () => {
    expect(onlyEvent(service({ what: undefined })).external_uid).toBe(DB_FS_UID);
    expect(onlyEvent(host({ what: undefined })).external_uid).toBe(SERVER1_UID);
  });

  it("keeps an absolute url, drops a relative one", () => {
    expect(
      onlyEvent(service({ url: "https://cmk.example.com/cmk/check_mk/index.py?host=db" })).links,
    ).toEqual([{ kind: "source", url: "https://cmk.example.com/cmk/check_mk/index.py?host=db" }]);
    expect(onlyEvent(service({ url: "/check_mk/index.py?host=db" })).links).toEqual([]);
  });

  it("builds the same event from raw NOTIFY_* variables", () => {
    const raw = {
      NOTIFY_WHAT: "SERVICE",
      NOTIFY_NOTIFICATIONTYPE: "PROBLEM",
      NOTIFY_HOSTNAME: "db-primary-01",
      NOTIFY_SERVICEDESC: "Filesystem /var/lib/postgresql",
      NOTIFY_SERVICESTATE: "CRITICAL",
      NOTIFY_HOSTSTATE: "UP",
      NOTIFY_SERVICEOUTPUT: "Used: 95.12%",
      NOTIFY_HOSTOUTPUT: "Packet received via smart PING",
      NOTIFY_SERVICECHECKCOMMAND: "check_mk-df",
      NOTIFY_MICROTIME: "1730022115482913",
      OMD_SITE: "cmk",
    };
    expect(parseJson(raw)).toEqual({
      ok: true,
      events: [
        {
          ...EXPECTED_BY_FIXTURE["keep-script-service-problem-critical.json"]?.[0],
          description: "Used: 95.12%",
        },
      ],
    });
    expect(
      onlyEvent({
        NOTIFY_WHAT: "HOST",
        NOTIFY_NOTIFICATIONTYPE: "PROBLEM",
        NOTIFY_HOSTNAME: "k8s-worker-03",
        NOTIFY_HOSTSTATE: "DOWN",
        NOTIFY_HOSTOUTPUT: "CRIT - 10.10.4.23: rta nan, lost 100%",
        NOTIFY_HOSTCHECKCOMMAND: "check-mk-host-smart",
        NOTIFY_SERVICEDESC: "",
        NOTIFY_MICROTIME: "1729998849123456",
        OMD_SITE: "cmk",
      }),
    ).toEqual(EXPECTED_BY_FIXTURE["keep-script-host-problem-down.json"]?.[0]);
  });
});

describe("parseCheckmk: bad input", () => {
  itRejectsUnreadableBodies(parseCheckmk, {
    empty: "",
    notJson: [
      ["plain text", "CheckMK server1 - DOWN -> UP"],
      ["truncated JSON", '{"host": "server1", "what": "HOST", "notification_type": "REC'],
    ],
  });

  it.each([
    ["an array", [host()]],
    ["null", null],
    ["a number", 18],
  ])("rejects %s", (_name, body) => {
    expect(parseJson(body)).toEqual({
      ok: false,
      error: "not a Checkmk notification: expected a JSON object",
    });
  });

  it.each([
    ["an empty object", {}],
    ["a body without host", host({ host: undefined })],
    ["a host as an object", host({ host: { name: "server1" } })],
    [
      "NOTIFY_* variables without NOTIFY_HOSTNAME",
      { NOTIFY_WHAT: "HOST", NOTIFY_NOTIFICATIONTYPE: "PROBLEM" },
    ],
    ["an Alertmanager body", { version: "4", alerts: [] }],
  ])("rejects %s", (_name, body) => {
    expect(parseJson(body)).toEqual({
      ok: false,
      error: "not a Checkmk notification: host (NOTIFY_HOSTNAME) is missing",
    });
  });

  it("rejects a SERVICE notification without a service", () => {
    expect(parseJson(service({ service: "" }))).toEqual({
      ok: false,
      error: "not a Checkmk notification: a SERVICE notification without service (NOTIFY_SERVICEDESC)",
    });
  });
});
