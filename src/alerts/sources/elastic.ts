// Kibana alerting rules -> Webhook connector, alert-sources.md section 14. The body is a Mustache
// template, so three shapes are read: the rule action variables as nested objects, Keep's connector
// template (each object as JSON text) and security alert documents. One body yields one event.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  hashUid,
  isRecord,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  type SeverityResult,
  type StatusResult,
  type StatusTable,
  splitTag,
  splitTagList,
  type VigilFlag,
} from "./normalize/index.ts";
import type { AlertEvent, ParseResult, Parser, ParserOptions, SeverityBucket } from "./types.ts";

type Payload = Record<string, unknown>;

/** The rule action variables of one alert: `{rule, alert, context, date}`. */
interface ActionVariables {
  rule: Payload;
  alert: Payload;
  context: Payload;
  date: unknown;
}

type Extracted = { ok: true; value: ActionVariables } | { ok: false; error: string };

const NOT_KIBANA =
  "not a Kibana webhook: expected a JSON object with rule and alert objects, webhook_body, or kibana.alert.* fields";

const KEEP_FIELDS = { context: "context_info", alert: "alert_info", rule: "rule_info" } as const;

// `nodata`, `no data`, `no_data`: the action groups of rules that report missing data.
const NO_DATA = /nodata|no data|no_data/i;

const SECURITY_STATUS: StatusTable = { active: "active", recovered: "resolved", untracked: "resolved" };

function record(value: unknown): Payload {
  return isRecord(value) ? value : {};
}

// Keep's template renders each object as JSON text (`{{#context}}{{.}}{{/context}}`).
function keepObject(webhookBody: Payload, key: string): Payload | null {
  const value = webhookBody[key];
  if (value === undefined || value === null || value === "") return {};
  if (isRecord(value)) return value;
  if (typeof value !== "string") return null;
  try {
    const parsed: unknown = JSON.parse(value);
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function fromKeepTemplate(webhookBody: Payload): Extracted {
  const objects: Partial<Record<keyof typeof KEEP_FIELDS, Payload>> = {};
  for (const [name, key] of Object.entries(KEEP_FIELDS) as [keyof typeof KEEP_FIELDS, string][]) {
    const value = keepObject(webhookBody, key);
    if (value === null)
      return { ok: false, error: `not a Kibana webhook: webhook_body.${key} is not a JSON object` };
    objects[name] = value;
  }
  return {
    ok: true,
    value: {
      rule: objects.rule ?? {},
      alert: objects.alert ?? {},
      context: objects.context ?? {},
      date: undefined,
    },
  };
}

// Only rule.id and the action group are required; Mustache renders a missing variable as "", so an
// empty action group is accepted and gives `unchanged`.
function checkRequired(variables: ActionVariables): Extracted {
  if (firstText(variables.rule.id) === null)
    return { ok: false, error: "not a Kibana webhook: rule.id is missing" };
  const { alert } = variables;
  if (typeof alert.actionGroup !== "string" && typeof alert.actionGroupName !== "string") {
    return { ok: false, error: "not a Kibana webhook: alert.actionGroup (or actionGroupName) is missing" };
  }
  return { ok: true, value: variables };
}

function actionVariables(payload: Payload): Extracted | null {
  if (isRecord(payload.webhook_body)) {
    const extracted = fromKeepTemplate(payload.webhook_body);
    return extracted.ok ? checkRequired(extracted.value) : extracted;
  }
  if (!isRecord(payload.rule) && !isRecord(payload.alert)) return null;
  return checkRequired({
    rule: record(payload.rule),
    alert: record(payload.alert),
    context: record(payload.context),
    date: payload.date,
  });
}

function actionGroup(alert: Payload): string {
  return firstText(alert.actionGroup, alert.actionGroupName) ?? "";
}

// `recovered` is the only action group Kibana defines as not active; the others are rule-type names
// for "condition met".
function groupStatus(group: string): StatusResult {
  if (group === "") return { status: "unchanged", source_event: "" };
  return { status: group.toLowerCase() === "recovered" ? "resolved" : "active", source_event: group };
}

function groupBucket(group: string): SeverityBucket {
  const lower = group.toLowerCase();
  if (lower === "recovered") return "info";
  if (lower.includes("warning")) return "Medium";
  return NO_DATA.test(lower) ? "Low" : "High";
}

// A `severity` rule tag (`severity:high`) wins; else the action group id stands in for a severity.
function ruleSeverity(rule: Payload, group: string, options: ParserOptions): SeverityResult {
  const overrides = options.severityOverrides;
  const tag = splitTagList(rule.tags)
    .map(splitTag)
    .find(([key, value]) => key.toLowerCase() === "severity" && value !== "");
  if (tag) return mapSeverity(tag[1], { overrides });
  if (group === "") return mapSeverity(null);
  return mapSeverity(group, { table: { [group]: groupBucket(group) }, generic: false, overrides });
}

// Alert ids that name no instance: `*` for a rule without grouping, `query matched` for an
// Elasticsearch query rule without grouping. The latter equals the rule's firing action group, but
// it stays the alert id on recovery, when the action group is `recovered`: comparing with the
// action group alone would title the recovery differently from the firing.
const CONSTANT_ALERT_IDS = new Set(["*", "query matched"]);

function titleText(
  name: string | null,
  alertId: string | null,
  groupNames: readonly unknown[],
): string | null {
  if (name === null || alertId === null) return name;
  const lower = alertId.toLowerCase();
  if (CONSTANT_ALERT_IDS.has(lower)) return name;
  if (groupNames.some((group) => firstText(group)?.toLowerCase() === lower)) return name;
  return `${name} (${alertId})`;
}

function isTrue(value: unknown): boolean {
  return value === true || (typeof value === "string" && value.trim().toLowerCase() === "true");
}

function flags(alert: Payload, group: string): VigilFlag[] {
  const set: VigilFlag[] = [];
  if (NO_DATA.test(group)) set.push("vigil_no_data");
  if (isTrue(alert.flapping)) set.push("vigil_flapping");
  return set;
}

function normalizeActionVariables(variables: ActionVariables, options: ParserOptions): AlertEvent {
  const { rule, alert, context } = variables;
  const group = actionGroup(alert);
  const status = groupStatus(group);
  const time = parseSourceTime(firstText(context.timestamp, variables.date));
  const alertId = firstText(alert.id);
  const parts: AlertEventParts = {
    sourceType: "elastic",
    // alert.uuid changes with each episode; the rule and the alert instance (the group) do not.
    externalUid: hashUid(firstText(rule.id), alertId),
    status,
    title: titleText(firstText(rule.name), alertId, [alert.actionGroup, alert.actionGroupName]),
    description: firstText(context.reason, context.message),
    severity: ruleSeverity(rule, group, options),
    triggeredAt: status.status === "active" ? time : null,
    resolvedAt: status.status === "resolved" ? time : null,
    labels: createLabelBuilder()
      .addTags(rule.tags)
      .set("rule_type", firstText(rule.type))
      .set("space", firstText(rule.spaceId))
      .toRecord(),
    flags: flags(alert, group),
    links: buildLinks([
      { kind: "source", urls: [context.alertDetailsUrl] },
      { kind: "source", urls: [context.viewInAppUrl] },
      { kind: "source", urls: [rule.url] },
    ]),
  };
  return buildAlertEvent(parts);
}

/**
 * A field of a security alert document by its dotted name, whether the document is flat
 * (`"kibana.alert.status"`), nested (`kibana: {alert: {status}}`) or a mix of both.
 */
function dottedField(value: unknown, path: readonly string[]): unknown {
  if (path.length === 0) return value;
  if (!isRecord(value)) return undefined;
  for (let length = path.length; length >= 1; length -= 1) {
    const key = path.slice(0, length).join(".");
    if (!Object.hasOwn(value, key)) continue;
    const found = dottedField(value[key], path.slice(length));
    if (found !== undefined) return found;
  }
  return undefined;
}

function kibanaAlertField(document: Payload, name: string): string | null {
  return firstText(dottedField(document, `kibana.alert.${name}`.split(".")));
}

// `kibana.alert.start` (when the alert became active) and `kibana.alert.end` (when it recovered);
// `@timestamp` (when the document was written or last updated) stands in for the time the status
// names. A resolved event also carries the start of the episode it ends.
function securityAlertTimes(
  document: Payload,
  status: StatusResult,
): Pick<AlertEventParts, "triggeredAt" | "resolvedAt"> {
  const start = parseSourceTime(kibanaAlertField(document, "start"));
  const end = parseSourceTime(kibanaAlertField(document, "end"));
  const timestamp = parseSourceTime(firstText(dottedField(document, ["@timestamp"])));
  if (status.status === "active") return { triggeredAt: start ?? timestamp, resolvedAt: null };
  if (status.status === "resolved") return { triggeredAt: start, resolvedAt: end ?? timestamp };
  return { triggeredAt: null, resolvedAt: null };
}

function normalizeSecurityAlert(document: Payload, ruleUuid: string, options: ParserOptions): AlertEvent {
  const instanceId = kibanaAlertField(document, "instance.id");
  const status = mapStatus(kibanaAlertField(document, "status"), SECURITY_STATUS);
  const parts: AlertEventParts = {
    sourceType: "elastic",
    externalUid: hashUid(ruleUuid, instanceId),
    status,
    title: titleText(kibanaAlertField(document, "rule.name"), instanceId, []),
    description: kibanaAlertField(document, "reason"),
    severity: mapSeverity(kibanaAlertField(document, "severity"), { overrides: options.severityOverrides }),
    ...securityAlertTimes(document, status),
  };
  return buildAlertEvent(parts);
}

/** Parses a Kibana webhook connector body into one event. */
export const parseElastic: Parser = ({ body, headers, options }): ParseResult => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload)) return { ok: false, error: NOT_KIBANA };
  const ruleUuid = kibanaAlertField(payload, "rule.uuid");
  if (ruleUuid !== null && !isRecord(payload.webhook_body)) {
    return { ok: true, events: [normalizeSecurityAlert(payload, ruleUuid, options)] };
  }
  const variables = actionVariables(payload);
  if (variables === null) return { ok: false, error: NOT_KIBANA };
  if (!variables.ok) return variables;
  return { ok: true, events: [normalizeActionVariables(variables.value, options)] };
};
