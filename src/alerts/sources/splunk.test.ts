import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseSplunk } from "./splunk.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("splunk", name);
  return parseSplunk({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseSplunk({ body: JSON.stringify(payload), headers: {}, options });
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

// Expected events below were written by hand from the fixture files and section 15 of
// alert-sources.md, not copied from the parser's output. The uids are H(app, search identity),
// computed independently with python3 hashlib. Every delivery is a reminder: Splunk never says an
// episode ended, so a later run is the same episode still matching.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  // search_name is null: the identity is the sid without its `_at_<epoch>_<serial>` run suffix.
  "docs-webhook-stats-result.json": [
    {
      external_uid: "3d3395f9469750ab80ce1f7ef7f848b0", // H("search", "scheduler_admin_search_W2")
      status: "active",
      ignore_reason: null,
      title: "scheduler_admin_search_W2",
      title_is_fallback: false,
      description: "sourcetype=mongod, count=8",
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
      triggered_at: null,
      resolved_at: null,
      labels: { app: "search", sourcetype: "mongod" },
      links: [
        {
          kind: "source",
          url: "http://web.example.local:8000/app/search/@go?sid=scheduler_admin_search_W2_at_14232356_132",
        },
      ],
      is_test: false,
      source_event: "triggered",
      unmapped: [],
      reminder: true,
    },
  ],

  "realtime-search-syslog-sudo.json": [
    {
      external_uid: "4f53f3929beca1dc51d19ec61297e13c", // H("search", "sudo")
      status: "active",
      ignore_reason: null,
      title: "sudo",
      title_is_fallback: false,
      description: "Jan  4 11:14:32 myserver sudo: pam_unix(sudo:session): session closed for user root",
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
      // _time 1483557272 (epoch seconds).
      triggered_at: "2017-01-04T19:14:32.000Z",
      resolved_at: null,
      labels: {
        app: "search",
        host: "myserver",
        index: "main",
        source: "/var/log/auth.log",
        sourcetype: "syslog",
      },
      links: [
        {
          kind: "source",
          url: "http://example.com:8000/app/search/search?q=%7Cloadjob%20rt_scheduler__admin__search__sudo_at_1483557185_2.2%20%7C%20head%201%20%7C%20tail%201&earliest=0&latest=now",
        },
      ],
      is_test: false,
      source_event: "triggered",
      unmapped: [],
      reminder: true,
    },
  ],

  "scheduled-search-named-host-count.json": [
    {
      external_uid: "7b80e1b36dff9d1f287d2474ca978f9b", // H("search", "Prod web 5xx spike")
      status: "active",
      ignore_reason: null,
      title: "Prod web 5xx spike",
      title_is_fallback: false,
      description: "host=web-03.prod.example.com, sourcetype=access_combined, count=143",
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
      triggered_at: null,
      resolved_at: null,
      labels: { app: "search", host: "web-03.prod.example.com", sourcetype: "access_combined" },
      links: [
        {
          kind: "source",
          url: "https://splunk.example.com:8000/app/search/@go?sid=scheduler__nobody__search__RMD5a1b2c3d4e5f60718_at_1715683200_4411",
        },
      ],
      is_test: false,
      source_event: "triggered",
      unmapped: [],
      reminder: true,
    },
  ],
};

describe("parseSplunk: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("splunk", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    expect(parseFixture(name)).toEqual({ ok: true, events: expected });
  });
});

// A minimal Splunk webhook body for the variants no fixture shows.
function payload(result: Record<string, unknown> | null = {}, overrides: Record<string, unknown> = {}) {
  return {
    result,
    sid: "scheduler__admin__ops__RMD5ffff_at_1715683200_17",
    results_link:
      "https://splunk.example.com/app/ops/@go?sid=scheduler__admin__ops__RMD5ffff_at_1715683200_17",
    search_name: "Disk usage high",
    owner: "admin",
    app: "ops",
    ...overrides,
  };
}

describe("parseSplunk: documented variants", () => {
  it("builds a whole event from a row with severity, _time and labels", () => {
    expect(
      onlyEvent(
        payload({
          host: "db-1",
          index: "infra",
          source: "df",
          sourcetype: "df_metric",
          severity: "high",
          _time: "1715683200.250",
          _si: ["idx-1", "infra"],
          used_pct: "97",
        }),
      ),
    ).toEqual({
      external_uid: "54e45e1a880dff655f27b26a94695227", // H("ops", "Disk usage high")
      status: "active",
      ignore_reason: null,
      title: "Disk usage high",
      title_is_fallback: false,
      description: "host=db-1, index=infra, source=df, sourcetype=df_metric, severity=high, used_pct=97",
      source_severity: "high",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:40:00.250Z",
      resolved_at: null,
      labels: { app: "ops", host: "db-1", index: "infra", source: "df", sourcetype: "df_metric" },
      links: [
        {
          kind: "source",
          url: "https://splunk.example.com/app/ops/@go?sid=scheduler__admin__ops__RMD5ffff_at_1715683200_17",
        },
      ],
      is_test: false,
      source_event: "triggered",
      unmapped: [],
      reminder: true,
    });
  });

  it("keeps one uid across runs: sid and row never enter it", () => {
    const first = onlyEvent(payload({ host: "a", count: "1" }));
    const second = onlyEvent(
      payload({ host: "b", count: "9" }, { sid: "scheduler__admin__ops__RMD5ffff_at_1715686800_18" }),
    );
    expect(second.external_uid).toBe(first.external_uid);
  });

  it("separates equal search names of different apps", () => {
    expect(onlyEvent(payload({}, { app: "search" })).external_uid).toBe("ef21bcdf6dea5817b2c6cf56090bc187");
    expect(onlyEvent(payload({}, { app: undefined })).external_uid).toBe("6002416cf3ee49760a896806e1f389cf");
  });

  it("falls back to the sid without its run suffix when search_name is empty or absent", () => {
    for (const search_name of [null, "", "  ", undefined]) {
      expect(onlyEvent(payload({}, { search_name }))).toMatchObject({
        title: "scheduler__admin__ops__RMD5ffff",
        external_uid: "c228118a211c9d8da16a0d0058ff622e", // H("ops", "scheduler__admin__ops__RMD5ffff")
      });
    }
    expect(
      onlyEvent(payload({}, { search_name: null, sid: "rt_scheduler__admin__ops__x_at_1483557185_2.2" }))
        .title,
    ).toBe("rt_scheduler__admin__ops__x");
    // An ad-hoc search id has no run suffix and is used whole.
    expect(onlyEvent(payload({}, { search_name: null, sid: "1715683200.1234" })).title).toBe(
      "1715683200.1234",
    );
  });

  it.each([
    [{ severity: "critical", urgency: "low", priority: "5" }, "critical", "Critical", "mapped"],
    [{ urgency: "low", priority: "1" }, "low", "Low", "mapped"],
    [{ severity: "", urgency: " ", priority: "6" }, "6", "Critical", "mapped"],
    [{ severity: "1" }, "1", "info", "mapped"],
    [{ severity: "2" }, "2", "info", "mapped"],
    [{ severity: "3" }, "3", "Medium", "mapped"],
    [{ severity: "4" }, "4", "High", "mapped"],
    [{ severity: "5" }, "5", "Critical", "mapped"],
    [{ severity: 6 }, "6", "Critical", "mapped"],
    [{ severity: "Severe" }, "Severe", "Critical", "mapped"],
    [{ priority: "p2" }, "p2", "High", "mapped"],
    [{ severity: "7" }, "7", "Medium", "unmapped"],
    [{}, "", "Medium", "missing"],
    // A multi-value field: its most severe mapped value.
    [{ severity: ["low", "high"] }, "high", "High", "mapped"],
    [{ severity: ["bogus", "4", "2"] }, "4", "High", "mapped"],
    [{ severity: ["bogus"], urgency: "low" }, "bogus", "Medium", "unmapped"],
    [{ severity: [], urgency: ["", "critical"] }, "critical", "Critical", "mapped"],
  ])("maps severity fields of %j", (row, sourceSeverity, bucket, mapping) => {
    const event = onlyEvent(payload(row));
    expect([event.source_severity, event.severity, event.severity_mapping]).toEqual([
      sourceSeverity,
      bucket,
      mapping,
    ]);
    expect(event.unmapped).toEqual(
      mapping === "unmapped" ? [{ field: "severity", value: sourceSeverity }] : [],
    );
  });

  it("applies the registration's severity overrides", () => {
    expect(onlyEvent(payload({ severity: "4" }), { severityOverrides: { "4": "Critical" } })).toMatchObject({
      source_severity: "4",
      severity: "Critical",
      display_priority: 1,
    });
  });

  it("accepts a null result (no row) and reads the multivalue and non-string fields of a row", () => {
    expect(onlyEvent(payload(null))).toMatchObject({
      description: "",
      labels: { app: "ops" },
      triggered_at: null,
    });
    expect(onlyEvent(payload({ user: ["root", "admin"], count: 3, empty: "", gone: null })).description).toBe(
      'user=["root","admin"], count=3, empty=',
    );
  });

  it("takes labels only from non-empty string fields", () => {
    expect(onlyEvent(payload({ host: "", index: ["main"], source: "  " }, { app: "" })).labels).toEqual({});
  });

  it("reads an ISO _time and ignores an unreadable one", () => {
    expect(onlyEvent(payload({ _time: "2024-05-14T12:40:00.000+02:00" })).triggered_at).toBe(
      "2024-05-14T10:40:00.000Z",
    );
    expect(onlyEvent(payload({ _time: "yesterday" })).triggered_at).toBeNull();
  });

  it("drops a results_link that is not an absolute http URL", () => {
    expect(onlyEvent(payload({}, { results_link: "/app/search/@go?sid=1" })).links).toEqual([]);
  });
});

describe("parseSplunk: bad input", () => {
  itRejectsUnreadableBodies(parseSplunk, {
    empty: "",
    notJson: [
      ["plain text", "search complete"],
      ["truncated JSON", '{"result": {"host": "db-1"}, "sid": "scheduler_admin_'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [payload()]],
    ["null", null],
    ["a body without result", { sid: "x", search_name: "y" }],
    ["result as a string", payload("host=db-1" as unknown as Record<string, unknown>)],
    ["result as an array", payload([{ host: "db-1" }] as unknown as Record<string, unknown>)],
    ["an Alertmanager body", { version: "4", alerts: [] }],
  ])("rejects %s", (_name, body) => {
    expect(parseJson(body)).toEqual({
      ok: false,
      error: "not a Splunk webhook: expected a JSON object with a result object",
    });
  });

  it("rejects a body without search_name or sid", () => {
    expect(parseJson(payload({}, { search_name: null, sid: "" }))).toEqual({
      ok: false,
      error: "not a Splunk webhook: neither search_name nor sid is set",
    });
  });
});
