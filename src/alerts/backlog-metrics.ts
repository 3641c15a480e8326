// What operators watch to know whether the workers keep up with ingest: alerts waiting for the
// storm correlator, and alerts waiting for (or in) classification. Read when /metrics is scraped.
import { sql } from "drizzle-orm";
import type { Executor } from "../core/db/database.ts";
import type { Metrics } from "../core/http/metrics.ts";

export function reportAlertBacklogs(metrics: Metrics, db: Executor): void {
  metrics.gauge(
    "vigil_storm_queue_alerts",
    "Alerts waiting for the storm correlator to place them",
    [],
    async () => {
      const { rows } = await db.execute(
        sql`select count(distinct alert_id)::int as n from alert_storm_queue`,
      );
      return [{ labels: {}, value: Number(rows[0]?.n ?? 0) }];
    },
  );
  metrics.gauge(
    "vigil_alerts_classification",
    "Alerts waiting for classification (queued, which includes a batch window) or being classified (running)",
    ["state"],
    async () => {
      // Counted through the partial index of queued and running alerts (alerts_triage_bucket).
      const { rows } = await db.execute(sql`
        select analysis_status as state, count(*)::int as n from alerts
        where analysis_status in ('queued', 'running') group by analysis_status`);
      const counts = new Map(rows.map((row) => [String(row.state), Number(row.n)]));
      // Both states, always: a state without alerts reads 0 rather than vanishing.
      return ["queued", "running"].map((state) => ({ labels: { state }, value: counts.get(state) ?? 0 }));
    },
  );
}
