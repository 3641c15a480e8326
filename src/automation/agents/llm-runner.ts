// The `llm` agent runner: a tool-calling loop through the Vercel AI SDK against the configured
// OpenAI-compatible endpoint (src/llm/model.ts). Registered at start when an LLM is configured
// (src/start.ts); without one, an llm agent's node fails at once with "no LLM configured".
//
// - System prompt: the agent's instructions, rendered as a template over the run's context (like a
//   built-in agent's), after a short preamble. User message: the run's context as JSON (`input`,
//   the earlier stages' outputs, `execution`) and the stage's `config`.
// - Tools: the agent's declared tools that are built-in actions (http_request, json_transform,
//   write_report), each with an input schema. Every call goes through `callTool`, so it is a tool
//   node of the trace, refuses to start once the run is cancelled and obeys the action's own rules
//   (allow-listed hosts, timeouts). The settings the stage's config holds under the tool's name are
//   defaults the model's arguments override field by field. A tool that fails is reported to the
//   model as an error result (it can correct its call or say what it could not check); a cancelled
//   run stops the agent at once.
// - Bounds (defaults in LLM_RUNNER_DEFAULTS):
//   * `max_steps` model calls (AI SDK steps, stopWhen stepCountIs); the last allowed call is made
//     with tool_choice "none" so a well-behaved model must answer. The engine also allows at most
//     `max_steps` tool calls in all. A model that is still calling tools when the steps run out
//     fails the node with "no final answer within N steps" (not retried: a rerun would cost the
//     same and likely end the same).
//   * tokens: maxOutputTokens per call, and a budget of prompt + completion tokens summed over the
//     calls; once it is spent no further call is made, and unless the last call gave the final
//     answer the node fails with "token budget ... spent" (not retried).
//   * time: each HTTP request to the endpoint is aborted after requestTimeoutMs, the whole loop
//     after totalTimeoutMs (both retried by the engine, as are the endpoint's 5xx and 429 answers;
//     the SDK itself does not retry, so the stage job's retry policy is the only one).
// - Output: { agent, model, text, json (the answer parsed when it is a JSON object, else null),
//   steps, tool_calls, finish_reason }; usage: the tokens summed over every call that answered, under
//   the model name sent (the agent's `model`, else LLM_MODEL), priced by the price table. A failure
//   (a StepError) carries the same usage: calls that answered before it were paid for.
import { generateText, jsonSchema, stepCountIs, type ToolSet, tool } from "ai";
import { abortAfter } from "../../core/abort.ts";
import { createLlmModel, describeLlmError, type LlmConfig, type Usage } from "../../llm/index.ts";
import { StepError } from "../executions/actions.ts";
import { RunStoppedError } from "../executions/execution-state.ts";
import { renderText } from "../executions/template.ts";
import { ACTION_TYPES, type ActionType } from "../schemas.ts";
import type { AgentRunInput, AgentRunner, AgentRunResult } from "./agent-runners.ts";

export interface LlmRunnerOptions {
  /** Bound on one model call's completion. */
  maxOutputTokens: number;
  /** Prompt + completion tokens summed over every call of one agent run. */
  tokenBudget: number;
  /** One HTTP request to the endpoint. */
  requestTimeoutMs: number;
  /** The whole tool loop, tool calls included. */
  totalTimeoutMs: number;
  /** A tool result longer than this (as JSON) is cut before the model sees it. */
  maxToolResultChars: number;
  /** The run context sent as the user message is cut beyond this. */
  maxContextChars: number;
}

export const LLM_RUNNER_DEFAULTS: Readonly<LlmRunnerOptions> = {
  maxOutputTokens: 2048,
  tokenBudget: 100_000,
  requestTimeoutMs: 60_000,
  totalTimeoutMs: 5 * 60_000,
  maxToolResultChars: 16_000,
  maxContextChars: 48_000,
};

const PREAMBLE = [
  "You are an automation agent of Vigil, an SRE alert and automation service.",
  "The user message holds the run's context as JSON: `input` (what the run was started with),",
  "`stages` (outputs of earlier stages), `execution` and `config` (this stage's settings).",
  "Call the tools you are given when they help; a tool's error result says what went wrong.",
  "When you are done, answer with your final result. If you are asked for JSON, answer with one",
  "JSON object and nothing else.",
].join(" ");

const str = (description: string) => ({ type: "string", description }) as const;

/** The input schema the model sees for each built-in action (the action still validates). */
const TOOL_SPECS: Record<ActionType, { description: string; schema: Record<string, unknown> }> = {
  http_request: {
    description:
      "Make an HTTP request to an allow-listed host and get { status, content_type, body, truncated }. Redirects are not followed.",
    schema: {
      type: "object",
      properties: {
        method: { type: "string", enum: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] },
        url: str("Absolute http(s) URL"),
        headers: { type: "object", additionalProperties: { type: "string" } },
        body: { description: "Request body: a string is sent as is, anything else as JSON" },
        timeout_ms: { type: "integer", minimum: 1, maximum: 60_000 },
      },
      additionalProperties: false,
    },
  },
  json_transform: {
    description:
      "Evaluate a JSONata expression over the run's context (input, stages.<id>.output, execution) and get its value.",
    schema: {
      type: "object",
      properties: {
        expression: str("A JSONata expression, e.g. stages.fetch.output.body.items[status='firing']"),
      },
      required: ["expression"],
      additionalProperties: false,
    },
  },
  write_report: {
    description:
      "Write a Markdown report as an artifact of the run's session; it also becomes the run's structured output.",
    schema: {
      type: "object",
      properties: {
        name: str("File name, default report.md"),
        title: str("Report title"),
        summary: str("What happened"),
        impact: str("Who or what is affected"),
        recommendations: str("What to do next"),
        confidence: str("low, medium or high"),
      },
      additionalProperties: false,
    },
  },
};

function plainObject(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}... [cut: ${text.length - max} more characters]`;
}

/** The answer as a JSON object when it is one (bare or in a ```json fence), else null. */
export function parseJsonAnswer(text: string): Record<string, unknown> | null {
  const trimmed = text.trim();
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/i.exec(trimmed);
  const candidate = fenced?.[1] ?? trimmed;
  if (!candidate.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(candidate);
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function notConfiguredError(agentName: string): StepError {
  return new StepError(
    `agent ${agentName}: no LLM configured (set LLM_BASE_URL and LLM_MODEL) to run llm agents`,
    false,
  );
}

export function createLlmRunner(overrides: Partial<LlmRunnerOptions> = {}): AgentRunner {
  const options: LlmRunnerOptions = { ...LLM_RUNNER_DEFAULTS, ...overrides };
  return async (input) => {
    const llm = input.config.llm;
    if (!llm) throw notConfiguredError(input.agent.name);
    return runToolLoop(input, llm, options);
  };
}

/** The runner with the default bounds: what start.ts registers. */
export const runLlmAgent: AgentRunner = createLlmRunner();

async function runToolLoop(
  { agent, context, stageConfig, callTool, log, signal }: AgentRunInput,
  llm: LlmConfig,
  options: LlmRunnerOptions,
): Promise<AgentRunResult> {
  const { model, modelId } = createLlmModel(llm, {
    modelId: agent.model,
    requestTimeoutMs: options.requestTimeoutMs,
  });
  const maxSteps = Math.max(1, agent.maxSteps);
  // Why the loop must stop early: a cancelled run (the error callTool threw) or too many tool calls.
  let fatal: Error | null = null;
  let toolCalls = 0;
  const tools: ToolSet = {};
  for (const name of agent.tools) {
    if (!(ACTION_TYPES as readonly string[]).includes(name)) continue;
    const action = name as ActionType;
    const spec = TOOL_SPECS[action];
    tools[action] = tool({
      description: spec.description,
      inputSchema: jsonSchema<Record<string, unknown>>(spec.schema as never),
      execute: async (args) => {
        if (fatal) throw fatal;
        toolCalls += 1;
        if (toolCalls > maxSteps) {
          fatal = new StepError(
            `agent ${agent.name} made more than ${maxSteps} tool calls (max_steps)`,
            false,
          );
          throw fatal;
        }
        try {
          const output = await callTool(action, {
            ...plainObject(stageConfig[action]),
            ...plainObject(args),
          });
          const json = JSON.stringify(output ?? null);
          return json.length <= options.maxToolResultChars
            ? (output ?? null)
            : { truncated: true, json_prefix: json.slice(0, options.maxToolResultChars) };
        } catch (err) {
          if (err instanceof RunStoppedError) fatal = err;
          throw err;
        }
      },
    });
  }
  const system = [PREAMBLE, renderText(agent.instructions, context).trim()].filter(Boolean).join("\n\n");
  const prompt = clip(JSON.stringify({ ...context, config: stageConfig }, null, 2), options.maxContextChars);
  // Summed per finished call, so a failure after some calls still carries what they spent (the SDK's
  // error holds no usage of its own): they were paid for, whatever becomes of the attempt.
  let promptTokens = 0;
  let completionTokens = 0;
  let answered = 0;
  const usageOf = (): Usage | null =>
    answered === 0 ? null : { model: modelId, promptTokens, completionTokens };
  const spent = () => promptTokens + completionTokens;
  const overBudget = () => spent() >= options.tokenBudget;
  const failure = (err: unknown): Error => {
    if (err instanceof RunStoppedError) return err;
    if (err instanceof StepError) return new StepError(err.message, err.retryable, usageOf());
    const { message, retryable } = describeLlmError(err);
    return new StepError(`agent ${agent.name}: ${message}`, retryable, usageOf());
  };
  let result: Awaited<ReturnType<typeof generateText>>;
  try {
    result = await generateText({
      model,
      system,
      prompt,
      tools,
      maxOutputTokens: options.maxOutputTokens,
      maxRetries: 0,
      abortSignal: abortAfter(options.totalTimeoutMs, signal),
      stopWhen: [stepCountIs(maxSteps), () => fatal !== null, overBudget],
      // The last allowed call may not call tools: the model has to answer with what it has.
      prepareStep: ({ stepNumber }) =>
        stepNumber === maxSteps - 1 && Object.keys(tools).length > 0 ? { toolChoice: "none" } : undefined,
      onStepFinish: (step) => {
        answered += 1;
        promptTokens += step.usage.inputTokens ?? 0;
        completionTokens += step.usage.outputTokens ?? 0;
      },
    });
  } catch (err) {
    throw failure(fatal ?? err);
  }
  if (fatal) throw failure(fatal);
  const usage = usageOf();
  const last = result.steps.at(-1);
  if (!last || last.toolCalls.length > 0 || last.finishReason === "tool-calls") {
    const why = overBudget()
      ? `the token budget of ${options.tokenBudget} was spent (${spent()} tokens)`
      : `the model was still calling tools after ${result.steps.length} of ${maxSteps} steps (max_steps)`;
    log.warn({ agent: agent.name, model: modelId, usage }, `llm agent stopped without an answer: ${why}`);
    throw new StepError(`agent ${agent.name}: no final answer: ${why}`, false, usage);
  }
  const text = result.text.trim();
  return {
    output: {
      agent: agent.name,
      model: modelId,
      text,
      json: parseJsonAnswer(text),
      steps: result.steps.length,
      tool_calls: toolCalls,
      finish_reason: result.finishReason,
    },
    usage,
  };
}
