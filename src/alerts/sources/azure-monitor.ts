// Azure Monitor action group webhook with the common alert schema, alert-sources.md section 8: one
// event per body. Azure opens a new alert instance for each firing, so the instance GUID (the last
// segment of `essentials.alertId`) is the uid. The older non-common schemas are rejected: the action
// group must enable the common alert schema.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  firstText,
  hashUid,
  isPathSafeUid,
  isRecord,
  joinDescription,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  type SeverityTable,
  type StatusTable,
  splitTagList,
} from "./normalize/index.ts";
import type { AlertEvent, Parser, ParserOptions } from "./types.ts";

const COMMON_SCHEMA_ID = "azureMonitorCommonAlertSchema";

// Activity log alerts are stateless: they only ever fire.
const CONDITION_STATUS: StatusTable = { Fired: "active", Resolved: "resolved" };
const SEVERITY_TABLE: SeverityTable = {
  Sev0: "Critical",
  Sev1: "High",
  Sev2: "Medium",
  Sev3: "Low",
  Sev4: "info",
};

// Signal types whose `alertContext.properties` are the rule's custom properties. For Activity Log
// that object is the logged event's own data, not labels.
const CUSTOM_PROPERTY_SIGNALS = new Set(["metric", "log"]);
const ACTIVITY_LOG_SIGNAL = "activity log";

function signalTypeKey(essentials: Record<string, unknown>): string {
  return (firstText(essentials.signalType) ?? "").toLowerCase();
}

// The instance GUID when path-safe; otherwise the whole alertId is hashed (not the bad segment).
function alertUid(alertId: string): string {
  const instance = alertId.split("/").at(-1) ?? "";
  return isPathSafeUid(instance) ? instance : hashUid(alertId);
}

// The criteria of `alertContext.condition.allOf`; absent for activity log alerts.
function criteriaOf(alertContext: Record<string, unknown>): Record<string, unknown>[] {
  const condition = alertContext.condition;
  if (!isRecord(condition) || !Array.isArray(condition.allOf)) return [];
  return condition.allOf.filter(isRecord);
}

function descriptionOf(essentials: Record<string, unknown>, alertContext: Record<string, unknown>): string {
  const description = firstText(essentials.description);
  if (description !== null || signalTypeKey(essentials) !== ACTIVITY_LOG_SIGNAL) return description ?? "";
  return joinDescription(alertContext.operationName, alertContext.status);
}

function labelsOf(
  data: Record<string, unknown>,
  essentials: Record<string, unknown>,
  alertContext: Record<string, unknown>,
): Record<string, string> {
  const builder = createLabelBuilder();
  if (CUSTOM_PROPERTY_SIGNALS.has(signalTypeKey(essentials))) builder.addAll(alertContext.properties);
  // The action group's custom properties win over the rule's.
  if (isRecord(data.customProperties)) {
    for (const [key, value] of Object.entries(data.customProperties)) builder.set(key, value);
  }
  for (const criterion of criteriaOf(alertContext)) {
    const dimensions = Array.isArray(criterion.dimensions) ? criterion.dimensions : [];
    for (const dimension of dimensions) {
      if (isRecord(dimension) && typeof dimension.name === "string")
        builder.add(dimension.name, dimension.value);
    }
  }
  const resources = splitTagList(essentials.configurationItems);
  return builder
    .setIfAbsent("resource", resources.length > 0 ? resources.join(",") : null)
    .setIfAbsent("signal_type", firstText(essentials.signalType))
    .setIfAbsent("monitoring_service", firstText(essentials.monitoringService))
    .toRecord();
}

function normalizeAlert(
  data: Record<string, unknown>,
  essentials: Record<string, unknown>,
  alertId: string,
  options: ParserOptions,
): AlertEvent {
  const alertContext = isRecord(data.alertContext) ? data.alertContext : {};
  const [firstCriterion] = criteriaOf(alertContext);
  const parts: AlertEventParts = {
    sourceType: "azure-monitor",
    externalUid: alertUid(alertId),
    status: mapStatus(essentials.monitorCondition, CONDITION_STATUS),
    title: essentials.alertRule,
    description: descriptionOf(essentials, alertContext),
    severity: mapSeverity(essentials.severity, {
      table: SEVERITY_TABLE,
      overrides: options.severityOverrides,
    }),
    triggeredAt: parseSourceTime(essentials.firedDateTime),
    resolvedAt: parseSourceTime(essentials.resolvedDateTime),
    labels: labelsOf(data, essentials, alertContext),
    links: buildLinks([
      {
        kind: "source",
        urls: [firstCriterion?.linkToFilteredSearchResultsUI, firstCriterion?.linkToSearchResultsUI],
      },
    ]),
  };
  return buildAlertEvent(parts);
}

function isCommonSchema(schemaId: unknown): boolean {
  return typeof schemaId === "string" && schemaId.trim().toLowerCase() === COMMON_SCHEMA_ID.toLowerCase();
}

/** Parses an Azure Monitor common-alert-schema webhook body into one event. */
export const parseAzureMonitor: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  if (!isRecord(payload) || !isCommonSchema(payload.schemaId)) {
    return {
      ok: false,
      error: `not an Azure Monitor common alert: expected schemaId "${COMMON_SCHEMA_ID}" (enable the common alert schema on the action group)`,
    };
  }
  const data = payload.data;
  if (!isRecord(data) || !isRecord(data.essentials)) {
    return { ok: false, error: "not an Azure Monitor common alert: data.essentials is missing" };
  }
  const alertId = firstText(data.essentials.alertId);
  if (alertId === null) {
    return { ok: false, error: "not an Azure Monitor common alert: data.essentials.alertId is missing" };
  }
  return { ok: true, events: [normalizeAlert(data, data.essentials, alertId, options)] };
};
