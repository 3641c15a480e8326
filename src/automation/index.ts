// The automation domain: agents, versioned workflows, executions with their traces and sessions, and
// the webhook targets that start runs. Other domains and app.ts/jobs.ts/start.ts reach it only here.
import type { FastifyInstance } from "fastify";
import type { Config } from "../config.ts";
import type { JobDefinition } from "../core/queue/catalog.ts";
import { registerAgentRunner } from "./agents/agent-runners.ts";
import { runLlmAgent } from "./agents/llm-runner.ts";
import { agentRoutes } from "./agents/routes.ts";
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
import { AUTOMATION_WEBHOOK_TARGETS } from "./triggers/webhook-target.ts";
import { workflowRoutes } from "./workflows/routes.ts";

export type { Stage } from "./schemas.ts";
export { ensureApprovedWorkflow, workflowStates } from "./workflows/provision.ts";
export { AUTOMATION_WEBHOOK_TARGETS };

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
  ]) {
    app.addSchema(schema);
  }
  await app.register(agentRoutes);
  await app.register(workflowRoutes);
  await app.register(executionRoutes);
}

export const AUTOMATION_JOBS: JobDefinition[] = AUTOMATION_EXECUTION_JOBS;

/** Agent kinds that need configuration: `llm` agents run only with an LLM configured. */
export function configureAgentRunners(config: Config): void {
  if (config.llm) registerAgentRunner("llm", runLlmAgent);
}
