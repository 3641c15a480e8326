// Bodies whose shape only one source sends. A parser that accepts loosely shaped custom templates
// (Datadog, New Relic, Zabbix) would otherwise read another source's body posted to its trigger URL
// as an alert of its own: a trigger and its recovery as two alerts that never resolve. Such a body
// is a parse error naming the source it came from (alert-sources.md 1.1).
import type { SourceType } from "../types.ts";
import { isRecord } from "./json-value.ts";

interface Shape {
  /** The sources that send this shape (a body of their own family is never foreign to them). */
  family: SourceType[];
  name: string;
  matches: (payload: Record<string, unknown>) => boolean;
}

const SHAPES: Shape[] = [
  {
    family: ["alertmanager", "grafana"],
    name: "an Alertmanager or Grafana notification (alerts[] with groupKey or receiver)",
    matches: (p) => Array.isArray(p.alerts) && ("groupKey" in p || "receiver" in p),
  },
  {
    family: ["grafana"],
    name: "a Grafana legacy alert (evalMatches, ruleUrl)",
    matches: (p) => "evalMatches" in p || ("ruleId" in p && "ruleUrl" in p),
  },
  {
    family: ["datadog"],
    name: "a Datadog webhook (event_type, last_updated)",
    matches: (p) => "event_type" in p && "last_updated" in p,
  },
  {
    family: ["newrelic"],
    name: "a New Relic workflow issue (issueUrl, impactedEntities)",
    matches: (p) => "issueUrl" in p || ("impactedEntities" in p && "totalIncidents" in p),
  },
  {
    family: ["newrelic"],
    name: "a New Relic legacy incident (incident_id, current_state)",
    matches: (p) => "incident_id" in p && "current_state" in p,
  },
  {
    family: ["zabbix"],
    name: "a Zabbix media type body (triggerId, lastReceived)",
    matches: (p) => "triggerId" in p && "lastReceived" in p,
  },
  {
    family: ["checkmk"],
    name: "a Checkmk notification (what, notification_type)",
    matches: (p) => (p.what === "HOST" || p.what === "SERVICE") && "notification_type" in p,
  },
  {
    family: ["sentry"],
    name: "a Sentry webhook (project_slug, culprit)",
    matches: (p) => "project_slug" in p && "culprit" in p,
  },
  {
    family: ["pagerduty"],
    name: "a PagerDuty webhook (event.event_type)",
    matches: (p) => isRecord(p.event) && typeof p.event.event_type === "string" && "resource_type" in p.event,
  },
  {
    family: ["cloudwatch"],
    name: "an Amazon SNS message (Type, TopicArn)",
    matches: (p) => typeof p.Type === "string" && "TopicArn" in p,
  },
  {
    family: ["azure-monitor"],
    name: "an Azure Monitor alert (schemaId, data.essentials)",
    matches: (p) => "schemaId" in p && isRecord(p.data) && isRecord(p.data.essentials),
  },
  {
    family: ["uptime-kuma"],
    name: "an Uptime Kuma notification (heartbeat, monitor)",
    matches: (p) => "heartbeat" in p && "monitor" in p && "msg" in p,
  },
];

/** The parse error for a body another source sent (what it is, and where it belongs), or null. */
export function foreignBodyError(
  payload: Record<string, unknown>,
  own: SourceType,
): { ok: false; error: string } | null {
  const shape = SHAPES.find((candidate) => !candidate.family.includes(own) && candidate.matches(payload));
  if (!shape) return null;
  return { ok: false, error: `not a ${own} webhook: this is ${shape.name}; register it with that source` };
}
