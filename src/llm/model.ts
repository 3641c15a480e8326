// The model behind every LLM feature: an OpenAI-compatible chat completions endpoint (OpenAI,
// vLLM, Ollama, LiteLLM, ...) configured by LLM_BASE_URL, LLM_MODEL and LLM_API_KEY, reached
// through the Vercel AI SDK. Without that configuration there is no model and callers get
// LlmNotConfiguredError; the deterministic built-ins do the work instead.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, type LanguageModel, RetryError } from "ai";
import type { Config } from "../config.ts";
import { abortAfter } from "../core/abort.ts";

export type LlmConfig = NonNullable<Config["llm"]>;

/** Default bound on one HTTP request to the endpoint (one model call, not a whole tool loop). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export class LlmNotConfiguredError extends Error {
  constructor() {
    super("no LLM configured (set LLM_BASE_URL and LLM_MODEL)");
    this.name = "LlmNotConfiguredError";
  }
}

export interface ModelOptions {
  /** A model name other than LLM_MODEL, served by the same endpoint (an agent's own `model`). */
  modelId?: string | null;
  /** Each HTTP request is aborted after this long, whatever the caller's own signal says. */
  requestTimeoutMs?: number;
}

export interface LlmModel {
  model: LanguageModel;
  /** The model name sent to the endpoint; usage is priced under it. */
  modelId: string;
}

export function createLlmModel(llm: LlmConfig | null, options: ModelOptions = {}): LlmModel {
  if (!llm) throw new LlmNotConfiguredError();
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const provider = createOpenAICompatible({
    name: "llm",
    baseURL: llm.baseUrl.replace(/\/+$/, ""),
    apiKey: llm.apiKey ?? undefined,
    fetch: (input, init) => {
      return fetch(input, { ...init, signal: abortAfter(timeoutMs, init?.signal) });
    },
  });
  const modelId = options.modelId?.trim() || llm.model;
  return { model: provider.chatModel(modelId), modelId };
}

/**
 * What went wrong in a model call, in one line, and whether trying again may help: the endpoint's
 * 5xx, 408, 409 and 429 answers, timeouts and network failures may; other 4xx answers (a wrong key,
 * an unknown model) and anything else do not.
 */
export function describeLlmError(err: unknown, timeoutMs?: number): { message: string; retryable: boolean } {
  const error = RetryError.isInstance(err) && err.lastError !== undefined ? err.lastError : err;
  if (APICallError.isInstance(error)) {
    const status = error.statusCode === undefined ? "" : ` answered ${error.statusCode}`;
    const body = error.responseBody ? `: ${error.responseBody.slice(0, 200)}` : "";
    const detail = status ? `${status}${body}` : `: ${error.message}`;
    return { message: `the model endpoint${detail}`, retryable: error.isRetryable };
  }
  const name = (error as Error | null)?.name;
  if (name === "TimeoutError" || name === "AbortError") {
    const within = timeoutMs === undefined ? "in time" : `within ${timeoutMs} ms`;
    return { message: `the model endpoint gave no answer ${within}`, retryable: true };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { message: `the model call failed: ${message}`, retryable: false };
}
