export { type AgentRunner, registerAgentRunner } from "./agent-runners.ts";
export { findAgent } from "./agents.ts";
export {
  cancelExecution,
  type StartCtx,
  type StartExecutionInput,
  type StartedExecution,
  startExecution,
  terminateSession,
} from "./executions.ts";
export { AUTOMATION_JOBS } from "./jobs.ts";
export { agentReadiness, missingTarget, type NotReady, workflowReadiness } from "./readiness.ts";
export { automationRoutes } from "./routes.ts";
export { sweepExecutions } from "./sweeper.ts";
export { AUTOMATION_WEBHOOK_TARGETS } from "./webhook-target.ts";
export { runnableVersion } from "./workflows.ts";
