import { type Static, Type } from "@sinclair/typebox";
import { describedPattern, SLUG_PATTERN } from "../core/http/pattern-words.ts";
import { DateTime, Nullable } from "../core/http/schemas.ts";

const Slug = (description: string) =>
  Type.String({ pattern: SLUG_PATTERN, description: `${description} (lower-case slug)` });

export const AgentName = Slug("Agent name, unique per tenant");
export const WorkflowName = Slug("Workflow name, unique per tenant");

/** Actions that run without an LLM. */
export const ACTION_TYPES = ["http_request", "json_transform", "write_report"] as const;
export type ActionType = (typeof ACTION_TYPES)[number];
/** Names of action types a higher domain registers: a namespace, a dot and a name (never a built-in's). */
export const REGISTERED_ACTION_PATTERN = "^[a-z][a-z0-9_]{0,30}\\.[a-z][a-z0-9_]{0,62}$";
export const AGENT_KINDS = ["llm", "builtin"] as const;
export const ROUTING_STATUSES = ["active", "inactive"] as const;

const InputFields = {
  name: Type.String({
    pattern: describedPattern(
      "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
      "letters, digits and _, starting with a letter or _, at most 64 characters",
    ),
  }),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  required: Type.Optional(Type.Boolean({ default: false })),
  pattern: Type.Optional(
    Type.String({
      maxLength: 500,
      description:
        "A regular expression (RE2 syntax: no look-around or back-references) the value must contain a match of; anchor it with ^ and $ to match the whole value",
    }),
  ),
  default: Type.Optional(Type.String({ maxLength: 10_000 })),
};

export const AgentInput = Type.Object(InputFields, { additionalProperties: false });
export type AgentInput = Static<typeof AgentInput>;
export const WorkflowInput = Type.Object(InputFields, { additionalProperties: false });
export type WorkflowInput = Static<typeof WorkflowInput>;

export const RegisterAgentRequest = Type.Object(
  {
    name: AgentName,
    description: Type.Optional(Type.String({ maxLength: 2000, default: "" })),
    kind: Type.Union(
      AGENT_KINDS.map((kind) => Type.Literal(kind)),
      {
        description: "llm: a tool-calling loop on the configured model; builtin: a deterministic Vigil agent",
      },
    ),
    instructions: Type.Optional(Type.String({ maxLength: 50_000, default: "" })),
    model: Type.Optional(Nullable(Type.String({ maxLength: 200, description: "Defaults to LLM_MODEL" }))),
    integrations: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 63 }), {
        maxItems: 50,
        uniqueItems: true,
        description: "Integration names that must exist in the tenant",
      }),
    ),
    tools: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 50,
        uniqueItems: true,
        description:
          "Tool names the agent may call: the built-in actions (http_request, json_transform, write_report)",
      }),
    ),
    inputs: Type.Optional(Type.Array(AgentInput, { maxItems: 50 })),
    max_steps: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 50, default: 8, description: "Tool-loop bound" }),
    ),
  },
  { $id: "RegisterAgentRequest", additionalProperties: false },
);
export type RegisterAgentRequest = Static<typeof RegisterAgentRequest>;

export const Readiness = Type.Object(
  {
    errCode: Type.String({
      description: "TARGET_NOT_FOUND, NO_INTEGRATIONS, WORKFLOW_HAS_NO_STAGES or WORKFLOW_HAS_UNBOUND_STAGE",
    }),
    msg: Type.String(),
    resolution_hint: Type.String(),
  },
  { $id: "ReadinessReason" },
);

export const AgentStatus = Type.Object(
  {
    name: Type.String(),
    description: Type.String(),
    kind: Type.String(),
    instructions: Type.String(),
    model: Nullable(Type.String()),
    integrations: Type.Array(Type.String()),
    tools: Type.Array(Type.String()),
    inputs: Type.Array(AgentInput),
    max_steps: Type.Integer(),
    ready: Type.Boolean({ description: "Safe to run unattended (by a webhook or schedule)" }),
    not_ready_reasons: Type.Array(Type.Ref("ReadinessReason")),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: "AgentStatus" },
);
export type AgentStatus = Static<typeof AgentStatus>;

export const Stage = Type.Object(
  {
    id: Type.String({
      pattern: describedPattern(
        "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$",
        "letters, digits, _ and -, starting with a letter or digit, at most 63 characters",
      ),
      description: "Unique within the workflow",
    }),
    name: Type.Optional(Type.String({ maxLength: 200 })),
    agent_ref: Type.Optional(AgentName),
    parallel_agents: Type.Optional(Type.Array(AgentName, { maxItems: 20, uniqueItems: true })),
    action_type: Type.Optional(
      Type.Union(
        [
          ...ACTION_TYPES.map((action) => Type.Literal(action)),
          Type.String({
            pattern: REGISTERED_ACTION_PATTERN,
            description: "An action Vigil's domains add, such as sre.investigation_gather",
          }),
        ],
        { description: "A built-in action, or a namespaced one a Vigil domain provides" },
      ),
    ),
    config: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: "Settings of the action" }),
    ),
    depends_on: Type.Optional(Type.Array(Type.String(), { maxItems: 50, uniqueItems: true })),
  },
  {
    additionalProperties: false,
    description:
      "A stage binds exactly one of agent_ref, a non-empty parallel_agents list or action_type; " +
      "a stage with none is unbound and keeps the workflow from running unattended",
  },
);
export type Stage = Static<typeof Stage>;

export const WorkflowWrite = Type.Object(
  {
    name: Type.Optional(WorkflowName),
    // No default: Ajv would fill it in, and an absent field must leave the draft's description alone.
    description: Type.Optional(Type.String({ maxLength: 5000 })),
    inputs: Type.Optional(Type.Array(WorkflowInput, { maxItems: 50 })),
    stages: Type.Optional(Type.Array(Stage, { maxItems: 100 })),
    routing_status: Type.Optional(
      Type.Union(
        ROUTING_STATUSES.map((status) => Type.Literal(status)),
        { description: "active: Ask may route messages to the workflow; inactive: only explicit runs" },
      ),
    ),
    routing_examples: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 500 }), {
        maxItems: 50,
        description: "Example requests Ask matches against",
      }),
    ),
  },
  { $id: "WorkflowWrite", additionalProperties: false },
);
export type WorkflowWrite = Static<typeof WorkflowWrite>;

export const WorkflowVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    status: Type.Union([Type.Literal("draft"), Type.Literal("approved")]),
    description: Type.String(),
    inputs: Type.Array(WorkflowInput),
    stages: Type.Array(Stage),
    routing_examples: Type.Array(Type.String()),
    created_at: DateTime(),
    updated_at: DateTime(),
    approved_at: Nullable(DateTime()),
  },
  { $id: "WorkflowVersion" },
);
export type WorkflowVersion = Static<typeof WorkflowVersion>;

export const Workflow = Type.Object(
  {
    name: Type.String(),
    routing_status: Type.String(),
    latest_version: Type.Integer(),
    approved_version: Nullable(Type.Integer({ description: "The version runs use" })),
    draft_version: Nullable(Type.Integer()),
    ready: Type.Boolean(),
    not_ready_reasons: Type.Array(Type.Ref("ReadinessReason")),
    versions: Type.Array(Type.Ref("WorkflowVersion"), {
      description: "Newest first; drafts omitted unless includeDrafts",
    }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: "Workflow" },
);
export type Workflow = Static<typeof Workflow>;

// Executions, traces, sessions and artifacts.

export const StructuredOutput = Type.Object(
  {
    summary: Type.String(),
    impact: Type.String(),
    recommendations: Type.String(),
    confidence: Type.String(),
  },
  {
    $id: "StructuredOutput",
    description:
      "Written by a write_report step (the last one wins); without one, summary holds the final stages' output as text and the other fields are empty",
  },
);
export type StructuredOutput = Static<typeof StructuredOutput>;

export const ExecutionMeta = Type.Object(
  {
    trace_id: Type.String(),
    run_id: Type.String(),
    agent_name: Type.String({ description: "The agent, or the workflow for a workflow run" }),
    status: Type.Union([Type.Literal("running"), Type.Literal("completed"), Type.Literal("error")]),
    started_at: DateTime(),
    duration_ms: Type.Integer({ format: "int64", description: "Until finished, or until now while running" }),
    total_cost: Type.Number({
      format: "double",
      description: "USD from token usage and the price table (per 1K tokens by model); built-in work costs 0",
    }),
    trace_settled: Type.Boolean({ description: "True when every node is final and costs are final" }),
    target_type: Type.Union([Type.Literal("agent"), Type.Literal("workflow")]),
    workflow_version: Nullable(Type.Integer({ description: "The approved version the run pinned" })),
    session_id: Type.String(),
    cancelled: Type.Boolean(),
    error: Nullable(Type.String({ description: "Why the run failed or was cancelled" })),
  },
  { $id: "ExecutionMeta" },
);

export const DAGNode = Type.Object(
  {
    id: Type.String({
      description: "Unique in the trace: stage:<id>, stage:<id>/agent:<name>, .../tool:<n>:<tool>",
    }),
    type: Type.String({ description: "stage, agent, action or tool" }),
    label: Type.String(),
    status: Type.Union([Type.Literal("success"), Type.Literal("running"), Type.Literal("error")], {
      description:
        "pending shows as running; skipped (an upstream stage failed or the run was cancelled) as error",
    }),
    state: Type.String({ description: "The node's own state: pending, running, success, error or skipped" }),
    attempt: Type.Integer({ description: "1 for the first try; 0 before it started" }),
    error: Nullable(Type.String()),
    cost: Type.Number(),
  },
  { $id: "DAGNode" },
);

export const DAGEdge = Type.Object(
  { source: Type.String(), target: Type.String() },
  { $id: "DAGEdge", description: "Stage dependency, stage to agent or action, agent to tool call" },
);

export const TraceDAGResponse = Type.Object(
  {
    truncated: Type.Boolean({ description: "True when the DAG has more nodes than the limit (500)" }),
    structured_output: Type.Ref("StructuredOutput"),
    execution: Type.Ref("ExecutionMeta"),
    nodes: Type.Array(Type.Ref("DAGNode")),
    edges: Type.Array(Type.Ref("DAGEdge")),
  },
  { $id: "TraceDAGResponse" },
);
export type TraceDAGResponse = Static<typeof TraceDAGResponse>;

export const ExecutionListItem = Type.Object(
  {
    trace_id: Type.String(),
    run_id: Type.String(),
    session_id: Type.String(),
    target_type: Type.String(),
    target_name: Type.String(),
    agent_name: Type.String(),
    workflow_version: Nullable(Type.Integer()),
    status: Type.String({ description: "running, completed or error" }),
    cancelled: Type.Boolean(),
    started_at: DateTime(),
    finished_at: Nullable(DateTime()),
    duration_ms: Type.Integer(),
    total_cost: Type.Number(),
  },
  { $id: "ExecutionListItem" },
);
export type ExecutionListItem = Static<typeof ExecutionListItem>;

export const ArtifactInfo = Type.Object(
  {
    id: Type.String({ format: "uuid" }),
    session_id: Type.String(),
    name: Type.String(),
    mime_type: Type.String(),
    size_bytes: Type.Integer({ format: "int64" }),
    created_at: DateTime(),
  },
  { $id: "ArtifactInfo" },
);
export type ArtifactInfo = Static<typeof ArtifactInfo>;

export const TerminateSessionResponse = Type.Object(
  { cancelled_workflows: Type.Integer({ description: "Runs of the session this call cancelled" }) },
  { $id: "TerminateSessionResponse" },
);

/** An Ask waiting for the caller to supply required inputs in the same session. */
export interface PendingAsk {
  target: { type: "agent" | "workflow"; name: string };
  /** Inputs collected so far (from `inputs` and earlier messages). */
  inputs: Record<string, string>;
  /** Of those, the ones a caller passed in `inputs`: they stand, a later `name=value` does not change them. */
  given?: string[];
  missing: string[];
}
