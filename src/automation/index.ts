export { type AgentRunner, registerAgentRunner } from "./agents/agent-runners.ts";
export { findAgent } from "./agents/agents.ts";
export {
  cancelExecution,
  type StartCtx,
  type StartExecutionInput,
  type StartedExecution,
  startExecution,
  terminateSession,
} from "./executions/executions.ts";
export { AUTOMATION_JOBS } from "./executions/jobs.ts";
export { sweepExecutions } from "./executions/sweeper.ts";
export { automationRoutes } from "./routes.ts";
export { AUTOMATION_WEBHOOK_TARGETS } from "./triggers/webhook-target.ts";
export { agentReadiness, missingTarget, type NotReady, workflowReadiness } from "./workflows/readiness.ts";
export { runnableVersion } from "./workflows/workflows.ts";
