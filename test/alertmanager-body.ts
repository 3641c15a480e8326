// An Alertmanager webhook body (payload version 4) built from a few fields per alert, for the tests
// that replay storms and lifecycles through the trigger.

export interface AmAlert {
  status: "firing" | "resolved";
  /** Alertmanager's fingerprint: the alert's external_uid. */
  fingerprint: string;
  startsAt: string;
  endsAt?: string;
  labels: Record<string, string>;
  /** The summary annotation (the title); `<alertname> fired` when absent. */
  summary?: string;
}

export function amBody(alerts: AmAlert[]): string {
  return JSON.stringify({
    version: "4",
    groupKey: "{}:{}",
    truncatedAlerts: 0,
    status: alerts.some((alert) => alert.status === "firing") ? "firing" : "resolved",
    receiver: "vigil",
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: "http://alertmanager.example:9093",
    alerts: alerts.map((alert) => ({
      status: alert.status,
      labels: alert.labels,
      annotations: { summary: alert.summary ?? `${alert.labels.alertname} fired` },
      startsAt: alert.startsAt,
      endsAt: alert.endsAt ?? "0001-01-01T00:00:00Z",
      generatorURL: "http://prometheus.example:9090/graph",
      fingerprint: alert.fingerprint,
    })),
  });
}
