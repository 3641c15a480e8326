export { findAgent } from "./agents.ts";
export { agentReadiness, missingTarget, type NotReady, workflowReadiness } from "./readiness.ts";
export { automationRoutes } from "./routes.ts";
export { runnableVersion } from "./workflows.ts";
