export {
  type IntegrationConnection,
  listIntegrationConnections,
  listTenantIntegrationConnections,
  readIntegrationConnection,
} from "./connections.ts";
export { getIntegration, integrationNamesOf, listIntegrations, missingIntegrations } from "./integrations.ts";
export { integrationApiUrl, integrationHeaders, readIntegrationApi } from "./read-api.ts";
export { onIntegrationDeleted, onIntegrationRenamed } from "./renames.ts";
export { integrationsRoutes as registerIntegrations } from "./routes.ts";
export { IntegrationName } from "./schemas.ts";
