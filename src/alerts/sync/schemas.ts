// The pull sync's API shapes: a sync run (AlertSyncRunStatus of the spec) and a page of them.
import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable, Uuid } from "../../core/http/schemas.ts";

const ALERT_SYNC_RUN_STATUSES = ["running", "completed", "failed"] as const;
const ALERT_SYNC_TRIGGERS = ["manual", "scheduled"] as const;

const AlertSyncRunCounts = Type.Object(
  {
    fetched: Type.Integer({ description: "Alerts in Alertmanager's answer" }),
    created: Type.Integer({ description: "Alerts Vigil did not have" }),
    updated: Type.Integer({
      description: "Alerts that changed: new data, a re-fire, or silenced or inhibited (ignored)",
    }),
    resolved: Type.Integer({ description: "Alerts resolved because they disappeared from the answer" }),
    unchanged: Type.Integer({ description: "Alerts already stored exactly as Alertmanager reports them" }),
  },
  { description: "What the run did; all zero until it completes" },
);

export const AlertSyncRun = Type.Object(
  {
    id: Uuid(),
    integration_name: Type.String(),
    trigger: Type.Union(
      ALERT_SYNC_TRIGGERS.map((value) => Type.Literal(value)),
      { description: "manual (syncIntegrationAlerts) or scheduled (every minute)" },
    ),
    status: Type.Union(
      ALERT_SYNC_RUN_STATUSES.map((value) => Type.Literal(value)),
      { description: "AlertSyncRunStatus" },
    ),
    started_at: DateTime(),
    finished_at: Nullable(DateTime()),
    counts: AlertSyncRunCounts,
    error: Nullable(
      Type.String({ description: "Why the run failed; a failed run resolves nothing and changes nothing" }),
    ),
  },
  { $id: "AlertSyncRun" },
);
export type AlertSyncRun = Static<typeof AlertSyncRun>;

export const AlertSyncRunPage = Type.Object(
  {
    runs: Type.Array(AlertSyncRun, { description: "Newest first" }),
    total: Type.Integer(),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: "AlertSyncRunPage" },
);
export type AlertSyncRunPage = Static<typeof AlertSyncRunPage>;
