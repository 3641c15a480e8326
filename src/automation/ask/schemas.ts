import { type Static, Type } from "@sinclair/typebox";
import { AnyKeyRecord, KeyedRecord, Nullable } from "../../core/http/schemas.ts";

export const CANDIDATE_TYPES = ["any", "agent", "workflow", "integration", "knowledge"] as const;
const CandidateType = Type.Union(
  CANDIDATE_TYPES.map((type) => Type.Literal(type)),
  { description: "any, agent, workflow, integration, knowledge; only agents and workflows run" },
);

export const AskPlatformRequest = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 10_000, description: "Natural-language task" }),
    candidate_type: Type.Optional(
      Type.Union(
        CANDIDATE_TYPES.map((type) => Type.Literal(type)),
        {
          default: "any",
          description:
            "Which kinds may answer: any (agents and workflows), agent or workflow. integration and knowledge name no runnable kind, so nothing runs",
        },
      ),
    ),
    session_id: Type.Optional(
      Type.String({ maxLength: 100, description: "Continue a conversation of the caller (404 otherwise)" }),
    ),
    inputs: Type.Optional(
      KeyedRecord(64, Type.String({ maxLength: 10_000 }), {
        maxProperties: 50,
        description:
          "Workflow inputs; they win over values read from the message. Each key holds 1 to 64 characters",
      }),
    ),
    entity_refs: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            type: CandidateType,
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 20,
          description:
            "Pin a workflow or agent (it answers without ranking, even when its routing is inactive), or an integration (only agents and workflows using it are ranked)",
        },
      ),
    ),
    source_app: Type.Optional(Type.String({ maxLength: 100, description: "Calling application, for audit" })),
    source_metadata: Type.Optional(
      KeyedRecord(100, Type.String({ maxLength: 1000 }), {
        maxProperties: 50,
        description: "Stored with the session and searchable; each key holds 1 to 100 characters",
      }),
    ),
    prior_session: Type.Optional(
      Nullable(
        Type.Object(
          {
            enabled: Type.Optional(Type.Boolean({ description: "Default false" })),
            match_mode: Type.Optional(
              Type.Literal("exact_normalized_text", {
                description:
                  "An earlier session whose first prompt normalizes (case, spaces, end punctuation) to this message's",
              }),
            ),
            max_summary_chars: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 20_000, description: "Default 2000" }),
            ),
            max_age_hours: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 8760, description: "Default 24" }),
            ),
            same_agent_only: Type.Optional(
              Nullable(Type.Boolean({ description: "Only a session the same agent or workflow answered" })),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { $id: "AskPlatformRequest", additionalProperties: false },
);
export type AskPlatformRequest = Static<typeof AskPlatformRequest>;

export const AskStartResponse = Type.Object(
  {
    trace_id: Type.String({ description: "The run to poll; empty when nothing started" }),
    run_id: Type.String({ description: "Empty when nothing started" }),
    session_id: Type.String({ description: "Answer in it to continue (e.g. with the inputs required)" }),
    decision: Type.Union(
      ["routed", "pinned", "continued", "fallback", "ambiguous", "no_match", "inputs_required"].map((kind) =>
        Type.Literal(kind),
      ),
      {
        description:
          "routed: the best match ran; pinned: entity_refs chose it; continued: the session's pending target ran; " +
          "fallback: no match was strong enough and the fallback agent ran; ambiguous or no_match: nothing ran; " +
          "inputs_required: the target waits for inputs",
      },
    ),
    candidates: Type.Array(
      Type.Object({
        name: Type.String(),
        confidence: Type.Number({ format: "double", minimum: 0, maximum: 1 }),
        candidate_type: CandidateType,
      }),
      { description: "Best first, at most 5" },
    ),
    inputs_required: Type.Array(Type.String(), { description: "Missing required inputs; nothing started" }),
    extracted: AnyKeyRecord(Type.String(), { description: "Inputs read from the message" }),
    fallback_agent: Type.String({ description: "The fallback agent when it answered; empty otherwise" }),
    plan: Type.String({
      description:
        "Name of the matched plan: the workflow or agent that answers (see decision); empty when none",
    }),
    message: Type.String({ description: "What Ask did, in words (also stored in the session)" }),
    prior_session_id: Nullable(Type.String({ description: "The earlier session whose summary was reused" })),
  },
  { $id: "AskStartResponse" },
);
export type AskStartResponse = Static<typeof AskStartResponse>;
