// The job catalog: every domain's job definitions, handed to the queue at start, and the recurring
// ones with their cron expressions (UTC), which the queue creates at start (core/queue/queue.ts).

import { confirmSnsSubscriptionJob } from "./alerts/ingest/confirm-sns.ts";
import { syncIntegrationsJob } from "./alerts/sync/pull-sync.ts";
import { classifyAlertsJob } from "./alerts/triage/classify-job.ts";
import { AUTOMATION_JOBS } from "./automation/index.ts";
import { defineSchedule, type JobDefinition, type JobSchedule } from "./core/queue/catalog.ts";

export const JOBS: JobDefinition[] = [
  classifyAlertsJob,
  confirmSnsSubscriptionJob,
  syncIntegrationsJob,
  ...AUTOMATION_JOBS,
];

export const SCHEDULES: JobSchedule[] = [
  // Alertmanager pull sync: every minute, each integration at most once per MIN_SYNC_INTERVAL_SECONDS.
  defineSchedule(syncIntegrationsJob, "* * * * *", {}),
];
