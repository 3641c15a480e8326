export {
  type IntegrationConnection,
  listIntegrationConnections,
  readIntegrationConnection,
} from "./connections.ts";
export { getIntegration, missingIntegrations } from "./integrations.ts";
export { integrationsRoutes as registerIntegrations } from "./routes.ts";
export { IntegrationName } from "./schemas.ts";
