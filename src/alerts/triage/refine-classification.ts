// An optional second opinion on the deterministic alert classification: the configured model reads
// the alert and the built-in result and answers { attention, attention_reason, short_summary }.
// Anything short of a valid answer in time (no LLM configured, an endpoint error, a timeout,
// malformed JSON, a value outside the schema) gives null and the deterministic result stands; this
// function never throws. The caller decides what to store (and may keep its own reason too).
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { generateObject } from "ai";
import type { Logger } from "pino";
import { abortAfter } from "../../core/abort.ts";
import type { Usage } from "../../llm/index.ts";
import { createLlmModel, describeLlmError, type LlmConfig } from "../../llm/index.ts";
import type { Attention } from "./classify.ts";

export const ATTENTION_LEVELS = [
  "needs_attention",
  "needs_review",
  "false_positive",
  "others",
] as const satisfies readonly Attention[];

/** Bounds of one refinement call. */
export const REFINE_DEFAULTS = {
  /** The whole call, including the HTTP request: triage must not wait long on a second opinion. */
  timeoutMs: 15_000,
  maxOutputTokens: 400,
  /** The alert summary sent to the model is cut beyond this. */
  maxAlertChars: 8_000,
} as const;

export const REASON_MAX_CHARS = 500;
export const SUMMARY_MAX_CHARS = 300;

const RefinementAnswer = Type.Object(
  {
    attention: Type.Union(ATTENTION_LEVELS.map((level) => Type.Literal(level))),
    attention_reason: Type.String({ minLength: 1, maxLength: REASON_MAX_CHARS }),
    short_summary: Type.String({ minLength: 1, maxLength: SUMMARY_MAX_CHARS }),
  },
  { additionalProperties: false },
);
type RefinementAnswer = Static<typeof RefinementAnswer>;

export interface RefineClassificationInput {
  /** What the model may read about the alert (title, severity, labels, environment, storm role,
   *  history signals, ...): any JSON-serializable summary the caller builds. */
  alert: Record<string, unknown>;
  /** The deterministic classifier's result. */
  classification: { attention: Attention; attentionReason: string; shortSummary: string };
}

export interface Refinement {
  attention: Attention;
  attentionReason: string;
  shortSummary: string;
  /** Tokens of the call, under the model name, for the price table. */
  usage: Usage;
}

export interface RefineOptions {
  timeoutMs?: number;
  maxOutputTokens?: number;
  /** Aborts the call (a stopping worker, say); the result is then null. */
  signal?: AbortSignal;
  log?: Logger;
}

const SYSTEM = [
  "You are an SRE on call, triaging one alert. A deterministic classifier already labelled it;",
  "confirm or correct its label from the alert's details.",
  "Labels: needs_attention (act now: likely real user impact), needs_review (a human should look, not",
  "urgent), false_positive (noise: test notifications, flapping or self-resolving rules of low",
  "severity), others (low priority, or a symptom of a storm whose cause is another alert).",
  "Answer with one JSON object and nothing else, with exactly these fields:",
  `{"attention": one of ${ATTENTION_LEVELS.map((level) => `"${level}"`).join(", ")},`,
  `"attention_reason": why, in one sentence (at most ${REASON_MAX_CHARS} characters),`,
  `"short_summary": the alert in one line for an on-call engineer (at most ${SUMMARY_MAX_CHARS} characters)}.`,
].join(" ");

/** The answer validated (strings trimmed), or why it is not valid. */
export function validateAnswer(value: unknown): { answer: RefinementAnswer } | { error: string } {
  const trimmed = trimStrings(value);
  if (Value.Check(RefinementAnswer, trimmed)) return { answer: trimmed };
  const first = Value.Errors(RefinementAnswer, trimmed).First();
  return { error: first ? `${first.path || "answer"}: ${first.message}` : "invalid answer" };
}

function trimStrings(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, typeof item === "string" ? item.trim() : item]),
  );
}

export async function refineClassification(
  llm: LlmConfig | null,
  input: RefineClassificationInput,
  options: RefineOptions = {},
): Promise<Refinement | null> {
  if (!llm) return null;
  const timeoutMs = options.timeoutMs ?? REFINE_DEFAULTS.timeoutMs;
  const abortSignal = abortAfter(timeoutMs, options.signal);
  const alertJson = JSON.stringify(input.alert, null, 2);
  const prompt = JSON.stringify(
    {
      alert:
        alertJson.length <= REFINE_DEFAULTS.maxAlertChars
          ? input.alert
          : { truncated_json: alertJson.slice(0, REFINE_DEFAULTS.maxAlertChars) },
      deterministic_classification: {
        attention: input.classification.attention,
        attention_reason: input.classification.attentionReason,
        short_summary: input.classification.shortSummary,
      },
    },
    null,
    2,
  );
  try {
    const { model, modelId } = createLlmModel(llm, { requestTimeoutMs: timeoutMs });
    const result = await generateObject({
      model,
      // JSON mode (response_format json_object, which OpenAI-compatible servers widely support)
      // with the shape in the system prompt; the answer is validated here.
      output: "no-schema",
      system: SYSTEM,
      prompt,
      maxOutputTokens: options.maxOutputTokens ?? REFINE_DEFAULTS.maxOutputTokens,
      maxRetries: 0,
      abortSignal,
      // Some models wrap the object in a Markdown fence despite being asked not to.
      experimental_repairText: async ({ text }) =>
        /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text)?.[1] ?? null,
    });
    const checked = validateAnswer(result.object);
    if ("error" in checked) {
      options.log?.warn({ err: checked.error }, "LLM refinement of the alert classification was invalid");
      return null;
    }
    return {
      attention: checked.answer.attention,
      attentionReason: checked.answer.attention_reason,
      shortSummary: checked.answer.short_summary,
      usage: {
        model: modelId,
        promptTokens: result.usage.inputTokens ?? 0,
        completionTokens: result.usage.outputTokens ?? 0,
      },
    };
  } catch (err) {
    const { message } = describeLlmError(err);
    options.log?.warn(
      { err: message },
      "LLM refinement of the alert classification failed; keeping the built-in one",
    );
    return null;
  }
}
