import { describe, expect, it } from "vitest";
import {
  itHasAnExpectationForEveryFixture,
  itRejectsUnreadableBodies,
  readFixture,
} from "../../../test/fixtures.ts";
import { eventsOf, onlyEventOf } from "../../../test/parse-results.ts";
import { parseAlertmanager } from "./alertmanager.ts";
import type { AlertEvent, ParseResult, ParserOptions } from "./types.ts";

function parseFixture(name: string): ParseResult {
  const body = readFixture("alertmanager", name);
  return parseAlertmanager({ body, headers: { "content-type": "application/json" }, options: {} });
}

function parseJson(payload: unknown, options: ParserOptions = {}): ParseResult {
  return parseAlertmanager({ body: JSON.stringify(payload), headers: {}, options });
}

// Expected events below were written by hand from the fixture files and section 2 of
// alert-sources.md, not copied from the parser's output.
const EXPECTED_BY_FIXTURE: Record<string, AlertEvent[]> = {
  "firing-single-critical.json": [
    {
      external_uid: "5f3c1a2b9d8e7f60",
      status: "active",
      ignore_reason: null,
      title: "KubePodCrashLooping",
      title_is_fallback: false,
      description:
        'Pod is crash looping.\n\nPod payments/payments-api-7d9f8b6c5d-x2k4p (payments-api) is in waiting state (reason: "CrashLoopBackOff").',
      source_severity: "critical",
      severity: "Critical",
      display_priority: 1,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T09:12:31.512Z",
      resolved_at: null,
      labels: {
        alertname: "KubePodCrashLooping",
        cluster: "prod-eu-west-1",
        container: "payments-api",
        env: "production",
        job: "kube-state-metrics",
        namespace: "payments",
        pod: "payments-api-7d9f8b6c5d-x2k4p",
        service: "payments-api",
        severity: "critical",
      },
      links: [
        {
          kind: "source",
          url: "http://prometheus-k8s-0:9090/graph?g0.expr=max_over_time%28kube_pod_container_status_waiting_reason%7Breason%3D%22CrashLoopBackOff%22%7D%5B5m%5D%29+%3E%3D+1&g0.tab=1",
        },
        {
          kind: "runbook",
          url: "https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping",
        },
      ],
      is_test: false,
      source_event: "firing",
      unmapped: [],
    },
  ],

  "firing-group-3-alerts.json": [
    [
      "0b2d6e8f1a3c4d57",
      "10.42.3.17:8080",
      "checkout-service-6b7c9d4f8-2lq9m",
      "0.734s",
      "2024-05-14T10:01:07.226Z",
    ],
    [
      "7e41c09a2f5b3d68",
      "10.42.5.9:8080",
      "checkout-service-6b7c9d4f8-8xv7r",
      "0.612s",
      "2024-05-14T10:01:07.226Z",
    ],
    [
      "c93a5d0e4b6f1287",
      "10.42.1.22:8080",
      "checkout-service-6b7c9d4f8-kd4tz",
      "0.951s",
      "2024-05-14T10:02:37.226Z",
    ],
  ].map(([uid, instance, pod, latency, startsAt]) => ({
    external_uid: uid as string,
    status: "active",
    ignore_reason: null,
    title: "HighRequestLatency",
    title_is_fallback: false,
    description: `p99 request latency above 500ms\n\np99 latency of ${pod} is ${latency}`,
    source_severity: "warning",
    severity: "Medium",
    display_priority: 3,
    severity_mapping: "mapped",
    triggered_at: startsAt as string,
    resolved_at: null,
    labels: {
      alertname: "HighRequestLatency",
      cluster: "prod-us-east-1",
      env: "production",
      instance: instance as string,
      job: "checkout-service",
      namespace: "checkout",
      pod: pod as string,
      service: "checkout-service",
      severity: "warning",
    },
    links: [
      {
        kind: "source",
        url: "http://prometheus.example.com:9090/graph?g0.expr=histogram_quantile%280.99%2C+sum+by%28le%2C+pod%29+%28rate%28http_request_duration_seconds_bucket%5B5m%5D%29%29%29+%3E+0.5&g0.tab=1",
      },
    ],
    is_test: false,
    source_event: "firing",
    unmapped: [],
  })),

  "resolved-2-alerts.json": [
    [
      "2a9f6c1d8e3b0475",
      "ip-10-1-12-34.eu-central-1.compute.internal",
      "node-exporter-4hx8w",
      "14.2%",
      "2024-05-13T22:40:12.001Z",
    ],
    [
      "e81b4d7a05c26f39",
      "ip-10-1-40-7.eu-central-1.compute.internal",
      "node-exporter-q9z2c",
      "12.8%",
      "2024-05-13T23:05:42.001Z",
    ],
  ].map(([uid, instance, pod, available, startsAt]) => ({
    external_uid: uid as string,
    status: "resolved",
    ignore_reason: null,
    title: "NodeFilesystemSpaceFillingUp",
    title_is_fallback: false,
    description: `Filesystem is predicted to run out of space within the next 24 hours.\n\nFilesystem on /dev/nvme0n1p1, mounted on /, at ${instance} has only ${available} available space left and is filling up.`,
    source_severity: "warning",
    severity: "Medium",
    display_priority: 3,
    severity_mapping: "mapped",
    triggered_at: startsAt as string,
    resolved_at: "2024-05-14T01:15:12.001Z",
    labels: {
      alertname: "NodeFilesystemSpaceFillingUp",
      cluster: "staging-eu-central-1",
      device: "/dev/nvme0n1p1",
      env: "staging",
      fstype: "ext4",
      instance: instance as string,
      job: "node-exporter",
      mountpoint: "/",
      namespace: "monitoring",
      pod: pod as string,
      severity: "warning",
    },
    links: [
      {
        kind: "source",
        url: "http://prometheus.staging.example.com:9090/graph?g0.expr=node_filesystem_avail_bytes%7Bfstype%21%3D%22%22%2Cjob%3D%22node-exporter%22%7D+%2F+node_filesystem_size_bytes+%2A+100+%3C+15&g0.tab=1",
      },
    ],
    is_test: false,
    source_event: "resolved",
    unmapped: [],
  })),

  // Two alerts with equal labels and different fingerprints: they stay two alerts.
  "zulip-fixture-2-alerts-no-truncated.json": [
    ["a1bc48475b20e73d", "34.75C"],
    ["c2ea85182f28cbd9", "17.625C"],
  ].map(([uid, temperature]) => ({
    external_uid: uid as string,
    status: "active",
    ignore_reason: null,
    title: "High CPU Temperature",
    title_is_fallback: false,
    description: `High CPU core temperature\n\nCPU core temperature is ${temperature}`,
    source_severity: "critical",
    severity: "Critical",
    display_priority: 1,
    severity_mapping: "mapped",
    // Nanoseconds truncated to milliseconds.
    triggered_at: "2020-02-06T00:17:58.432Z",
    resolved_at: null,
    labels: { alertname: "High CPU Temperature", host: "andromeda", severity: "critical" },
    links: [
      {
        kind: "source",
        url: "http://cobalt:9090/graph?g0.expr=avg+by%28host%29+%28sensors_temp_input%7Bfeature%3D~%22core_%5B0-9%5D%2B%22%7D%29+%3E+15&g0.tab=1",
      },
    ],
    is_test: false,
    source_event: "firing",
    unmapped: [],
  })),

  "firing-v0.34-notification-reason.json": [
    {
      external_uid: "4c7d2e9a1b0f8356",
      status: "active",
      ignore_reason: null,
      title: "TargetDown",
      title_is_fallback: false,
      description:
        "Some targets were not reachable from the monitoring server for an extended period of time.\n\n33.3% of the orders-api/orders-api targets in orders namespace are down.",
      source_severity: "info",
      severity: "info",
      display_priority: 5,
      severity_mapping: "mapped",
      triggered_at: "2026-08-20T07:45:03.118Z",
      resolved_at: null,
      labels: {
        alertname: "TargetDown",
        cluster: "prod-ap-southeast-1",
        env: "production",
        job: "orders-api",
        namespace: "orders",
        service: "orders-api",
        severity: "info",
      },
      links: [
        {
          kind: "source",
          url: "http://prometheus.example.com:9090/graph?g0.expr=100+%2A+%281+-+avg+by+%28job%2C+namespace%2C+service%29+%28up%29%29+%3E+10&g0.tab=1",
        },
      ],
      is_test: false,
      source_event: "firing",
      unmapped: [],
    },
  ],
};

describe("parseAlertmanager: shared fixtures", () => {
  itHasAnExpectationForEveryFixture("alertmanager", EXPECTED_BY_FIXTURE);

  it.each(Object.entries(EXPECTED_BY_FIXTURE))("%s", (name, expected) => {
    const result = parseFixture(name);
    expect(result).toEqual({ ok: true, events: expected });
    expect(result.ok && "note" in result).toBe(false);
  });
});

// A minimal Alertmanager alert for the variants no fixture shows.
function alert(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    status: "firing",
    labels: { alertname: "DiskFull", instance: "db-1:9100", severity: "high" },
    annotations: { summary: "Disk is full" },
    startsAt: "2024-05-14T10:12:31.000Z",
    endsAt: "0001-01-01T00:00:00Z",
    generatorURL: "http://prometheus:9090/graph?g0.expr=up",
    fingerprint: "1111222233334444",
    ...overrides,
  };
}

function onlyEvent(payload: unknown, options: ParserOptions = {}): AlertEvent {
  return onlyEventOf(parseJson(payload, options));
}

describe("parseAlertmanager: documented variants", () => {
  it("builds a whole event from a minimal alert", () => {
    expect(onlyEvent({ alerts: [alert()] })).toEqual({
      external_uid: "1111222233334444",
      status: "active",
      ignore_reason: null,
      title: "DiskFull",
      title_is_fallback: false,
      description: "Disk is full",
      source_severity: "high",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
      triggered_at: "2024-05-14T10:12:31.000Z",
      resolved_at: null,
      labels: { alertname: "DiskFull", instance: "db-1:9100", severity: "high" },
      links: [{ kind: "source", url: "http://prometheus:9090/graph?g0.expr=up" }],
      is_test: false,
      source_event: "firing",
      unmapped: [],
    });
  });

  it("computes the Prometheus fingerprint of the labels when there is no fingerprint", () => {
    const labels = { alertname: "High CPU Temperature", host: "andromeda", severity: "critical" };
    for (const fingerprint of [undefined, null, ""]) {
      expect(onlyEvent({ alerts: [alert({ labels, fingerprint })] }).external_uid).toBe("a1bc48475b20e73d");
    }
  });

  it("fingerprints the labels as received, before stripping __ labels", () => {
    const event = onlyEvent({
      alerts: [
        alert({
          fingerprint: undefined,
          labels: {
            alertname: "DiskFull",
            __name__: "node_filesystem_avail_bytes",
            instance: "db-1:9100",
            severity: "high",
          },
        }),
      ],
    });
    expect(event.external_uid).toBe("0f8c084bb463129d");
    expect(event.labels).toEqual({ alertname: "DiskFull", instance: "db-1:9100", severity: "high" });
  });

  it("uses a fingerprint verbatim even when it does not match the labels", () => {
    const labels = { alertname: "High CPU Temperature", host: "andromeda", severity: "critical" };
    expect(onlyEvent({ alerts: [alert({ labels, fingerprint: "ffffffffffffffff" })] }).external_uid).toBe(
      "ffffffffffffffff",
    );
  });

  it("hashes a fingerprint that is not path-safe", () => {
    expect(onlyEvent({ alerts: [alert({ fingerprint: "abc/def" })] }).external_uid).toBe(
      "3c56f20931870aab85951364886aef94",
    );
  });

  it("reads startsAt with an offset or with nanoseconds", () => {
    expect(onlyEvent({ alerts: [alert({ startsAt: "2024-05-14T12:12:31+02:00" })] }).triggered_at).toBe(
      "2024-05-14T10:12:31.000Z",
    );
    expect(
      onlyEvent({ alerts: [alert({ startsAt: "2024-05-14T10:12:31.123456789-00:30" })] }).triggered_at,
    ).toBe("2024-05-14T10:42:31.123Z");
  });

  it("decides status per alert in a group mixing firing and resolved alerts", () => {
    const events = eventsOf(
      parseJson({
        version: "4",
        status: "firing",
        alerts: [
          alert({ fingerprint: "aaaaaaaaaaaaaaaa", endsAt: "2024-05-14T10:17:31.000Z" }),
          alert({ fingerprint: "bbbbbbbbbbbbbbbb", status: "resolved", endsAt: "2024-05-14T11:00:00.250Z" }),
        ],
      }),
    );
    expect(
      events.map((event) => [event.external_uid, event.status, event.source_event, event.resolved_at]),
    ).toEqual([
      // endsAt of a firing alert is the resolve timeout, not a resolve.
      ["aaaaaaaaaaaaaaaa", "active", "firing", null],
      ["bbbbbbbbbbbbbbbb", "resolved", "resolved", "2024-05-14T11:00:00.250Z"],
    ]);
  });

  it("never takes the status from the group status", () => {
    expect(onlyEvent({ status: "resolved", alerts: [alert()] }).status).toBe("active");
    expect(onlyEvent({ status: "firing", alerts: [alert({ status: "resolved" })] }).status).toBe("resolved");
  });

  it("matches the alert status case-insensitively", () => {
    expect(onlyEvent({ alerts: [alert({ status: " Resolved " })] })).toMatchObject({
      status: "resolved",
      source_event: "Resolved",
      resolved_at: null,
    });
  });

  it("records truncatedAlerts > 0 and yields only the listed alerts", () => {
    expect(parseJson({ truncatedAlerts: 3, alerts: [alert()] })).toEqual({
      ok: true,
      events: [onlyEvent({ alerts: [alert()] })],
      note: "truncatedAlerts: 3 (Alertmanager left them out; only the 1 listed alerts yield events)",
    });
  });

  it("adds no note for truncatedAlerts 0 or absent", () => {
    for (const truncatedAlerts of [0, undefined, "2"]) {
      const result = parseJson({ truncatedAlerts, alerts: [alert()] });
      expect(result.ok && "note" in result).toBe(false);
    }
  });

  it("yields no events for an empty alerts list", () => {
    expect(parseJson({ version: "4", status: "firing", alerts: [] })).toEqual({ ok: true, events: [] });
  });

  it("makes an unknown or missing alert status unchanged and unmapped", () => {
    expect(
      onlyEvent({ alerts: [alert({ status: "pending", endsAt: "2024-05-14T11:00:00Z" })] }),
    ).toMatchObject({
      status: "unchanged",
      source_event: "pending",
      resolved_at: null,
      unmapped: [{ field: "status", value: "pending" }],
    });
    expect(onlyEvent({ alerts: [alert({ status: undefined })] })).toMatchObject({
      status: "unchanged",
      source_event: "",
      unmapped: [{ field: "status", value: "" }],
    });
  });

  it("takes severity from labels, else annotations, else missing", () => {
    const noSeverityLabels = { alertname: "DiskFull" };
    expect(
      onlyEvent({ alerts: [alert({ labels: noSeverityLabels, annotations: { severity: "error" } })] }),
    ).toMatchObject({
      source_severity: "error",
      severity: "High",
      display_priority: 2,
      severity_mapping: "mapped",
    });
    expect(
      onlyEvent({
        alerts: [alert({ labels: { ...noSeverityLabels, severity: "" }, annotations: { severity: "none" } })],
      }),
    ).toMatchObject({ source_severity: "none", severity: "info", display_priority: 5 });
    expect(
      onlyEvent({
        alerts: [
          alert({
            labels: { ...noSeverityLabels, severity: "warning" },
            annotations: { severity: "critical" },
          }),
        ],
      }),
    ).toMatchObject({ source_severity: "warning", severity: "Medium" });
    expect(onlyEvent({ alerts: [alert({ labels: noSeverityLabels, annotations: {} })] })).toMatchObject({
      source_severity: "",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "missing",
      unmapped: [],
    });
  });

  it("marks an unknown severity unmapped", () => {
    expect(onlyEvent({ alerts: [alert({ labels: { alertname: "X", severity: "page" } })] })).toMatchObject({
      source_severity: "page",
      severity: "Medium",
      display_priority: 3,
      severity_mapping: "unmapped",
      unmapped: [{ field: "severity", value: "page" }],
    });
  });

  it("applies the registration's severity overrides", () => {
    const options: ParserOptions = { severityOverrides: { page: "Critical", HIGH: "Low" } };
    expect(
      onlyEvent({ alerts: [alert({ labels: { alertname: "X", severity: "page" } })] }, options),
    ).toMatchObject({
      source_severity: "page",
      severity: "Critical",
      severity_mapping: "mapped",
      unmapped: [],
    });
    expect(onlyEvent({ alerts: [alert()] }, options)).toMatchObject({
      source_severity: "high",
      severity: "Low",
    });
  });

  it("falls back from alertname to the summary, then to the uid", () => {
    expect(onlyEvent({ alerts: [alert({ labels: { alertname: "  " } })] })).toMatchObject({
      title: "Disk is full",
      title_is_fallback: false,
    });
    expect(onlyEvent({ alerts: [alert({ labels: {}, annotations: {} })] })).toMatchObject({
      title: "alertmanager alert 1111222233334444",
      title_is_fallback: true,
      description: "",
    });
  });

  it("builds the description from summary, then description or message", () => {
    const descriptionOf = (annotations: Record<string, unknown>) =>
      onlyEvent({ alerts: [alert({ annotations })] }).description;
    expect(descriptionOf({ summary: "S", message: "M" })).toBe("S\n\nM");
    expect(descriptionOf({ summary: "S", description: "D", message: "M" })).toBe("S\n\nD");
    expect(descriptionOf({ summary: "S", description: "", message: "M" })).toBe("S\n\nM");
    expect(descriptionOf({ description: "D" })).toBe("D");
    expect(descriptionOf({ summary: "Same", description: "Same" })).toBe("Same");
    expect(descriptionOf({ topic: "andromeda" })).toBe("");
  });

  it("keeps the runbook and dashboard links, preferring the _url annotations", () => {
    expect(
      onlyEvent({
        alerts: [
          alert({
            annotations: {
              runbook_url: "https://runbooks.example.com/disk-full",
              runbook: "https://wiki.example.com/disk",
              dashboard: "https://grafana.example.com/d/disk",
            },
          }),
        ],
      }).links,
    ).toEqual([
      { kind: "source", url: "http://prometheus:9090/graph?g0.expr=up" },
      { kind: "runbook", url: "https://runbooks.example.com/disk-full" },
      { kind: "dashboard", url: "https://grafana.example.com/d/disk" },
    ]);
    expect(
      onlyEvent({
        alerts: [
          alert({
            annotations: {
              runbook: "https://wiki.example.com/disk",
              dashboard_url: "https://grafana.example.com/d/1",
            },
          }),
        ],
      }).links,
    ).toEqual([
      { kind: "source", url: "http://prometheus:9090/graph?g0.expr=up" },
      { kind: "runbook", url: "https://wiki.example.com/disk" },
      { kind: "dashboard", url: "https://grafana.example.com/d/1" },
    ]);
  });

  it("drops relative, non-http and placeholder links", () => {
    expect(
      onlyEvent({
        externalURL: "http://alertmanager:9093",
        alerts: [
          alert({
            generatorURL: "/graph?g0.expr=up",
            annotations: {
              runbook_url: "javascript:alert(1)",
              dashboard_url: "https://grafana/d/{{ $labels.job }}",
            },
          }),
        ],
      }).links,
    ).toEqual([]);
  });

  it("strips __ and vigil_ labels and flattens other values", () => {
    expect(
      onlyEvent({
        alerts: [
          alert({
            labels: {
              alertname: "DiskFull",
              __alertmanager_internal: "x",
              vigil_test: "true",
              priority: 2,
              gone: null,
              " padded ": "v",
            },
          }),
        ],
      }).labels,
    ).toEqual({ alertname: "DiskFull", priority: "2", padded: "v" });
  });

  it("treats a null label set as empty", () => {
    expect(onlyEvent({ alerts: [alert({ labels: null, fingerprint: undefined })] })).toMatchObject({
      external_uid: "cbf29ce484222325",
      labels: {},
      title: "Disk is full",
    });
  });

  it("ignores request headers and reads a text/plain body as JSON", () => {
    const result = parseAlertmanager({
      body: JSON.stringify({ alerts: [alert()] }),
      headers: { "content-type": "text/plain" },
      options: {},
    });
    expect(eventsOf(result)).toEqual([onlyEvent({ alerts: [alert()] })]);
  });
});

describe("parseAlertmanager: bad input", () => {
  const notAlertmanager = {
    ok: false,
    error: "not an Alertmanager webhook: expected a JSON object with an alerts array",
  };

  itRejectsUnreadableBodies(parseAlertmanager, {
    empty: "",
    notJson: [
      ["plain text", "Alertmanager says hi"],
      ["truncated JSON", '{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"X"'],
      ["single quotes", "{'alerts': []}"],
      ["form data", "alerts=1"],
    ],
  });

  it.each([
    ["an empty object", {}],
    ["an array", [alert()]],
    ["a string", "alerts"],
    ["null", null],
    ["a number", 4],
    ["alerts as an object", { alerts: alert() }],
    ["alerts as a string", { alerts: "[]" }],
    ["alerts null", { alerts: null }],
    ["a Grafana legacy body", { ruleName: "CPU", state: "alerting", evalMatches: [] }],
  ])("rejects %s", (_name, payload) => {
    expect(parseJson(payload)).toEqual(notAlertmanager);
  });

  it.each([
    ["null", null],
    ["a string", "firing"],
    ["an array", [alert()]],
    ["an alert without labels", { ...alert(), labels: undefined }],
    ["labels as a string", alert({ labels: "alertname=X" })],
    ["labels as an array", alert({ labels: [["alertname", "X"]] })],
  ])("rejects an alert that is %s, naming its index", (_name, bad) => {
    expect(parseJson({ alerts: [alert(), bad] })).toEqual({
      ok: false,
      error: "not an Alertmanager webhook: alerts[1] is not an object with labels",
    });
  });

  it("ignores non-object annotations", () => {
    expect(onlyEvent({ alerts: [alert({ annotations: "broken" })] })).toMatchObject({
      title: "DiskFull",
      description: "",
    });
  });
});
