// How an agent runs, by kind. `builtin` is Vigil's deterministic agent; `llm` has no runner until
// the LLM module registers one (registerAgentRunner("llm", ...)), and until then an llm agent's node
// fails at once with "no LLM configured".
//
// A runner gets the agent, the run's context and `callTool`, which records one tool node per call
// (agent -> tool edge), refuses to start once the run is cancelled, and runs a built-in action.
import type { Logger } from "pino";
import type { Config } from "../../config.ts";
import type { Usage } from "../../llm/index.ts";
import { StepError } from "../executions/actions.ts";
import { renderText } from "../executions/template.ts";

export interface AgentDefinition {
  name: string;
  kind: string;
  instructions: string;
  model: string | null;
  integrations: string[];
  tools: string[];
  maxSteps: number;
}

export interface AgentRunInput {
  agent: AgentDefinition;
  /** { input, stages: { <id>: { output } }, execution }. */
  context: Record<string, unknown>;
  /** The stage's config: settings of each tool by tool name (`config.http_request`, ...). */
  stageConfig: Record<string, unknown>;
  /**
   * Calls a built-in action as a tool: `settings` are templated over the context plus `extra`.
   * Throws StepError when the tool fails, and stops the agent when the run was cancelled.
   */
  callTool(
    tool: string,
    settings: Record<string, unknown>,
    extra?: Record<string, unknown>,
  ): Promise<unknown>;
  config: Config;
  log: Logger;
  /** Aborts when the run stops (cancelled): a model call under way is dropped. */
  signal?: AbortSignal;
}

export interface AgentRunResult {
  output: unknown;
  /** Token usage of the agent's own model calls; priced by the price table. */
  usage?: Usage | null;
}

export type AgentRunner = (input: AgentRunInput) => Promise<AgentRunResult>;

/**
 * The built-in agent: renders its instructions as a template over the run's context, then calls
 * each of its declared tools in order with the settings the stage's config holds under the tool's
 * name (a tool the stage gives no settings is not called). Tools see the context plus `agent`
 * ({ name, text, tools: outputs so far }). Output: { agent, text, tools: { <tool>: output } }.
 */
export const runBuiltinAgent: AgentRunner = async ({ agent, context, stageConfig, callTool }) => {
  const text = renderText(agent.instructions, context);
  const tools: Record<string, unknown> = {};
  for (const tool of agent.tools) {
    const settings = stageConfig[tool];
    if (settings === null || typeof settings !== "object" || Array.isArray(settings)) continue;
    tools[tool] = await callTool(tool, settings as Record<string, unknown>, {
      agent: { name: agent.name, text, tools: { ...tools } },
    });
  }
  return { output: { agent: agent.name, text, tools }, usage: null };
};

const runners = new Map<string, AgentRunner>([["builtin", runBuiltinAgent]]);

/** The extension point: the LLM module calls registerAgentRunner("llm", runLlmAgent) at start. */
export function registerAgentRunner(kind: string, runner: AgentRunner): () => void {
  runners.set(kind, runner);
  return () => {
    if (runners.get(kind) === runner) runners.delete(kind);
  };
}

export async function runAgent(input: AgentRunInput): Promise<AgentRunResult> {
  const runner = runners.get(input.agent.kind);
  if (runner) return runner(input);
  if (input.agent.kind === "llm") {
    throw new StepError(
      `agent ${input.agent.name}: no LLM configured (set LLM_BASE_URL and LLM_MODEL) to run llm agents`,
      false,
    );
  }
  throw new StepError(`agent ${input.agent.name}: no runner for agent kind ${input.agent.kind}`, false);
}
