// The automation domain: agents, versioned workflows, executions with their traces and sessions, and
// the webhook targets that start runs. Other domains and app.ts/jobs.ts/start.ts reach it only here.
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.ts";
import type { JobDefinition } from "../core/queue/catalog.ts";
import { onIntegrationRenamed } from "../integrations/index.ts";
import { registerAgentRunner } from "./agents/agent-runners.ts";
import { runLlmAgent } from "./agents/llm-runner.ts";
import { agentRoutes } from "./agents/routes.ts";
import { startAsk } from "./ask/ask.ts";
import { askRoutes } from "./ask/routes.ts";
import { AskPlatformRequest, AskStartResponse } from "./ask/schemas.ts";
import { AUTOMATION_EXECUTION_JOBS } from "./executions/jobs.ts";
import { executionRoutes } from "./executions/routes.ts";
import {
  AgentStatus,
  ArtifactInfo,
  DAGEdge,
  DAGNode,
  ExecutionListItem,
  ExecutionMeta,
  Readiness,
  RegisterAgentRequest,
  StructuredOutput,
  TerminateSessionResponse,
  TraceDAGResponse,
  Workflow,
  WorkflowVersion,
  WorkflowWrite,
} from "./schemas.ts";
import { sessionRoutes } from "./sessions/routes.ts";
import { Session, SessionExport, SessionListItem, SessionListResponse } from "./sessions/schemas.ts";
import { agents } from "./tables.ts";
import { AUTOMATION_WEBHOOK_TARGETS } from "./triggers/webhook-target.ts";
import { workflowRoutes } from "./workflows/routes.ts";

export type { ActionOutcome } from "./executions/actions.ts";
export { StepError } from "./executions/actions.ts";
export { startExecution } from "./executions/executions.ts";
export {
  type ExecutionEnd,
  onExecutionEnd,
  type RegisteredActionInput,
  registerActionType,
} from "./executions/extensions.ts";
export { lastStageOutput, readRunResult } from "./executions/run-result.ts";
export { getExecutionTrace } from "./executions/traces.ts";
export { ListSessionsQuery } from "./sessions/schemas.ts";
export { listSessions } from "./sessions/sessions.ts";
export { workflowStates } from "./workflows/provision.ts";
export { onWorkflowDeleted, type ProvidedWorkflow, provisionWorkflow } from "./workflows/workflows.ts";
export { AskPlatformRequest, AUTOMATION_WEBHOOK_TARGETS, startAsk };

/** Every automation route, with the schemas they share. */
export async function registerAutomation(app: FastifyInstance): Promise<void> {
  for (const schema of [
    Readiness,
    RegisterAgentRequest,
    AgentStatus,
    WorkflowWrite,
    WorkflowVersion,
    Workflow,
    StructuredOutput,
    ExecutionMeta,
    DAGNode,
    DAGEdge,
    TraceDAGResponse,
    ExecutionListItem,
    ArtifactInfo,
    TerminateSessionResponse,
    SessionListItem,
    SessionListResponse,
    Session,
    SessionExport,
    AskPlatformRequest,
    AskStartResponse,
  ]) {
    app.addSchema(schema);
  }
  await app.register(agentRoutes);
  await app.register(workflowRoutes);
  await app.register(executionRoutes);
  await app.register(sessionRoutes);
  await app.register(askRoutes);
}

export const AUTOMATION_JOBS: JobDefinition[] = AUTOMATION_EXECUTION_JOBS;

/** Agent kinds that need configuration: `llm` agents run only with an LLM configured. */
export function configureAgentRunners(config: Config): void {
  if (config.llm) registerAgentRunner("llm", runLlmAgent);
  // Agents name their integrations: a rename carries over to them.
  onIntegrationRenamed("agents", { table: agents, column: agents.integrations });
}
