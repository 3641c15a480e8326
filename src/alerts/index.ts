// The alerts domain: sources, registrations, ingest, pull sync, correlation, triage and the console.
// Other domains and app.ts/jobs.ts/start.ts reach it only through this file.
import type { FastifyInstance } from "fastify";
import { defineSchedule, type JobDefinition, type JobSchedule } from "../core/queue/catalog.ts";
import { consoleRoutes } from "./console/routes.ts";
import { startStormCorrelator } from "./correlation/storm-correlator.ts";
import { confirmSnsSubscriptionJob } from "./ingest/confirm-sns.ts";
import { alertIngestTarget } from "./ingest/ingest.ts";
import { ALERT_INGEST_TARGET } from "./registrations/registrations.ts";
import { type RegistrationOptions, registrationRoutes } from "./registrations/routes.ts";
import {
  AlertCategorizationSummary,
  AlertHistoryEvent,
  AlertPatch,
  AlertSummary,
  AlertV1,
  AlertWebhook,
  AlertWebhookCreate,
  AlertWebhookUpdate,
  InvestigationRef,
  ListAlertsResponse,
} from "./schemas.ts";
import { syncIntegrationJob, syncIntegrationsJob } from "./sync/pull-sync.ts";
import { alertSyncRoutes } from "./sync/routes.ts";
import { classifyAlertsJob } from "./triage/classify-job.ts";

export { reportAlertBacklogs } from "./backlog-metrics.ts";
export {
  type InvestigatedAlert,
  readAlertsTriggeredBetween,
  readInvestigatedAlert,
  readInvestigatedEpisodes,
  readStormMembers,
  setAlertInvestigation,
} from "./console/investigation-reads.ts";
export { type ListAlertsInput, listAlerts } from "./console/list-alerts.ts";
export { getAlert, getAlertHistory } from "./console/read-alerts.ts";
export { ListAlertsQuery } from "./console/routes.ts";
export { correlateStormOf } from "./correlation/storms.ts";
export { AUTO_INVESTIGATE_JOB } from "./ingest/auto-investigate.ts";
export type { RegistrationHook } from "./registrations/registrations.ts";
export { INVESTIGATION_STATUSES, InvestigationRef, VERDICTS } from "./schemas.ts";
export { CLASSIFY_STEP, classifyStoredAlert } from "./triage/builtin-classifier.ts";
export { reclassifyAfterRoleChange } from "./triage/classify-job.ts";
export {
  applyTriageRun,
  setTriageWorkflowPort,
  TRIAGE_PURPOSE,
  type TriageWorkflowPort,
} from "./triage/triage-workflow.ts";
export type { RegistrationOptions };
export { startStormCorrelator };

/** Every alerts route, with the schemas they share. */
export async function registerAlerts(app: FastifyInstance, options: RegistrationOptions = {}): Promise<void> {
  for (const schema of [
    InvestigationRef,
    AlertV1,
    AlertSummary,
    AlertCategorizationSummary,
    ListAlertsResponse,
    AlertHistoryEvent,
    AlertPatch,
    AlertWebhook,
    AlertWebhookCreate,
    AlertWebhookUpdate,
  ]) {
    app.addSchema(schema);
  }
  await app.register(registrationRoutes, options);
  await app.register(consoleRoutes);
  await app.register(alertSyncRoutes);
}

/** The webhook targets alerts serve: a registration's deliveries go to alert ingest. */
export const ALERT_WEBHOOK_TARGETS = { [ALERT_INGEST_TARGET]: alertIngestTarget };

export const ALERT_JOBS: JobDefinition[] = [
  classifyAlertsJob,
  confirmSnsSubscriptionJob,
  syncIntegrationsJob,
  syncIntegrationJob,
];

export const ALERT_SCHEDULES: JobSchedule[] = [
  // Alertmanager pull sync: every minute, each integration at most once per MIN_SYNC_INTERVAL_SECONDS.
  defineSchedule(syncIntegrationsJob, "* * * * *", {}),
];
