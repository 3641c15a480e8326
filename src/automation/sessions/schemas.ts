import { type Static, Type } from "@sinclair/typebox";
import { AnyKeyRecord, DateTime, Nullable, OrgQuery } from "../../core/http/schemas.ts";

export const EXPORT_PARTS = ["notes", "report", "evidence"] as const;
export type ExportPart = (typeof EXPORT_PARTS)[number];

const Responder = Nullable(
  Type.Object(
    {
      type: Type.String({ description: "agent, workflow, or app (an installed app that started it)" }),
      name: Type.String(),
    },
    { description: "Who answers: the target of the latest run, or the installed app; null before any" },
  ),
);

const SessionFields = {
  id: Type.String({ format: "uuid" }),
  title: Type.String(),
  first_prompt: Type.String({
    description:
      "The first user message (Ask); a webhook run's body (its text, or its JSON inputs as JSON text, up to 10,000 characters); else the title",
  }),
  initiator: Type.String({
    description: "user:<id>, webhook:<id>, app:sre (the app token) or auto_investigate",
  }),
  source_app: Nullable(Type.String()),
  source_metadata: AnyKeyRecord(Type.String()),
  responder: Responder,
  status: Type.Union([Type.Literal("running"), Type.Literal("waiting_for_input"), Type.Literal("idle")], {
    description: "running: a run is under way; waiting_for_input: Ask asked for inputs; idle otherwise",
  }),
  created_at: DateTime(),
  last_activity_at: DateTime("The latest message or run start"),
  execution_count: Type.Integer(),
  total_cost: Type.Number({ description: "USD, the sum over the session's runs" }),
};

export const SessionListItem = Type.Object(SessionFields, { $id: "SessionListItem" });
export type SessionListItem = Static<typeof SessionListItem>;

export const SessionListResponse = Type.Object(
  {
    items: Type.Array(Type.Ref("SessionListItem"), { description: "Most recent activity first" }),
    limit: Type.Integer(),
    offset: Type.Integer(),
    has_more: Type.Boolean({ description: "True when another page follows" }),
  },
  { $id: "SessionListResponse" },
);
export type SessionListResponse = Static<typeof SessionListResponse>;

const Message = Type.Object({
  id: Type.String({ format: "uuid" }),
  role: Type.Union([Type.Literal("user"), Type.Literal("assistant")]),
  content: Type.String(),
  trace_id: Nullable(Type.String({ description: "The run this message started" })),
  data: Nullable(AnyKeyRecord(Type.Unknown(), { description: "What Ask decided" })),
  created_at: DateTime(),
});

const SessionExecution = Type.Object({
  trace_id: Type.String(),
  run_id: Type.String(),
  target_type: Type.String(),
  target_name: Type.String(),
  workflow_version: Nullable(Type.Integer()),
  status: Type.String({ description: "running, completed or error" }),
  cancelled: Type.Boolean(),
  cancel_reason: Nullable(Type.String()),
  error: Nullable(Type.String()),
  started_at: DateTime(),
  finished_at: Nullable(DateTime()),
  duration_ms: Type.Integer(),
  total_cost: Type.Number(),
  structured_output: Nullable(Type.Ref("StructuredOutput")),
});

export const Session = Type.Object(
  {
    ...SessionFields,
    pending_inputs: Nullable(
      Type.Object(
        {
          target_type: Type.String(),
          target_name: Type.String(),
          inputs_required: Type.Array(Type.String()),
        },
        { description: "Set while Ask waits for the caller to answer in this session" },
      ),
    ),
    messages: Type.Array(Message, { description: "Oldest first" }),
    executions: Type.Array(SessionExecution, { description: "Oldest first" }),
    artifacts: Type.Array(Type.Ref("ArtifactInfo")),
    computed: Type.Object({
      duration_ms: Type.Integer({ description: "From creation to the last activity" }),
      message_count: Type.Integer(),
      execution_count: Type.Integer(),
      running_count: Type.Integer(),
      completed_count: Type.Integer(),
      error_count: Type.Integer({ description: "Runs that ended in error, cancelled ones included" }),
      cancelled_count: Type.Integer(),
      artifact_count: Type.Integer(),
    }),
    cost: Type.Object({
      total_cost: Type.Number(),
      prompt_tokens: Type.Integer(),
      completion_tokens: Type.Integer(),
      by_execution: Type.Array(
        Type.Object({ trace_id: Type.String(), target_name: Type.String(), total_cost: Type.Number() }),
      ),
      by_model: Type.Array(
        Type.Object({
          model: Type.String(),
          prompt_tokens: Type.Integer(),
          completion_tokens: Type.Integer(),
          cost: Type.Number(),
        }),
        { description: "Model calls of the session's runs; built-in steps have no model and cost 0" },
      ),
    }),
    summary: Type.String({
      description: "Generated: the runs and their outcome, then the latest run's result summary",
    }),
  },
  { $id: "Session" },
);
export type Session = Static<typeof Session>;

export const SessionExport = Type.Object(
  {
    session_id: Type.String(),
    format: Type.Literal("json"),
    generated_at: DateTime(),
    title: Type.String(),
    parts: Type.Array(Type.String(), {
      description: "The kinds included, in the order notes, report, evidence",
    }),
    notes: Type.Optional(
      Type.Object(
        { summary: Type.String(), messages: Type.Array(Message) },
        { description: "The conversation and its generated summary" },
      ),
    ),
    report: Type.Optional(
      Type.Object(
        {
          structured_outputs: Type.Array(
            Type.Object({
              trace_id: Type.String(),
              target_name: Type.String(),
              summary: Type.String(),
              impact: Type.String(),
              recommendations: Type.String(),
              confidence: Type.String(),
            }),
          ),
          documents: Type.Array(
            Type.Object({
              artifact_id: Type.String(),
              name: Type.String(),
              mime_type: Type.String(),
              sha256: Type.String(),
              content: Type.String({ description: "The text of a text/* artifact (reports)" }),
            }),
          ),
        },
        { description: "The runs' structured outputs and the text artifacts (reports) inline" },
      ),
    ),
    evidence: Type.Optional(
      Type.Object(
        {
          executions: Type.Array(
            Type.Object({
              trace_id: Type.String(),
              target_type: Type.String(),
              target_name: Type.String(),
              status: Type.String(),
              input: Type.Unknown(),
              steps: Type.Array(
                Type.Object({
                  id: Type.String(),
                  type: Type.String(),
                  label: Type.String(),
                  state: Type.String(),
                  output: Type.Unknown(),
                  error: Nullable(Type.String()),
                }),
              ),
            }),
          ),
          artifacts: Type.Array(
            Type.Object({
              id: Type.String(),
              name: Type.String(),
              mime_type: Type.String(),
              size_bytes: Type.Integer(),
              sha256: Type.String(),
            }),
            { description: "Every artifact with its hash; download them by id" },
          ),
        },
        { description: "What the runs did: their inputs and each step's output, and every artifact's hash" },
      ),
    ),
  },
  { $id: "SessionExport" },
);
export type SessionExport = Static<typeof SessionExport>;

/** listSessions' query (the MCP tool list_sessions takes it without orgId). */
export const ListSessionsQuery = Type.Object({
  ...OrgQuery,
  q: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        "Words that must all occur (case-insensitive, substrings) in the title, first prompt, initiator, " +
        "responder and agent or workflow names, session id, source app or source metadata",
    }),
  ),
  source_app: Type.Optional(Type.String({ maxLength: 100 })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, default: 0 }),
});
