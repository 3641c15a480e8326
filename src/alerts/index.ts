export { alertIngestTarget, applyAlertEvents } from "./ingest/ingest.ts";
export { ALERT_INGEST_TARGET } from "./registrations/registrations.ts";
export { alertsRoutes } from "./routes.ts";
