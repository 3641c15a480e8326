export {
  type IntegrationConnection,
  listIntegrationConnections,
  readIntegrationConnection,
} from "./connections.ts";
export { getIntegration, listIntegrations, missingIntegrations } from "./integrations.ts";
export { integrationsRoutes as registerIntegrations } from "./routes.ts";
export { IntegrationName } from "./schemas.ts";
