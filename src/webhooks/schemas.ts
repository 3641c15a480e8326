import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable, Uuid } from "../core/http/schemas.ts";

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
  outcome: Nullable(Type.Record(Type.String(), Type.Unknown(), { description: "What the target did" })),
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
    payload: Type.String({ description: "The request body exactly as received" }),
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
    session_id: Type.Optional(Type.String()),
    trace_id: Type.Optional(Type.String()),
    events: Type.Optional(Type.Integer({ description: "Alert events the body held (alert ingest)" })),
    alerts: Type.Optional(Type.Array(Type.Ref("AlertIngestOutcome"))),
    note: Type.Optional(Nullable(Type.String())),
  },
  { $id: "WebhookTriggerAccepted" },
);
