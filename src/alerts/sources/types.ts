// The parser contract of docs/alert-sources.md, section 1.1: a pure function from a
// webhook body to alert events. Parsers do no I/O and never throw.

export const SOURCE_TYPES = [
  "alertmanager",
  "grafana",
  "datadog",
  "pagerduty",
  "opsgenie",
  "cloudwatch",
  "azure-monitor",
  "gcp-monitoring",
  "newrelic",
  "sentry",
  "zabbix",
  "dynatrace",
  "elastic",
  "splunk",
  "uptime-kuma",
  "checkmk",
] as const;
export type SourceType = (typeof SOURCE_TYPES)[number];

export type EventStatus = "active" | "resolved" | "ignored" | "unchanged";
export type SeverityBucket = "Critical" | "High" | "Medium" | "Low" | "info";
export type SeverityMapping = "mapped" | "unmapped" | "missing";
export type LinkKind = "source" | "dashboard" | "runbook" | "silence" | "image";

export interface AlertLink {
  kind: LinkKind;
  url: string;
}

export interface UnmappedValue {
  field: "status" | "severity";
  value: string;
}

export interface AlertEvent {
  external_uid: string;
  status: EventStatus;
  /** `"<source_type>: <raw value>"` when status is `ignored`, else null. */
  ignore_reason: string | null;
  title: string;
  /** True when the title is the `"<source_type> alert <uid>"` fallback: it never overwrites a stored title. */
  title_is_fallback: boolean;
  description: string;
  source_severity: string;
  severity: SeverityBucket;
  /** 1..5 for Critical..info. */
  display_priority: number;
  severity_mapping: SeverityMapping;
  /** UTC ISO 8601 with milliseconds, or null when the payload has no time. */
  triggered_at: string | null;
  resolved_at: string | null;
  labels: Record<string, string>;
  links: AlertLink[];
  is_test: boolean;
  /** The raw status, action, transition or event type that drove `status`. */
  source_event: string;
  unmapped: UnmappedValue[];
  /**
   * A resolve Vigil inferred, not one the source sent: the alert was absent from a pull sync's
   * list. A later firing of the same episode undoes it.
   */
  inferred?: boolean;
  /**
   * A reminder that an episode already under way still fires (a Datadog renotification, a Splunk
   * saved search's next run, an Uptime Kuma resend while still down), not a trigger. The source
   * dates it when it was sent, so its time says nothing of when the episode began: it never starts
   * a new episode, moves no `triggered_at` and keeps an operator's ignore. After a resolve it
   * re-fires like any firing. Left out of other events.
   */
  reminder?: boolean;
}

export interface ParserOptions {
  /** Per-registration overrides of the raw severity value -> bucket map (keys compared case-insensitively). */
  severityOverrides?: Record<string, SeverityBucket>;
}

export interface ParseInput {
  /** The body exactly as received. */
  body: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string | undefined>;
  options: ParserOptions;
}

/** `note` says why a recognised message yields no event (an SNS handshake, a ping). */
export type ParseResult = { ok: true; events: AlertEvent[]; note?: string } | { ok: false; error: string };

export type Parser = (input: ParseInput) => ParseResult;
