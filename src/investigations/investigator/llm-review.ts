// The LLM investigator, when a model is configured (LLM_BASE_URL, LLM_MODEL): after the
// deterministic steps, a bounded tool loop over what they found (the same data, one tool each) asks
// the model for the verdict, ranked hypotheses and the links it cites. Bounds: steps, output tokens,
// a token budget and a total time; a repeated identical tool call is refused; an oversized tool
// answer is cut. Anything unusable (an error, no final answer, an answer that is not the JSON asked
// for) leaves the deterministic conclusion standing, with a step that says so. Cited links become
// `llm` evidence, verified only when their host is an integration's, like any other. The tokens of
// every call that answered are returned as the review's usage, usable answer or not: they were paid for.
import { generateText, jsonSchema, stepCountIs, type ToolSet, tool } from "ai";
import type { Logger } from "pino";
import { VERDICTS } from "../../alerts/index.ts";
import { abortAfter } from "../../core/abort.ts";
import { createLlmModel, describeLlmError, type LlmConfig, type Usage } from "../../llm/index.ts";
import { storableValue } from "../../webhooks/index.ts";
import { rank } from "../callbacks.ts";
import type { EvidenceDraft } from "../evidence.ts";
import { resultSummaryOf } from "../result-summary.ts";
import { EVIDENCE_KINDS, type InvestigationHypothesis, type InvestigationPriorIncident } from "../schemas.ts";
import type { Conclusion } from "./conclude.ts";
import type { Gathered } from "./gather.ts";
import type { IntegrationFindings } from "./query-integrations.ts";

export const LLM_REVIEW_BOUNDS = {
  maxSteps: 6,
  maxOutputTokens: 1500,
  tokenBudget: 30_000,
  totalTimeoutMs: 90_000,
  maxToolResultChars: 8_000,
};

const SYSTEM = [
  "You investigate one monitoring alert for an on-call engineer.",
  "Call the tools to read what was gathered, then answer with one JSON object and nothing else:",
  '{"verdict": "real_problem" | "alert_is_misconfigured" | "not_enough_information",',
  ' "what_broke": string, "what_to_do": string, "how_we_got_here": [string],',
  ' "hypotheses": [{"statement": string, "confidence": number 0..1, "status": "open" | "confirmed" | "rejected", "rationale": string}],',
  ' "citations": [{"title": string, "url": string, "kind": "dashboard" | "metric" | "log" | "trace" | "runbook" | "alert_rule" | "console" | "code" | "other"}]}',
  "what_to_do is one concrete action on the customer's system. Cite only URLs the tools gave you.",
].join("\n");

export interface LlmReview {
  conclusion: Conclusion;
  citations: EvidenceDraft[];
  /** `triage_metadata.investigator`: `llm:<model>`, or `deterministic` when the model's answer was unusable. */
  investigator: string;
  /** The tokens of the model calls that answered, under the configured model; null when none did. */
  usage: Usage | null;
}

function clip(value: unknown): unknown {
  const json = JSON.stringify(value ?? null);
  return json.length <= LLM_REVIEW_BOUNDS.maxToolResultChars
    ? (value ?? null)
    : { truncated: true, json_prefix: json.slice(0, LLM_REVIEW_BOUNDS.maxToolResultChars) };
}

function parseAnswer(text: string): Record<string, unknown> | null {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return null;
  try {
    const parsed = JSON.parse(text.slice(start, end + 1));
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

const isText = (value: unknown): value is string => typeof value === "string" && value.trim().length > 0;

function hypothesesOf(value: unknown): InvestigationHypothesis[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const items: InvestigationHypothesis[] = [];
  for (const item of value.slice(0, 20)) {
    const { statement, confidence, status, rationale } = (item ?? {}) as Record<string, unknown>;
    if (!isText(statement)) return null;
    if (typeof confidence !== "number" || confidence < 0 || confidence > 1) return null;
    if (status !== "open" && status !== "confirmed" && status !== "rejected") return null;
    items.push({ statement, confidence, status, rationale: isText(rationale) ? rationale : null });
  }
  return rank(items);
}

function citationsOf(value: unknown): EvidenceDraft[] {
  if (!Array.isArray(value)) return [];
  return value.slice(0, 20).flatMap((item): EvidenceDraft[] => {
    const { title, url, kind } = (item ?? {}) as Record<string, unknown>;
    if (!isText(title) || !isText(url) || !URL.canParse(url)) return [];
    if (!["http:", "https:"].includes(new URL(url).protocol)) return [];
    const known = (EVIDENCE_KINDS as readonly unknown[]).includes(kind)
      ? (kind as EvidenceDraft["kind"])
      : "other";
    return [{ kind: known, title: title.slice(0, 300), url, source: "llm" }];
  });
}

export async function reviewWithLlm(input: {
  llm: LlmConfig;
  gathered: Gathered;
  findings: IntegrationFindings;
  prior: InvestigationPriorIncident[];
  deterministic: Conclusion;
  log: Logger;
  signal?: AbortSignal;
}): Promise<LlmReview> {
  const { gathered, findings, prior, deterministic } = input;
  const { model, modelId } = createLlmModel(input.llm);
  const sources: Record<string, { description: string; read: () => unknown }> = {
    read_alert: {
      description: "The alert, its labels, links and history",
      read: () => ({
        alert: gathered.alert,
        history: gathered.history,
        links: gathered.links,
        expression: gathered.expression,
      }),
    },
    read_storm_and_neighbours: {
      description: "Its storm and the alerts near it",
      read: () => ({ storm: gathered.storm, neighbours: gathered.neighbours }),
    },
    read_integration_findings: {
      description: "What Prometheus and Alertmanager answered",
      read: () => findings,
    },
    read_prior_incidents: { description: "Earlier incidents like this one", read: () => prior },
    read_deterministic_conclusion: {
      description: "The rule-based hypotheses and verdict",
      read: () => ({ hypotheses: deterministic.hypotheses, plain_summary: deterministic.rca.plain_summary }),
    },
  };
  // Summed per finished step, so a call that throws after some steps still counts what they spent;
  // the SDK's error carries no usage of its own.
  let promptTokens = 0;
  let completionTokens = 0;
  let answered = 0;
  const usageOf = (): Usage | null =>
    answered === 0 ? null : { model: modelId, promptTokens, completionTokens };
  // The model's failure is kept out of the machine-readable investigator and told as a step.
  const unusable = (why: string): LlmReview => ({
    investigator: "deterministic",
    citations: [],
    usage: usageOf(),
    conclusion: {
      ...deterministic,
      rca: {
        ...deterministic.rca,
        plain_summary: deterministic.rca.plain_summary && {
          ...deterministic.rca.plain_summary,
          how_we_got_here: [
            ...(deterministic.rca.plain_summary.how_we_got_here ?? []),
            `Asked the model ${modelId} for a conclusion: it gave no usable answer (${why}), so this is the rule-based one.`,
          ],
        },
      },
    },
  });
  const seen = new Set<string>();
  const tools: ToolSet = {};
  for (const [name, source] of Object.entries(sources)) {
    tools[name] = tool({
      description: source.description,
      inputSchema: jsonSchema<Record<string, unknown>>({
        type: "object",
        properties: {},
        additionalProperties: true,
      }),
      execute: async (args) => {
        const key = `${name}:${JSON.stringify(args ?? {})}`;
        if (seen.has(key))
          return { refused: `${name} was already called with these arguments; use its earlier answer` };
        seen.add(key);
        return clip(source.read());
      },
    });
  }
  let spent = 0;
  let text: string;
  try {
    const result = await generateText({
      model,
      system: SYSTEM,
      prompt: `Investigate the alert "${gathered.alert.title}" (${gathered.alert.source_type}).`,
      tools,
      maxOutputTokens: LLM_REVIEW_BOUNDS.maxOutputTokens,
      maxRetries: 0,
      abortSignal: abortAfter(LLM_REVIEW_BOUNDS.totalTimeoutMs, input.signal),
      stopWhen: [stepCountIs(LLM_REVIEW_BOUNDS.maxSteps), () => spent >= LLM_REVIEW_BOUNDS.tokenBudget],
      prepareStep: ({ stepNumber }) =>
        stepNumber === LLM_REVIEW_BOUNDS.maxSteps - 1 ? { toolChoice: "none" } : undefined,
      onStepFinish: (step) => {
        answered += 1;
        promptTokens += step.usage.inputTokens ?? 0;
        completionTokens += step.usage.outputTokens ?? 0;
        spent += (step.usage.inputTokens ?? 0) + (step.usage.outputTokens ?? 0);
      },
    });
    text = result.text;
  } catch (err) {
    input.log.warn(
      { err: describeLlmError(err).message },
      "LLM investigation failed; keeping the deterministic conclusion",
    );
    return unusable("the model call failed");
  }
  const answer = parseAnswer(text);
  const hypotheses = answer ? hypothesesOf(answer.hypotheses) : null;
  const verdict = answer?.verdict;
  if (
    !answer ||
    !hypotheses ||
    !(VERDICTS as readonly unknown[]).includes(verdict) ||
    !isText(answer.what_broke) ||
    !isText(answer.what_to_do)
  ) {
    input.log.warn(
      { model: modelId },
      "LLM investigation answered no usable conclusion; keeping the deterministic one",
    );
    return unusable("its answer was not the conclusion asked for");
  }
  const steps = Array.isArray(answer.how_we_got_here)
    ? answer.how_we_got_here.filter(isText).slice(0, 20)
    : [];
  const plain = {
    verdict: verdict as (typeof VERDICTS)[number],
    what_broke: answer.what_broke,
    what_to_do: answer.what_to_do,
    how_we_got_here: steps,
  };
  const top = hypotheses.find((item) => item.status !== "rejected") ?? null;
  // The model's text is stored as it is: U+0000 and unpaired surrogates, which the database refuses
  // (and a cut title may leave), become U+FFFD, as in alert data, so they cannot fail the conclusion.
  return storableValue({
    investigator: `llm:${modelId}`,
    usage: usageOf(),
    citations: citationsOf(answer.citations),
    conclusion: {
      hypotheses,
      resultSummary: resultSummaryOf(plain.verdict, top?.statement ?? plain.what_broke, plain.what_to_do),
      rca: {
        ...deterministic.rca,
        category: categoryFor(plain.verdict, deterministic.rca.category),
        summary: top ? `${top.statement}${top.rationale ? ` (${top.rationale})` : ""}` : plain.what_broke,
        root_cause: top?.statement ?? null,
        remediation: [plain.what_to_do],
        confidence: top?.confidence ?? 0.2,
        plain_summary: plain,
      },
      // The model decides the verdict; the rule fix stays the deterministic one, when both agree.
      fix: plain.verdict === "alert_is_misconfigured" ? deterministic.fix : null,
    },
  });
}

/**
 * The RCA's category under the model's verdict: a misconfigured alert is the alert rule's fault,
 * as a reported conclusion has it; otherwise the rules' category, unless it blamed the alert rule
 * the model did not.
 */
function categoryFor(verdict: string, rules: Conclusion["rca"]["category"]): Conclusion["rca"]["category"] {
  if (verdict === "alert_is_misconfigured") return "alert_rule";
  return rules === "alert_rule" ? "unknown" : rules;
}
