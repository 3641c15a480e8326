// The job catalog: every domain's job definitions, handed to the queue at start, and the recurring
// ones with their cron expressions (UTC), which the queue creates at start (core/queue/queue.ts).
import { ALERT_JOBS, ALERT_SCHEDULES } from "./alerts/index.ts";
import { APP_JOBS } from "./apps/index.ts";
import { AUTOMATION_JOBS } from "./automation/index.ts";
import type { JobDefinition, JobSchedule } from "./core/queue/catalog.ts";
import { INVESTIGATION_JOBS } from "./investigations/index.ts";

export const JOBS: JobDefinition[] = [...ALERT_JOBS, ...AUTOMATION_JOBS, ...INVESTIGATION_JOBS, ...APP_JOBS];

export const SCHEDULES: JobSchedule[] = [...ALERT_SCHEDULES];
