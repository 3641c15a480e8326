import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AlertmanagerProcess,
  type GettableAlert,
  requireAlertmanager,
  startAlertmanager,
} from "../../../test/alertmanager-process.ts";
import { eventsOf } from "../../../test/parse-results.ts";
import { parseAlertmanager } from "./alertmanager.ts";
import { parseAlertmanagerApi } from "./alertmanager-api.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parse(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseAlertmanagerApi({ body: JSON.stringify(payload), headers: {}, options });
}

/** A gettable alert as Alertmanager 0.25 answers it, with `overrides` on top. */
function item(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    annotations: { summary: "disk almost full", description: "95% used on /var" },
    endsAt: "2024-05-14T09:17:31.512Z",
    fingerprint: "3f2a9c0d1e4b5a67",
    receivers: [{ name: "team" }],
    startsAt: "2024-05-14T09:12:31.512Z",
    status: { inhibitedBy: [], silencedBy: [], state: "active" },
    updatedAt: "2024-05-14T09:12:31.512Z",
    generatorURL: "http://prometheus:9090/graph?g0.expr=disk",
    labels: { alertname: "DiskFull", instance: "db-1", severity: "warning" },
    ...overrides,
  };
}

const DISK_FULL: AlertEvent = {
  external_uid: "3f2a9c0d1e4b5a67",
  status: "active",
  ignore_reason: null,
  title: "DiskFull",
  title_is_fallback: false,
  description: "disk almost full\n\n95% used on /var",
  source_severity: "warning",
  severity: "Medium",
  display_priority: 3,
  severity_mapping: "mapped",
  triggered_at: "2024-05-14T09:12:31.512Z",
  resolved_at: null,
  labels: { alertname: "DiskFull", instance: "db-1", severity: "warning" },
  links: [{ kind: "source", url: "http://prometheus:9090/graph?g0.expr=disk" }],
  is_test: false,
  source_event: "active",
  unmapped: [],
};

describe("parseAlertmanagerApi, hand-built answers", () => {
  it("maps an active alert like the webhook parser maps a firing one", () => {
    expect(eventsOf(parse([item()]))).toEqual([DISK_FULL]);
  });

  it("maps unprocessed to active and each kind of suppression to ignored, naming it", () => {
    const states: [Record<string, unknown>, Partial<AlertEvent>][] = [
      [
        { state: "unprocessed", silencedBy: [], inhibitedBy: [] },
        { status: "active", source_event: "unprocessed" },
      ],
      [
        { state: "suppressed", silencedBy: ["a1b2"], inhibitedBy: [] },
        { status: "ignored", ignore_reason: "alertmanager: silenced", source_event: "suppressed" },
      ],
      [
        { state: "suppressed", silencedBy: [], inhibitedBy: ["0123456789abcdef"] },
        { status: "ignored", ignore_reason: "alertmanager: inhibited", source_event: "suppressed" },
      ],
      // Both: the silence, an operator's explicit decision, is named.
      [
        { state: "suppressed", silencedBy: ["a1b2"], inhibitedBy: ["0123456789abcdef"] },
        { status: "ignored", ignore_reason: "alertmanager: silenced", source_event: "suppressed" },
      ],
      // Alertmanager 0.27+ mutes by time interval.
      [
        { state: "suppressed", silencedBy: [], inhibitedBy: [], mutedBy: ["weekends"] },
        { status: "ignored", ignore_reason: "alertmanager: muted", source_event: "suppressed" },
      ],
      [
        { state: "suppressed" },
        { status: "ignored", ignore_reason: "alertmanager: suppressed", source_event: "suppressed" },
      ],
    ];
    for (const [status, expected] of states) {
      expect(eventsOf(parse([item({ status })])), JSON.stringify(status)).toEqual([
        { ...DISK_FULL, ...expected },
      ]);
    }
  });

  it("leaves an unknown state unchanged and reports it unmapped", () => {
    expect(eventsOf(parse([item({ status: { state: "pending" } })]))).toEqual([
      {
        ...DISK_FULL,
        status: "unchanged",
        source_event: "pending",
        unmapped: [{ field: "status", value: "pending" }],
      },
    ]);
    expect(eventsOf(parse([item({ status: null })]))[0]).toMatchObject({
      status: "unchanged",
      source_event: "",
    });
  });

  it("never takes endsAt of a listed alert for a resolve", () => {
    expect(eventsOf(parse([item({ endsAt: "2020-01-01T00:00:00Z" })]))[0]?.resolved_at).toBeNull();
  });

  it("uses the label fingerprint when there is no fingerprint, as the webhook parser does", () => {
    const labels = { alertname: "DiskFull", instance: "db-1", severity: "warning" };
    const pulled = eventsOf(parse([item({ fingerprint: undefined })]))[0];
    const pushed = parseAlertmanager({
      body: JSON.stringify({ alerts: [{ status: "firing", labels }] }),
      headers: {},
      options: {},
    });
    expect(pulled?.external_uid).toBe(eventsOf(pushed)[0]?.external_uid);
    expect(pulled?.external_uid).toMatch(/^[0-9a-f]{16}$/);
  });

  it("applies the severity overrides, strips __ labels and drops relative links", () => {
    const [event] = eventsOf(
      parse(
        [
          item({
            labels: { alertname: "X", severity: "sev2", __name__: "up" },
            annotations: { message: "m", runbook: "https://runbooks.example/x", dashboard_url: "/d/abc" },
            generatorURL: "/graph?g0.expr=up",
          }),
        ],
        { severityOverrides: { SEV2: "High" } },
      ),
    );
    expect(event).toMatchObject({
      title: "X",
      description: "m",
      source_severity: "sev2",
      severity: "High",
      severity_mapping: "mapped",
      labels: { alertname: "X", severity: "sev2" },
      links: [{ kind: "runbook", url: "https://runbooks.example/x" }],
    });
  });

  it("answers no events for an empty list", () => {
    expect(parse([])).toEqual({ ok: true, events: [] });
  });

  it("rejects anything that is not a list of alerts with labels", () => {
    expect(parse({ alerts: [] })).toEqual({
      ok: false,
      error: "not an Alertmanager API v2 alert list: expected a JSON array",
    });
    expect(parse([item(), item({ labels: null })])).toEqual({
      ok: false,
      error: "not an Alertmanager API v2 alert list: item 1 is not an object with labels",
    });
    expect(parse(["x"])).toMatchObject({ ok: false });
    expect(parseAlertmanagerApi({ body: "<html>login</html>", headers: {}, options: {} })).toMatchObject({
      ok: false,
      error: expect.stringContaining("body is not JSON"),
    });
  });
});

describe("parseAlertmanagerApi, answers of a real Alertmanager", () => {
  let alertmanager: AlertmanagerProcess | null = null;
  let captured = "";
  let listed: GettableAlert[] = [];
  const startsAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000).toISOString();

  beforeAll(async () => {
    alertmanager = await startAlertmanager(requireAlertmanager());
    await alertmanager.postAlerts([
      {
        labels: { alertname: "ApiDown", service: "checkout", severity: "critical" },
        annotations: { summary: "checkout API down", runbook_url: "https://runbooks.example/api-down" },
        startsAt,
        generatorURL: "http://prometheus.example:9090/graph?g0.expr=up",
      },
      // Inhibited by ApiDown (same service).
      {
        labels: { alertname: "HighLatency", service: "checkout", severity: "warning" },
        annotations: { summary: "p99 above 2s", description: "p99 is 2.4s" },
        startsAt,
      },
      // Silenced below.
      {
        labels: { alertname: "DiskFull", service: "db", severity: "warning", instance: "db-1" },
        annotations: { summary: "disk 95% full", dashboard_url: "https://grafana.example/d/disk" },
        startsAt,
      },
    ]);
    const silenceId = await alertmanager.silence({ alertname: "DiskFull" });
    listed = await alertmanager.waitForAlerts("inhibition and silence to apply", (alerts) => {
      const state = (name: string) => alerts.find((alert) => alert.labels.alertname === name)?.status;
      return (
        state("ApiDown")?.state === "active" &&
        (state("HighLatency")?.inhibitedBy.length ?? 0) > 0 &&
        (state("DiskFull")?.silencedBy ?? []).includes(silenceId)
      );
    });
    captured = await alertmanager.alertListText();
  }, 60_000);

  afterAll(async () => {
    await alertmanager?.stop();
  });

  const fingerprintOf = (name: string) =>
    listed.find((alert) => alert.labels.alertname === name)?.fingerprint as string;

  it("parses the captured list: fingerprints as uids, active, inhibited and silenced", () => {
    const events = eventsOf(parseAlertmanagerApi({ body: captured, headers: {}, options: {} }));
    const byTitle = Object.fromEntries(events.map((event) => [event.title, event]));
    expect(events).toHaveLength(3);
    expect(byTitle.ApiDown).toEqual({
      external_uid: fingerprintOf("ApiDown"),
      status: "active",
      ignore_reason: null,
      title: "ApiDown",
      title_is_fallback: false,
      description: "checkout API down",
      source_severity: "critical",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: startsAt,
      resolved_at: null,
      labels: { alertname: "ApiDown", service: "checkout", severity: "critical" },
      links: [
        { kind: "source", url: "http://prometheus.example:9090/graph?g0.expr=up" },
        { kind: "runbook", url: "https://runbooks.example/api-down" },
      ],
      is_test: false,
      source_event: "active",
      unmapped: [],
    });
    expect(byTitle.HighLatency).toEqual({
      external_uid: fingerprintOf("HighLatency"),
      status: "ignored",
      ignore_reason: "alertmanager: inhibited",
      title: "HighLatency",
      title_is_fallback: false,
      description: "p99 above 2s\n\np99 is 2.4s",
      source_severity: "warning",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      triggered_at: startsAt,
      resolved_at: null,
      labels: { alertname: "HighLatency", service: "checkout", severity: "warning" },
      links: [],
      is_test: false,
      source_event: "suppressed",
      unmapped: [],
    });
    expect(byTitle.DiskFull).toEqual({
      external_uid: fingerprintOf("DiskFull"),
      status: "ignored",
      ignore_reason: "alertmanager: silenced",
      title: "DiskFull",
      title_is_fallback: false,
      description: "disk 95% full",
      source_severity: "warning",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "mapped",
      triggered_at: startsAt,
      resolved_at: null,
      labels: { alertname: "DiskFull", service: "db", severity: "warning", instance: "db-1" },
      links: [{ kind: "dashboard", url: "https://grafana.example/d/disk" }],
      is_test: false,
      source_event: "suppressed",
      unmapped: [],
    });
  });

  it("agrees with the webhook parser on every field but the status", () => {
    const items = JSON.parse(captured) as Record<string, unknown>[];
    const webhook = {
      version: "4",
      status: "firing",
      alerts: items.map((alert) => ({ ...alert, status: "firing" })),
    };
    const pushed = eventsOf(parseAlertmanager({ body: JSON.stringify(webhook), headers: {}, options: {} }));
    const pulled = eventsOf(parseAlertmanagerApi({ body: captured, headers: {}, options: {} }));
    const comparable = ({ status, ignore_reason, source_event, ...rest }: AlertEvent) => rest;
    expect(pulled.map(comparable)).toEqual(pushed.map(comparable));
  });
});
