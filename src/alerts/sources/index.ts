// The registered parsers, one per source type. A registration's `source` must name one of them.
import { parseAlertmanager } from "./alertmanager.ts";
import { parseAzureMonitor } from "./azure-monitor.ts";
import { parseCheckmk } from "./checkmk.ts";
import { parseCloudwatch } from "./cloudwatch.ts";
import { parseDatadog } from "./datadog.ts";
import { parseDynatrace } from "./dynatrace.ts";
import { parseElastic } from "./elastic.ts";
import { parseGcpMonitoring } from "./gcp-monitoring.ts";
import { parseGrafana } from "./grafana.ts";
import { parseNewrelic } from "./newrelic.ts";
import { parseOpsgenie } from "./opsgenie.ts";
import { parsePagerduty } from "./pagerduty.ts";
import { parseSentry } from "./sentry.ts";
import { parseSplunk } from "./splunk.ts";
import type { Parser, SourceType } from "./types.ts";
import { parseUptimeKuma } from "./uptime-kuma.ts";
import { parseZabbix } from "./zabbix.ts";

export const PARSERS: Record<SourceType, Parser> = {
  alertmanager: parseAlertmanager,
  grafana: parseGrafana,
  datadog: parseDatadog,
  pagerduty: parsePagerduty,
  opsgenie: parseOpsgenie,
  cloudwatch: parseCloudwatch,
  "azure-monitor": parseAzureMonitor,
  "gcp-monitoring": parseGcpMonitoring,
  newrelic: parseNewrelic,
  sentry: parseSentry,
  zabbix: parseZabbix,
  dynatrace: parseDynatrace,
  elastic: parseElastic,
  splunk: parseSplunk,
  "uptime-kuma": parseUptimeKuma,
  checkmk: parseCheckmk,
};

export { readSnsHandshake } from "./cloudwatch.ts";
export { type AlertEvent, SOURCE_TYPES, type SourceType } from "./types.ts";
