export { alertIngestTarget, applyAlertEvents } from "./ingest.ts";
export { ALERT_INGEST_TARGET } from "./registrations.ts";
export { alertsRoutes } from "./routes.ts";
