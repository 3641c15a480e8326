// The apps domain: the catalog, installations per tenant (svc_app), purposes and their workflows,
// the app token, discovery and setup. Other domains and app.ts/jobs.ts reach it only here.

import type { RegistrationHook } from "../alerts/index.ts";
import type { JobDefinition } from "../core/queue/catalog.ts";
import { discoverJob } from "./discovery.ts";
import { ensureAppInstalled } from "./installations.ts";

export { latestTopology } from "./discovery.ts";
export { requireConfiguredApp } from "./ingest-guard.ts";
export { workflowForPurpose } from "./purposes.ts";
export { appRoutes as registerApps } from "./routes.ts";

/** Creating an alert-ingest registration configures its app for the tenant (alerts' port). */
export const installAppOnRegistration: RegistrationHook = async (tx, { ctx, tenant, appName, now }) => {
  await ensureAppInstalled(tx, ctx, { tenant, appName, now });
};

export const APP_JOBS: JobDefinition[] = [discoverJob];
