// The apps domain: the catalog, installations per tenant (svc_app), purposes and their workflows,
// the app token, discovery and setup. Other domains and app.ts/jobs.ts reach it only here.

import type { FastifyInstance } from "fastify";
import type { RegistrationHook } from "../alerts/index.ts";
import { onWorkflowDeleted } from "../automation/index.ts";
import type { JobDefinition } from "../core/queue/catalog.ts";
import { onIntegrationDeleted, onIntegrationRenamed } from "../integrations/index.ts";
import { setInvestigationWorkflowChooser, setRemediationModeReader } from "../investigations/index.ts";
import { discoverJob } from "./discovery.ts";
import { dropFromBindings, ensureAppInstalled, readInstallation } from "./installations.ts";
import { workflowForPurpose } from "./purposes.ts";
import { appRoutes } from "./routes.ts";
import { appInstallations } from "./tables.ts";
import { configureTriage } from "./triage.ts";

export { latestTopology } from "./discovery.ts";
export { requireConfiguredApp } from "./ingest-guard.ts";
export { workflowForPurpose } from "./purposes.ts";

/**
 * The app's routes; investigations run the workflow the tenant assigns to `alert_investigation` and
 * follow the remediation mode of the tenant's SRE app config.
 */
export async function registerApps(app: FastifyInstance): Promise<void> {
  setInvestigationWorkflowChooser(
    async (db, tenant, purpose) => (await workflowForPurpose(db, { tenant, purpose }))?.workflowName ?? null,
  );
  setRemediationModeReader(async (db, tenant) => {
    const mode = (await readInstallation(db, tenant, "sre"))?.config.remediation;
    return mode === "on_request" ? "on_request" : "off";
  });
  await appRoutes(app);
}

/** Creating an alert-ingest registration configures its app for the tenant (alerts' port). */
export const installAppOnRegistration: RegistrationHook = async (tx, { ctx, tenant, appName, now }) => {
  await ensureAppInstalled(tx, ctx, { tenant, appName, now });
};

export const APP_JOBS: JobDefinition[] = [discoverJob];

/** Plugs the app's triage into the engine and the alerts' classification job (see triage.ts). */
export function configureApps(): void {
  configureTriage();
  // Bindings name their integrations: a rename carries over to them.
  onIntegrationRenamed("app bindings", { table: appInstallations, column: appInstallations.integrations });
  // A delete takes the name out of them with it.
  onIntegrationDeleted("app bindings", (tx, { tenant, name, now }) =>
    dropFromBindings(tx, { tenant, now, integration: name }),
  );
  onWorkflowDeleted("app bindings", (tx, { tenant, name, now }) =>
    dropFromBindings(tx, { tenant, now, workflow: name }),
  );
}
