import { describe, expect, it } from "vitest";
import { buildAlertEvent } from "./event.ts";
import { mapSeverity } from "./severity.ts";
import { mapStatus } from "./status.ts";

const missingSeverity = mapSeverity(undefined);

describe("buildAlertEvent", () => {
  it("assembles every field", () => {
    expect(
      buildAlertEvent({
        sourceType: "datadog",
        externalUid: "4836aed9c3d6d24f072b852736e4e4c2",
        status: mapStatus("Triggered", { triggered: "active" }),
        title: " High tracking\n",
        description: " body ",
        severity: mapSeverity("P1"),
        triggeredAt: "2024-05-14T10:12:31.000Z",
        labels: { env: "prod", vigil_x: "dropped" },
        flags: ["vigil_no_data"],
        links: [{ kind: "source", url: "https://app.datadoghq.com/monitors/1" }],
      }),
    ).toEqual({
      external_uid: "4836aed9c3d6d24f072b852736e4e4c2",
      status: "active",
      ignore_reason: null,
      title: "High tracking",
      title_is_fallback: false,
      description: "body",
      source_severity: "P1",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: null,
      labels: { vigil_no_data: "true", env: "prod" },
      links: [{ kind: "source", url: "https://app.datadoghq.com/monitors/1" }],
      is_test: false,
      source_event: "Triggered",
      unmapped: [],
    });
  });

  it("fills defaults: fallback title, empty description, no times, labels or links", () => {
    expect(
      buildAlertEvent({
        sourceType: "opsgenie",
        externalUid: "70413a06-38d6-4c85-92b8-5ebc900d42e2",
        status: { status: "unchanged", source_event: "AddNote" },
        severity: missingSeverity,
      }),
    ).toEqual({
      external_uid: "70413a06-38d6-4c85-92b8-5ebc900d42e2",
      status: "unchanged",
      ignore_reason: null,
      title: "opsgenie alert 70413a06-38d6-4c85-92b8-5ebc900d42e2",
      title_is_fallback: true,
      description: "",
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
      triggered_at: null,
      resolved_at: null,
      labels: {},
      links: [],
      is_test: false,
      source_event: "AddNote",
      unmapped: [],
    });
  });

  it("hashes a uid that is not path-safe, and uses the hashed uid in the fallback title", () => {
    const event = buildAlertEvent({
      sourceType: "sentry",
      externalUid: "a/b",
      status: { status: "active", source_event: "created" },
      severity: missingSeverity,
    });
    expect(event.external_uid).toBe("c14cddc033f64b9dea80ea675cf280a0");
    expect(event.title).toBe("sentry alert c14cddc033f64b9dea80ea675cf280a0");
  });

  it("writes ignore_reason from the raw value, or the value the section names", () => {
    const snooze = buildAlertEvent({
      sourceType: "opsgenie",
      externalUid: "a1",
      status: mapStatus("Snooze", { snooze: "ignored" }),
      severity: missingSeverity,
    });
    expect(snooze.ignore_reason).toBe("opsgenie: Snooze");
    const maintenance = buildAlertEvent({
      sourceType: "uptime-kuma",
      externalUid: "7",
      status: mapStatus(3, { "3": "ignored" }),
      ignoredValue: "maintenance",
      severity: missingSeverity,
    });
    expect(maintenance.ignore_reason).toBe("uptime-kuma: maintenance");
    expect(maintenance.source_event).toBe("3");
  });

  it("lists the status then the severity unmapped entries", () => {
    const event = buildAlertEvent({
      sourceType: "alertmanager",
      externalUid: "x",
      status: mapStatus("pending", { firing: "active" }),
      severity: mapSeverity("SEV-1"),
    });
    expect(event.status).toBe("unchanged");
    expect(event.unmapped).toEqual([
      { field: "status", value: "pending" },
      { field: "severity", value: "SEV-1" },
    ]);
  });

  it("gives a test notification bucket info and the vigil_test flag, keeping the raw severity", () => {
    const event = buildAlertEvent({
      sourceType: "grafana",
      externalUid: "b3f1c0d2a4e5f607",
      status: mapStatus("firing", { firing: "active" }),
      title: "TestAlert",
      severity: mapSeverity("critical"),
      labels: { alertname: "TestAlert", instance: "Grafana", vigil_test: "false" },
      flags: ["vigil_no_data"],
      isTest: true,
    });
    expect(event).toMatchObject({
      status: "active",
      is_test: true,
      source_severity: "critical",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      labels: { vigil_test: "true", vigil_no_data: "true", alertname: "TestAlert", instance: "Grafana" },
    });
    expect(Object.keys(event.labels)).toEqual(["vigil_test", "vigil_no_data", "alertname", "instance"]);
  });

  it("copies the links array", () => {
    const links = [{ kind: "source" as const, url: "https://x.example.com/" }];
    const event = buildAlertEvent({
      sourceType: "splunk",
      externalUid: "s",
      status: { status: "active", source_event: "" },
      severity: missingSeverity,
      links,
    });
    expect(event.links).toEqual(links);
    expect(event.links).not.toBe(links);
  });
});
