import { type Static, Type } from "@sinclair/typebox";
import { SLUG_PATTERN } from "../core/http/pattern-words.ts";
import { AnyKeyRecord, DateTime, Nullable, Uuid } from "../core/http/schemas.ts";

const runFields = {
  invocation_id: Uuid("The invocation id"),
  webhook_id: Uuid(),
  target_type: Type.String({ description: "alert_ingest, agent or workflow" }),
  target_name: Type.String(),
  status: Type.Union([Type.Literal("accepted"), Type.Literal("failed"), Type.Literal("error")], {
    description: "accepted; failed: the target refused the payload (see error); error: Vigil failed",
  }),
  received_at: DateTime(),
  finished_at: Nullable(DateTime()),
  content_type: Nullable(Type.String()),
  payload_bytes: Type.Integer(),
  error: Nullable(Type.String()),
  note: Nullable(Type.String()),
  session_id: Nullable(Type.String()),
  trace_id: Nullable(Type.String()),
  run_id: Nullable(Type.String({ description: "Run id of the execution the invocation started" })),
  outcome: Nullable(AnyKeyRecord(Type.Unknown(), { description: "What the target did" })),
};

export const WebhookRun = Type.Object(runFields, { $id: "WebhookRun" });
export type WebhookRun = Static<typeof WebhookRun>;

export const WebhookRunList = Type.Object(
  {
    runs: Type.Array(Type.Ref("WebhookRun")),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: "WebhookRunListResponse" },
);
export type WebhookRunList = { runs: WebhookRun[]; total: number; limit: number; offset: number };

export const WebhookRunDetail = Type.Object(
  {
    ...runFields,
    headers: Type.Record(Type.String(), Type.String()),
    payload: Type.String({
      description:
        "The request body exactly as received: its text when it is UTF-8, else its bytes in base64 (payload_encoding)",
    }),
    payload_encoding: Type.Union([Type.Literal("utf8"), Type.Literal("base64")], {
      description:
        "utf8: payload is the body's text; base64: the body was not UTF-8, and payload holds its bytes",
    }),
  },
  { $id: "WebhookRunDetail" },
);
export type WebhookRunDetail = Static<typeof WebhookRunDetail>;

export const AlertOutcome = Type.Object(
  {
    id: Uuid(),
    external_uid: Type.String(),
    outcome: Type.Union(
      ["created", "updated", "resolved", "refired", "ignored", "unchanged", "duplicate", "stale"].map(
        (value) => Type.Literal(value),
      ),
    ),
  },
  { $id: "AlertIngestOutcome" },
);

export const TriggerAccepted = Type.Object(
  {
    webhook_id: Uuid(),
    invocation_id: Uuid(),
    target_type: Type.String(),
    target_name: Type.String(),
    session_id: Type.Optional(Type.String({ description: "Agent and workflow targets: the run's session" })),
    trace_id: Type.Optional(
      Type.String({ description: "Agent and workflow targets: poll getExecutionTrace" }),
    ),
    run_id: Type.Optional(Type.String({ description: "Agent and workflow targets: the execution's run id" })),
    workflow_version: Type.Optional(
      Nullable(Type.Integer({ description: "Workflow targets: the approved version the run pinned" })),
    ),
    events: Type.Optional(Type.Integer({ description: "Alert events the body held (alert ingest)" })),
    alerts: Type.Optional(Type.Array(Type.Ref("AlertIngestOutcome"))),
    note: Type.Optional(Nullable(Type.String())),
  },
  { $id: "WebhookTriggerAccepted" },
);

// Named webhooks: a token that starts an agent or a workflow, managed under /platform/api/v1/webhooks.

export const NAMED_TARGET_TYPES = ["agent", "workflow"] as const;
export type NamedTargetType = (typeof NAMED_TARGET_TYPES)[number];
export const isNamedTarget = (type: string): type is NamedTargetType =>
  (NAMED_TARGET_TYPES as readonly string[]).includes(type);

const WebhookName = Type.String({
  pattern: SLUG_PATTERN,
  description: "Unique per tenant among live webhooks (lower-case slug)",
});
const TargetType = Type.Union(
  NAMED_TARGET_TYPES.map((type) => Type.Literal(type)),
  { description: "What a trigger starts" },
);
const TargetName = Type.String({
  pattern: SLUG_PATTERN,
  description: "The agent or workflow name; a workflow runs its newest approved version",
});
const READINESS_NOTE =
  "An enabled webhook's target must be safe to run unattended: otherwise 400 with errCode " +
  "TARGET_NOT_FOUND (also when a workflow has no approved version), NO_INTEGRATIONS, " +
  "WORKFLOW_HAS_NO_STAGES or WORKFLOW_HAS_UNBOUND_STAGE. A disabled webhook is not checked until enabled.";

export const WebhookCreate = Type.Object(
  {
    name: WebhookName,
    target_type: TargetType,
    target_name: TargetName,
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { $id: "WebhookCreate", additionalProperties: false, description: READINESS_NOTE },
);
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookUpdate = Type.Object(
  {
    name: Type.Optional(WebhookName),
    target_type: Type.Optional(TargetType),
    target_name: Type.Optional(TargetName),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    $id: "WebhookUpdate",
    additionalProperties: false,
    minProperties: 1,
    description: `Changes only the fields given. ${READINESS_NOTE}`,
  },
);
export type WebhookUpdate = Static<typeof WebhookUpdate>;

const webhookFields = {
  id: Uuid("The webhook id (webhook_id of the runs endpoints)"),
  name: Type.String(),
  target_type: Type.String({ description: "agent or workflow" }),
  target_name: Type.String(),
  description: Type.String(),
  enabled: Type.Boolean(),
  ready: Type.Boolean({
    description: "The target is safe to run unattended now; a trigger answers 423 otherwise",
  }),
  not_ready_reasons: Type.Array(
    Type.Object({ errCode: Type.String(), msg: Type.String(), resolution_hint: Type.String() }),
  ),
  org_id: Nullable(Uuid()),
  created_at: DateTime(),
  updated_at: DateTime(),
};

export const Webhook = Type.Object(webhookFields, {
  $id: "Webhook",
  description: "A named webhook. The token is never shown again after creation or rotation.",
});
export type Webhook = Static<typeof Webhook>;

export const WebhookWithToken = Type.Object(
  {
    ...webhookFields,
    token: Type.String({ description: "The webhook token (<WEBHOOK_TOKEN>); shown only here" }),
    platform_webhook_url: Type.String({
      description: "Relative trigger path with the apiKey query parameter",
    }),
    trigger_url: Type.String({
      description: "Absolute trigger URL: PUBLIC_URL + /platform + platform_webhook_url",
    }),
  },
  {
    $id: "WebhookWithToken",
    description:
      "Answered by createWebhook and rotateWebhookToken only: keep the token, it is not shown again",
  },
);
export type WebhookWithToken = Static<typeof WebhookWithToken>;

export const WebhookList = Type.Object(
  {
    webhooks: Type.Array(Type.Ref("Webhook")),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: "WebhookListResponse" },
);
export type WebhookList = { webhooks: Webhook[]; total: number; limit: number; offset: number };
