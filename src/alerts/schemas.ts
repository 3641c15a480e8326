import { type Static, Type } from "@sinclair/typebox";
import { describedPattern } from "../core/http/pattern-words.ts";
import { AnyKeyRecord, DateTime, KeyedRecord, Nullable, refOf, Uuid } from "../core/http/schemas.ts";
import { SOURCE_TYPES } from "./sources/types.ts";

const literals = <T extends string>(values: readonly T[], options: object = {}) =>
  Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  );

export const SEVERITY_BUCKETS = ["Critical", "High", "Medium", "Low", "info"] as const;
export const ALERT_STATUSES = ["active", "resolved", "ignored"] as const;
export const ATTENTIONS = ["needs_attention", "needs_review", "false_positive", "others"] as const;
export const ANALYSIS_STATUSES = ["none", "queued", "running", "completed", "failed"] as const;
export const ALERT_ROLES = ["symptom", "cause", "unknown"] as const;

export const SourceName = literals(SOURCE_TYPES, { description: "One of the 16 registered source parsers" });

// ---- registrations (svc_sre_alert_webhook) ----

const registrationSettings = {
  auto_investigate: Type.Boolean({ description: "Start a deep-dive investigation for each new alert" }),
  classify_mode: literals(["batch", "immediate"] as const),
  classify_batch_window_seconds: Type.Integer({ minimum: 15, maximum: 300, description: "Debounce window" }),
  classify_bucket_by: literals(["storm_scope", "service"] as const),
  classify_critical_bypass: Type.Boolean({ description: "Critical and P1 alerts skip batching" }),
  severity_overrides: KeyedRecord(128, literals(SEVERITY_BUCKETS), {
    description:
      "Raw severity value -> bucket, compared case-insensitively; wins over the source's own table",
    maxProperties: 100,
  }),
  sns_auto_confirm: Type.Boolean({
    description:
      "CloudWatch: confirm SNS subscriptions whose SubscribeURL is https://sns.<region>.amazonaws.com",
  }),
  enabled: Type.Boolean({ description: "A disabled registration answers 404 at the trigger" }),
};

export const REGISTRATION_DEFAULTS = {
  integration: "",
  auto_investigate: false,
  classify_mode: "batch",
  classify_batch_window_seconds: 60,
  classify_bucket_by: "storm_scope",
  classify_critical_bypass: true,
  severity_overrides: {},
  sns_auto_confirm: false,
  enabled: true,
} as const;

export const IntegrationSegment = Type.String({
  maxLength: 128,
  // "." and ".." are path steps, not names: an import id or a URL holding them resolves elsewhere.
  // Written without a lookahead, which generators of conforming input (fuzzers) may not support.
  pattern: describedPattern(
    "^(?:[A-Za-z0-9_~-][A-Za-z0-9._~-]*|\\.[A-Za-z0-9_~-][A-Za-z0-9._~-]*|\\.\\.[A-Za-z0-9._~-]+)?$",
    "letters, digits, '.', '_', '~' and '-', and neither . nor ..",
  ),
  description: "Integration instance name; empty for the default integration; not `.` or `..`",
});

/** The resource's app_name attribute, accepted in bodies: it must name the app of the path. */
const BodyAppName = Type.String({
  maxLength: 64,
  description: "Optional; must equal the app_name of the path",
});

export const AlertWebhookCreate = Type.Composite(
  [
    Type.Object({
      source: SourceName,
      integration: Type.Optional(IntegrationSegment),
      app_name: Type.Optional(BodyAppName),
    }),
    Type.Partial(Type.Object(registrationSettings)),
  ],
  { $id: "AlertWebhookCreate", additionalProperties: false },
);
export type AlertWebhookCreate = Static<typeof AlertWebhookCreate>;

export const AlertWebhookUpdate = Type.Composite(
  [
    Type.Partial(
      Type.Object({
        app_name: BodyAppName,
        source: Type.String({ maxLength: 64, description: "Optional; must equal the registration's" }),
        integration: Type.String({ maxLength: 128, description: "Optional; must equal the registration's" }),
      }),
    ),
    Type.Partial(Type.Object(registrationSettings)),
  ],
  {
    $id: "AlertWebhookUpdate",
    additionalProperties: false,
    description:
      "Settings to change. app_name, source and integration identify the registration: they may be sent " +
      "(a whole resource body) but cannot change (400 naming the field)",
  },
);
export type AlertWebhookUpdate = Static<typeof AlertWebhookUpdate>;

export const AlertWebhook = Type.Object(
  {
    id: Uuid("Webhook UUID of this registration"),
    platform_webhook_id: Uuid("Same as id"),
    platform_webhook_url: Type.String({
      description:
        "Relative trigger path with the apiKey query parameter (secret: a caller without sre_alerts_write reads apiKey=hidden)",
    }),
    trigger_url: Type.String({ description: "PUBLIC_URL + /platform + platform_webhook_url (secret)" }),
    app_name: Type.String(),
    source: SourceName,
    integration: Type.String(),
    ...registrationSettings,
    org_id: Nullable(Uuid()),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: "AlertWebhook" },
);
export type AlertWebhook = Static<typeof AlertWebhook>;

// ---- alerts ----

export const INVESTIGATION_STATUSES = ["queued", "running", "completed", "failed", "cancelled"] as const;
export const VERDICTS = ["real_problem", "alert_is_misconfigured", "not_enough_information"] as const;

export const InvestigationRef = Type.Object(
  {
    id: Uuid("The investigation's id (getInvestigation)"),
    status: literals(INVESTIGATION_STATUSES, {
      description:
        "queued: created, its run not yet started; running: the investigator is at work; completed, failed, cancelled: final",
    }),
    verdict: Nullable(
      literals(VERDICTS, { description: "The plain summary's verdict once concluded; null before" }),
    ),
    result_summary: Nullable(Type.String({ description: "One paragraph once concluded; null before" })),
    started_at: DateTime(),
    finished_at: Nullable(DateTime("null while unfinished")),
  },
  {
    $id: "InvestigationRef",
    description:
      "The summary of an alert's newest investigation, shown on the alert; the whole record is getInvestigation",
  },
);
export type InvestigationRef = Static<typeof InvestigationRef>;

export const AlertV1 = Type.Object(
  {
    id: Uuid("Internal alert id"),
    external_uid: Type.String({ description: "Stable id from the alert source" }),
    source_type: Type.String(),
    integration_name: Nullable(Type.String()),
    title: Type.String(),
    description: Type.String(),
    source_severity: Type.String({ description: "Raw severity string from the source" }),
    signal_severity: literals(SEVERITY_BUCKETS, { description: "Bucket of source_severity" }),
    display_priority: Type.Integer({ minimum: 1, maximum: 5, description: "Lower is more urgent" }),
    impact_score: Type.Integer({ minimum: 0, maximum: 100 }),
    impact_explanation: Nullable(Type.String()),
    status: literals(ALERT_STATUSES),
    analysis_status: literals(ANALYSIS_STATUSES, {
      description:
        "Automatic triage: none (test notifications) -> queued -> completed, or failed after the last retry; " +
        "running while a triage workflow's run or an LLM refinement is under way. A re-fire queues it again.",
    }),
    attention: literals(ATTENTIONS),
    attention_reason: Nullable(Type.String()),
    ignore_reason: Nullable(Type.String()),
    short_summary: Nullable(Type.String()),
    initial_investigation: Nullable(Type.String()),
    triggered_at: DateTime(),
    created_at: DateTime(),
    resolved_at: Nullable(DateTime()),
    refire_count: Type.Integer({ minimum: 0 }),
    last_resolved_at: Nullable(DateTime()),
    investigation: Nullable(refOf(InvestigationRef)),
    labels: AnyKeyRecord(Type.String()),
    links: Type.Array(Type.Object({ kind: Type.String(), url: Type.String() })),
    alert_role: literals(ALERT_ROLES),
    storm_id: Nullable(Uuid()),
    likely_upstream: Nullable(Type.String()),
    ingested_via: Nullable(literals(["push", "pull"] as const)),
    raw_payload: Type.Optional(
      Nullable(
        Type.String({
          description:
            "Source-native payload stored verbatim: the body of the delivery that last changed the alert (a pulled alert: its own item of Alertmanager's /api/v2/alerts answer, as JSON text); absent from lists read with include_raw_payload=false",
        }),
      ),
    ),
  },
  { $id: "AlertV1" },
);
export type AlertV1 = Static<typeof AlertV1>;

export const AlertSummary = Type.Object(
  {
    total_active: Type.Integer({ description: "Alerts with status active" }),
    needs_attention: Type.Integer(),
    others: Type.Integer(),
    needs_review: Type.Integer(),
    false_positive: Type.Integer(),
  },
  {
    $id: "AlertSummary",
    description:
      "Counts of active alerts, each attention value apart, whatever list is shown; scoped by integration_names only",
  },
);

export const AlertCategorizationSummary = Type.Object(
  {
    total_active: Type.Integer(),
    not_started: Type.Integer({ description: "analysis_status none" }),
    in_progress: Type.Integer({ description: "queued or running" }),
    completed: Type.Integer(),
    failed: Type.Integer(),
    is_running: Type.Boolean({ description: "At least one active alert is queued or running" }),
  },
  { $id: "AlertCategorizationSummary", description: "Progress of automatic analysis over active alerts" },
);

export const ListAlertsResponse = Type.Object(
  {
    alerts: Type.Array(Type.Ref("AlertV1")),
    page: Type.Integer(),
    page_size: Type.Integer(),
    total: Type.Integer({
      description:
        "Alerts matching the filters, counted exactly up to LIST_COUNT_LIMIT (default 10,000), or with q up to SEARCH_COUNT_LIMIT (default 1,000); past that, total is a lower bound (the limit, or the alerts up to and on this page if more) and total_exact is false. A page neither empty nor full is the last, so its total is exact past the limit too. The active list without filters is always exact (the summary's total_active)",
    }),
    total_exact: Type.Boolean({
      description:
        "false when total is a lower bound (more matches than LIST_COUNT_LIMIT, or than SEARCH_COUNT_LIMIT with q)",
    }),
    total_pages: Type.Integer({
      description: "ceil(total / page_size): a lower bound too when total_exact is false",
    }),
    summary: Type.Ref("AlertSummary"),
  },
  { $id: "ListAlertsResponse" },
);

/** AlertV1 fields only Vigil sets: a PATCH naming one is a 400. */
export const READ_ONLY_FIELDS = [
  "analysis_status",
  "impact_score",
  "impact_explanation",
  "storm_id",
  "alert_role",
  "likely_upstream",
  "short_summary",
  "initial_investigation",
] as const;

export const AlertPatch = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Type.Literal("ignored"), Type.Literal("active")], {
        description: "ignored: the operator mutes the alert; active: un-ignore an ignored alert",
      }),
    ),
    ignore_reason: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    attention: Type.Optional(literals(ATTENTIONS, { description: "An analyst's classification" })),
    attention_reason: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    ...Object.fromEntries(
      READ_ONLY_FIELDS.map((field) => [
        field,
        Type.Optional(
          Type.Unknown({ readOnly: true, description: "Set by Vigil's analysis: writing it is a 400" }),
        ),
      ]),
    ),
  },
  {
    $id: "AlertPatch",
    additionalProperties: false,
    minProperties: 1,
    description: "An operator's changes; every change lands in the alert's history",
  },
);
export type AlertPatch = {
  status?: "ignored" | "active";
  ignore_reason?: string | null;
  attention?: (typeof ATTENTIONS)[number];
  attention_reason?: string | null;
};

export const AlertHistoryEvent = Type.Object(
  {
    seq: Type.Integer(),
    at: DateTime(),
    kind: Type.String({ description: "created, updated, resolved, refired, ignored, unchanged, stale, ..." }),
    actor: Type.String({ description: "source or operator" }),
    source_event: Nullable(Type.String()),
    status_before: Nullable(Type.String()),
    status_after: Type.String(),
    invocation_id: Nullable(Uuid()),
    detail: AnyKeyRecord(Type.Unknown()),
  },
  { $id: "AlertHistoryEvent" },
);
export type AlertHistoryEvent = Static<typeof AlertHistoryEvent>;
