import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { onlyEventOf } from "../../../test/parse-results.ts";
import { parseGcpMonitoring } from "./gcp-monitoring.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("gcp-monitoring", name);
  return parseGcpMonitoring({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseGcpMonitoring({ body: JSON.stringify(payload), headers: {}, options });
}

// No fixture carries a severity or a severity user label.
const MISSING_SEVERITY = {
  source_severity: "",
  severity: "Medium",
  display_priority: 3,
  severity_mapping: "missing",
} as const;

const STACKDRIVER_SUMMARY = "CPU (agent) for webserver-85 is above the threshold of 1% with a value of 28.5%";

// Expected events below were written by hand from the fixture files and section 9 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "v1.2-open-gce-cpu.json": [
    {
      external_uid: "0.mtdi83m6w8ao",
      status: "active",
      ignore_reason: null,
      title: "choonho-server-cpu-alert-policy-test: VM Instance - CPU utilization",
      title_is_fallback: false,
      description:
        "CPU utilization for xxxxxxxxxxxxxxxxxxxxxxxx VM Instance labels {project_id=xxxxxxxxxxxxxxxxxxxxxxxx} is above the threshold of 0.500 with a value of 0.790.\n\nServer High CPU Usage",
      ...MISSING_SEVERITY,
      triggered_at: "2023-02-02T05:29:47.000Z",
      resolved_at: null,
      labels: {
        project_id: "xxxxxxxxxxxxxxxxxxxxxxxx",
        resource_type: "gce_instance",
        metric_type: "compute.googleapis.com/instance/cpu/utilization",
      },
      links: [
        {
          kind: "source",
          url: "https://console.cloud.google.com/monitoring/alerting/incidents/0.mtdi83m6w8ao?project=xxxxxxxxxxxxxxxxxxxxxxxx",
        },
      ],
      is_test: false,
      source_event: "open",
      unmapped: [],
    },
  ],

  "v1.2-closed-k8s-container-restart.json": [
    {
      external_uid: "0.m8u0mnh9byf4",
      status: "resolved",
      ignore_reason: null,
      title: "k8s-container-restarted: Kubernetes container restarted",
      title_is_fallback: false,
      // No documentation block: the summary alone.
      description:
        "Restart count for acre-pro Kubernetes Container labels {project_id=acre-pro, cluster_name=dev, namespace_name=dev, container_name=acrepro-backend} returned to normal with a value of 0.000.",
      ...MISSING_SEVERITY,
      triggered_at: "2021-10-24T18:47:10.000Z",
      resolved_at: "2021-10-24T18:48:10.000Z",
      labels: {
        cluster_name: "dev",
        container_name: "acrepro-backend",
        namespace_name: "dev",
        project_id: "acre-pro",
        resource_type: "k8s_container",
        metric_type: "kubernetes.io/container/restart_count",
      },
      links: [
        {
          kind: "source",
          url: "https://console.cloud.google.com/monitoring/alerting/incidents/0.m8u0mnh9byf4?project=acre-pro",
        },
      ],
      is_test: false,
      source_event: "closed",
      unmapped: [],
    },
  ],

  // A log-match condition has an empty metric type, which gives no metric_type label.
  "v1.2-open-log-match-gke-pod.json": [
    {
      external_uid: "0.mybdstmr76pg",
      status: "active",
      ignore_reason: null,
      title: "Get Version Alert: Log match condition",
      title_is_fallback: false,
      description:
        "Log match condition fired for Kubernetes Container with {cluster_name=autopilot-cluster-2, container_name=frontend, location=us-central1, namespace_name=frontend, pod_name=frontend-885b7ff57-mdfgp, project_id=hpb-bank-of-anthos}.\n\nGet Version Alert",
      ...MISSING_SEVERITY,
      triggered_at: "2023-06-06T18:38:11.000Z",
      resolved_at: null,
      labels: {
        cluster_name: "autopilot-cluster-2",
        container_name: "frontend",
        location: "us-central1",
        namespace_name: "frontend",
        pod_name: "frontend-885b7ff57-mdfgp",
        project_id: "hpb-bank-of-anthos",
        resource_type: "k8s_container",
      },
      links: [
        {
          kind: "source",
          url: "https://console.cloud.google.com/monitoring/alerting/incidents/0.mybdstmr76pg?project=hpb-bank-of-anthos",
        },
      ],
      is_test: false,
      source_event: "open",
      unmapped: [],
    },
  ],

  // Schema 1.1: no resource labels, so resource_name and resource_id; the JSON text in
  // documentation.content is kept as written.
  "v1.1-open-stackdriver.json": [
    {
      external_uid: "f2e08c333dc64cb09f75eaab355393bz",
      status: "active",
      ignore_reason: null,
      title: "Webserver Health: CPU usage",
      title_is_fallback: false,
      description: `${STACKDRIVER_SUMMARY}\n\n{"summary": "CPU utilization for alerta-webserver-85 is over 95%", "resource_name": "alerta-webserver-85"}`,
      ...MISSING_SEVERITY,
      triggered_at: "2017-07-06T19:10:14.000Z",
      resolved_at: null,
      labels: { resource_name: "webserver-85", resource_id: "i-4a266a2d" },
      links: [
        { kind: "source", url: "https://app.stackdriver.com/incidents/f2e08c333dc64cb09f75eaab355393bz" },
      ],
      is_test: false,
      source_event: "open",
      unmapped: [],
    },
  ],

  "v1.1-closed-stackdriver.json": [
    {
      external_uid: "f2e08c333dc64cb09f75eaab355393bz",
      status: "resolved",
      ignore_reason: null,
      title: "Webserver Health: CPU usage",
      title_is_fallback: false,
      description: `${STACKDRIVER_SUMMARY}\n\nThis is a markdown text example`,
      ...MISSING_SEVERITY,
      triggered_at: "2017-07-06T19:10:14.000Z",
      resolved_at: "2017-07-06T19:20:36.000Z",
      labels: { resource_name: "webserver-85", resource_id: "i-4a266a2d" },
      links: [
        { kind: "source", url: "https://app.stackdriver.com/incidents/f2e08c333dc64cb09f75eaab355393bz" },
      ],
      is_test: false,
      source_event: "closed",
      unmapped: [],
    },
  ],
};

describe("parseGcpMonitoring: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("gcp-monitoring", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    const result = parseFixture(name);
    expect(result).toEqual({ ok: true, events: expected });
    expect(result.ok && "note" in result).toBe(false);
  });
});

// A minimal schema 1.2 incident for the variants no fixture shows.
function incident(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    incident_id: "0.abc123",
    state: "open",
    started_at: 1715681551,
    ended_at: null,
    policy_name: "Checkout latency",
    condition_name: "p99 above 2s",
    url: "https://console.cloud.google.com/monitoring/alerting/incidents/0.abc123?project=shop",
    summary: "p99 latency is above 2s",
    resource: { type: "cloud_run_revision", labels: { service_name: "checkout" } },
    metric: { type: "run.googleapis.com/request_latencies", labels: {} },
    ...overrides,
  };
}

function onlyEvent(incidentFields: Record<string, unknown>, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson({ incident: incident(incidentFields), version: "1.2" }, options));
}

describe("parseGcpMonitoring: documented variants", () => {
  it("builds a whole event from the newer optional fields", () => {
    expect(
      onlyEvent({
        severity: "Error",
        policy_user_labels: { team: "payments", tier: "web" },
        metadata: {
          system_labels: { region: "europe-west1", tier: "system" },
          user_labels: { team: "checkout", owner: "sre" },
        },
        documentation: {
          subject: "[ALERT] Checkout latency high",
          content: "See the runbook.",
          mime_type: "text/markdown",
          links: [
            { display_name: "Runbook", url: "https://runbooks.example.com/checkout-latency" },
            { display_name: "Playbook", url: "https://wiki.example.com/playbooks/checkout" },
          ],
        },
        threshold_value: "2",
        observed_value: "3.4",
      }),
    ).toEqual({
      external_uid: "0.abc123",
      status: "active",
      ignore_reason: null,
      title: "[ALERT] Checkout latency high",
      title_is_fallback: false,
      description: "p99 latency is above 2s\n\nSee the runbook.",
      source_severity: "Error",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: null,
      // Later maps win: policy_user_labels over metadata.user_labels over metadata.system_labels.
      labels: {
        service_name: "checkout",
        region: "europe-west1",
        tier: "web",
        team: "payments",
        owner: "sre",
        resource_type: "cloud_run_revision",
        metric_type: "run.googleapis.com/request_latencies",
      },
      links: [
        {
          kind: "source",
          url: "https://console.cloud.google.com/monitoring/alerting/incidents/0.abc123?project=shop",
        },
        { kind: "runbook", url: "https://runbooks.example.com/checkout-latency" },
        { kind: "runbook", url: "https://wiki.example.com/playbooks/checkout" },
      ],
      is_test: false,
      source_event: "open",
      unmapped: [],
    });
  });

  it.each([
    ["Critical", "Critical", 1],
    ["Error", "High", 2],
    ["Warning", "Medium", 3],
    ["No severity", "Medium", 3],
    [" critical ", "Critical", 1],
    ["info", "info", 5],
  ])("maps incident.severity %j to %s", (raw, bucket, priority) => {
    expect(onlyEvent({ severity: raw })).toMatchObject({
      source_severity: raw.trim(),
      severity: bucket,
      display_priority: priority,
      severity_mapping: "mapped",
      unmapped: [],
    });
  });

  it("takes a severity user label when incident.severity is absent", () => {
    expect(
      onlyEvent({
        policy_user_labels: { severity: "warning" },
        metadata: { user_labels: { severity: "p1" } },
      }),
    ).toMatchObject({ source_severity: "warning", severity: "Medium", severity_mapping: "mapped" });
    expect(onlyEvent({ severity: "", metadata: { user_labels: { severity: "p1" } } })).toMatchObject({
      source_severity: "p1",
      severity: "Critical",
    });
    expect(onlyEvent({ severity: "Error", policy_user_labels: { severity: "low" } })).toMatchObject({
      source_severity: "Error",
      severity: "High",
    });
  });

  it("reads the user label through the generic table only", () => {
    // "No severity" is a GCP level, not a generic word.
    expect(onlyEvent({ policy_user_labels: { severity: "No severity" } })).toMatchObject({
      source_severity: "No severity",
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "No severity" }],
    });
  });

  it("marks an unknown severity unmapped and applies overrides", () => {
    expect(onlyEvent({ severity: "Sev0" })).toMatchObject({
      severity: "Medium",
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "Sev0" }],
    });
    expect(
      onlyEvent({ severity: "Sev0" }, { severityOverrides: { sev0: "Critical", error: "Low" } }),
    ).toMatchObject({ severity: "Critical", severity_mapping: "mapped", unmapped: [] });
    expect(onlyEvent({ severity: "Error" }, { severityOverrides: { error: "Low" } })).toMatchObject({
      severity: "Low",
    });
  });

  it("maps acknowledged to unchanged and an unknown state to unchanged, unmapped", () => {
    expect(onlyEvent({ state: "acknowledged" })).toMatchObject({
      status: "unchanged",
      source_event: "acknowledged",
      unmapped: [],
    });
    expect(onlyEvent({ state: "OPEN" })).toMatchObject({ status: "active", source_event: "OPEN" });
    expect(onlyEvent({ state: "snoozed" })).toMatchObject({
      status: "unchanged",
      source_event: "snoozed",
      unmapped: [{ field: "status", value: "snoozed" }],
    });
  });

  it("builds the title from subject, policy and condition", () => {
    const titleOf = (fields: Record<string, unknown>) => onlyEvent(fields).title;
    expect(titleOf({ documentation: { subject: "  " } })).toBe("Checkout latency: p99 above 2s");
    expect(titleOf({ condition_name: "" })).toBe("Checkout latency");
    expect(titleOf({ condition_name: "Checkout latency" })).toBe("Checkout latency");
    expect(titleOf({ policy_name: "" })).toBe("p99 above 2s");
    expect(onlyEvent({ policy_name: null, condition_name: null })).toMatchObject({
      title: "gcp-monitoring alert 0.abc123",
      title_is_fallback: true,
    });
  });

  it("hashes an incident id that is not path-safe and accepts a numeric one", () => {
    expect(onlyEvent({ incident_id: "0.abc/def" }).external_uid).toBe("679f942d1f5359cf24513766fc1d1096");
    expect(onlyEvent({ incident_id: 12345 }).external_uid).toBe("12345");
  });

  it("skips empty resource and metric types and keeps labels given as other JSON", () => {
    expect(
      onlyEvent({
        resource: { type: "", labels: { zone: "europe-west1-b", resource_type: "own" } },
        metric: { type: "", labels: { response_code: 500, gone: null } },
      }).labels,
    ).toEqual({ zone: "europe-west1-b", resource_type: "own", response_code: "500" });
  });

  it("drops links that are not absolute http(s) URLs", () => {
    expect(
      onlyEvent({
        url: "/monitoring/alerting/incidents/0.abc123",
        documentation: { links: [{ url: "ftp://example.com/x" }, "https://not-an-object.example.com", null] },
      }).links,
    ).toEqual([]);
  });
});

describe("parseGcpMonitoring: bad input", () => {
  const notGcp = {
    ok: false,
    error: "not a GCP Monitoring notification: expected a JSON object with an incident object",
  };

  itRejectsUnreadableBodies(parseGcpMonitoring, {
    empty: "  ",
    notJson: [
      ["plain text", "incident open"],
      ["truncated JSON", '{"incident":{"incident_id":"0.abc","state":"open"'],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [{ incident: incident() }]],
    ["null", null],
    ["incident as a string", { incident: "0.abc", version: "1.2" }],
    ["incident null", { incident: null }],
    ["an Alertmanager body", { version: "4", alerts: [] }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notGcp);
  });

  it.each([
    ["absent", undefined],
    ["null", null],
    ["empty", " "],
    ["an object", { id: "0.abc" }],
    ["a boolean", true],
  ])("rejects an incident whose incident_id is %s", (_name, incidentId) => {
    expect(parseJson({ incident: incident({ incident_id: incidentId }) })).toEqual({
      ok: false,
      error: "not a GCP Monitoring notification: incident.incident_id is missing",
    });
  });
});
