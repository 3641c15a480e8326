// CloudWatch alarm -> SNS -> HTTPS subscription, alert-sources.md section 7. The body is the SNS
// envelope (sent as text/plain) whose `Message` is the alarm as JSON text, or, with raw message
// delivery, the alarm itself. SNS subscription handshakes yield no event; `readSnsHandshake` gives
// the ingest what it needs to record (and maybe confirm) them. Nothing here does I/O.
import {
  type AlertEventParts,
  buildAlertEvent,
  buildLinks,
  createLabelBuilder,
  decodeBody,
  encodeUrlPart,
  firstText,
  hashUid,
  isRecord,
  joinDescription,
  type LabelBuilder,
  mapSeverity,
  mapStatus,
  parseSourceTime,
  type SeverityTable,
  type StatusTable,
  type UidPart,
} from "./normalize/index.ts";
import type { AlertEvent, ParseInput, ParseResult, Parser, ParserOptions } from "./types.ts";

const STATE_STATUS: StatusTable = { ALARM: "active", INSUFFICIENT_DATA: "active", OK: "resolved" };
// The section's own table; any other state value is unmapped, so the generic table is not used.
const STATE_SEVERITY: SeverityTable = { ALARM: "High", INSUFFICIENT_DATA: "Low", OK: "info" };
const INSUFFICIENT_DATA = "INSUFFICIENT_DATA";

// An AWS region code such as `eu-west-1` or `us-gov-west-1`, as opposed to the display name
// (`EU (Ireland)`) older payloads carry in `Region`.
const REGION_CODE = /^[a-z]{2}(-[a-z]+)+-\d+$/;

const HANDSHAKE_TYPES = ["SubscriptionConfirmation", "UnsubscribeConfirmation"] as const;
export type SnsHandshakeType = (typeof HANDSHAKE_TYPES)[number];

/** What the ingest records of an SNS subscription handshake, and the URL it may call to confirm. */
export interface SnsHandshake {
  type: SnsHandshakeType;
  topicArn: string | null;
  messageId: string | null;
  /** `SubscribeURL` as sent, for the record (also present on an UnsubscribeConfirmation). */
  subscribeUrl: string | null;
  /**
   * The URL to GET to confirm the subscription when the registration enables auto-confirm: set only
   * for a `SubscriptionConfirmation` whose `SubscribeURL` is `https://sns.<region>.amazonaws.com/...`.
   * Always null for an `UnsubscribeConfirmation`: calling its URL would subscribe again.
   */
  confirmUrl: string | null;
}

// --- SNS envelope ----------------------------------------------------------------------------

function handshakeType(type: unknown): SnsHandshakeType | null {
  if (typeof type !== "string") return null;
  const wanted = type.trim().toLowerCase();
  return HANDSHAKE_TYPES.find((name) => name.toLowerCase() === wanted) ?? null;
}

// Only SNS itself may be called: https, no credentials or port, host `sns.<region>.amazonaws.com`.
function trustedSubscribeUrl(value: string | null): string | null {
  if (value === null || !URL.canParse(value)) return null;
  const url = new URL(value);
  const isSnsHost = /^sns\.[a-z0-9-]+\.amazonaws\.com$/.test(url.hostname);
  const plain = url.protocol === "https:" && url.port === "" && url.username === "" && url.password === "";
  return isSnsHost && plain ? value : null;
}

function handshakeOf(envelope: Record<string, unknown>): SnsHandshake | null {
  const type = handshakeType(envelope.Type);
  if (type === null) return null;
  const subscribeUrl = firstText(envelope.SubscribeURL);
  return {
    type,
    topicArn: firstText(envelope.TopicArn),
    messageId: firstText(envelope.MessageId),
    subscribeUrl,
    confirmUrl: type === "SubscriptionConfirmation" ? trustedSubscribeUrl(subscribeUrl) : null,
  };
}

/**
 * The SNS subscription handshake a body carries (`SubscriptionConfirmation` or
 * `UnsubscribeConfirmation`), or null when the body is anything else. Pure: the ingest decides
 * whether to confirm (auto-confirm enabled and `confirmUrl` set) and makes the call itself.
 */
export function readSnsHandshake(input: Pick<ParseInput, "body" | "headers">): SnsHandshake | null {
  const decoded = decodeBody(input.body, input.headers);
  if (!decoded.ok || !isRecord(decoded.value)) return null;
  return handshakeOf(decoded.value);
}

function handshakeNote(handshake: SnsHandshake): string {
  const topic = handshake.topicArn === null ? "" : ` for ${handshake.topicArn}`;
  return `SNS ${handshake.type}${topic}: a subscription handshake, not an alarm`;
}

// --- Alarm -----------------------------------------------------------------------------------

function isAlarm(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && firstText(value.AlarmName) !== null;
}

// The alarm in a Notification's `Message` (JSON text), or null when it is not an alarm.
function alarmInMessage(message: unknown): Record<string, unknown> | null {
  if (typeof message !== "string") return null;
  try {
    const alarm: unknown = JSON.parse(message);
    return isAlarm(alarm) ? alarm : null;
  } catch {
    return null;
  }
}

// The region field (fourth) of an ARN such as `arn:aws:cloudwatch:eu-west-1:123:alarm:name`.
function arnRegion(arn: unknown): string | null {
  if (typeof arn !== "string") return null;
  const fields = arn.trim().split(":");
  return fields[0] === "arn" ? firstText(fields[3]) : null;
}

// AlarmArn first; older alarms have none, but alarm actions publish to topics of their own region,
// so the envelope's TopicArn gives the same code; else the display name as written.
function regionOf(alarm: Record<string, unknown>, topicArn: unknown): string | null {
  return arnRegion(alarm.AlarmArn) ?? arnRegion(topicArn) ?? firstText(alarm.Region);
}

function uidPart(value: unknown): UidPart {
  return typeof value === "string" || typeof value === "number" ? value : null;
}

function dimensionsOf(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

// The `Metric` objects of a metric-math alarm's `MetricStat` entries (`Expression` entries have none).
function mathMetrics(trigger: Record<string, unknown>): Record<string, unknown>[] {
  if (!Array.isArray(trigger.Metrics)) return [];
  return trigger.Metrics.flatMap((entry) => {
    const metric = isRecord(entry) && isRecord(entry.MetricStat) ? entry.MetricStat.Metric : null;
    return isRecord(metric) ? [metric] : [];
  });
}

// `Trigger.<key>`, else the distinct values of the metric-math metrics joined with `,`.
function triggerText(
  trigger: Record<string, unknown>,
  key: string,
  metrics: Record<string, unknown>[],
): string | null {
  const own = firstText(trigger[key]);
  if (own !== null) return own;
  const values = metrics.flatMap((metric) => firstText(metric[key]) ?? []);
  return values.length > 0 ? [...new Set(values)].join(",") : null;
}

function addDimensions(builder: LabelBuilder, dimensions: Record<string, unknown>[]): void {
  for (const dimension of dimensions) {
    if (typeof dimension.name === "string") builder.add(dimension.name, dimension.value);
  }
}

function labelsOf(alarm: Record<string, unknown>, region: string | null): Record<string, string> {
  const trigger = isRecord(alarm.Trigger) ? alarm.Trigger : {};
  const metrics = mathMetrics(trigger);
  const builder = createLabelBuilder();
  addDimensions(builder, dimensionsOf(trigger.Dimensions));
  for (const metric of metrics) addDimensions(builder, dimensionsOf(metric.Dimensions));
  // A dimension of the same name wins over these.
  return builder
    .setIfAbsent("aws_account_id", firstText(alarm.AWSAccountId))
    .setIfAbsent("aws_region", region)
    .setIfAbsent("namespace", triggerText(trigger, "Namespace", metrics))
    .setIfAbsent("metric_name", triggerText(trigger, "MetricName", metrics))
    .toRecord();
}

// The console link needs a region code; a display name (`EU (Ireland)`) makes no host.
function consoleUrl(region: string | null, alarmName: string): string | null {
  if (region === null || !REGION_CODE.test(region)) return null;
  return `https://${region}.console.aws.amazon.com/cloudwatch/home?region=${region}#alarmsV2:alarm/${encodeUrlPart(alarmName)}`;
}

function normalizeAlarm(
  alarm: Record<string, unknown>,
  topicArn: unknown,
  options: ParserOptions,
): AlertEvent {
  const alarmName = typeof alarm.AlarmName === "string" ? alarm.AlarmName : "";
  const region = regionOf(alarm, topicArn);
  const status = mapStatus(alarm.NewStateValue, STATE_STATUS);
  const changedAt = parseSourceTime(alarm.StateChangeTime);
  const noData = status.source_event.toUpperCase() === INSUFFICIENT_DATA;
  const parts: AlertEventParts = {
    sourceType: "cloudwatch",
    externalUid: hashUid(uidPart(alarm.AWSAccountId), region, alarmName),
    status,
    title: alarmName,
    description: joinDescription(alarm.AlarmDescription, alarm.NewStateReason),
    severity: mapSeverity(alarm.NewStateValue, {
      table: STATE_SEVERITY,
      generic: false,
      overrides: options.severityOverrides,
    }),
    triggeredAt: status.status === "active" ? changedAt : null,
    resolvedAt: status.status === "resolved" ? changedAt : null,
    labels: labelsOf(alarm, region),
    flags: noData ? ["vigil_no_data"] : [],
    links: buildLinks([{ kind: "source", urls: [consoleUrl(region, alarmName)] }]),
  };
  return buildAlertEvent(parts);
}

// --- Parser ----------------------------------------------------------------------------------

function parseEnvelope(envelope: Record<string, unknown>, options: ParserOptions): ParseResult {
  const handshake = handshakeOf(envelope);
  if (handshake !== null) return { ok: true, events: [], note: handshakeNote(handshake) };
  const type = firstText(envelope.Type) ?? "";
  if (type.toLowerCase() !== "notification") {
    return { ok: false, error: `not a CloudWatch alarm: unsupported SNS message Type "${type}"` };
  }
  const alarm = alarmInMessage(envelope.Message);
  if (alarm === null) {
    return {
      ok: false,
      error: "not a CloudWatch alarm: the SNS Notification's Message is not alarm JSON with an AlarmName",
    };
  }
  return { ok: true, events: [normalizeAlarm(alarm, envelope.TopicArn, options)] };
}

/** Parses an SNS delivery of a CloudWatch alarm (enveloped or raw) into one event; handshakes yield none. */
export const parseCloudwatch: Parser = ({ body, headers, options }) => {
  const decoded = decodeBody(body, headers);
  if (!decoded.ok) return decoded;
  const payload = decoded.value;
  // The envelope's `Type` decides; the x-amz-sns-message-type header only repeats it.
  if (isRecord(payload) && typeof payload.Type === "string") return parseEnvelope(payload, options);
  // Raw message delivery: the body is the alarm itself, without envelope or TopicArn.
  if (isAlarm(payload)) return { ok: true, events: [normalizeAlarm(payload, null, options)] };
  return {
    ok: false,
    error: "not a CloudWatch alarm: expected an SNS message (Type) or an alarm (AlarmName)",
  };
};
