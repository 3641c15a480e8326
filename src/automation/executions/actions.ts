// The built-in actions: what a stage with `action_type` runs, and the tools agents may call. Each
// takes its settings (the stage's `config`, templated over the run's context) and returns an output
// the next stages can read. They never throw anything but StepError.
import jsonata from "jsonata";
import type { Ctx } from "../../core/context.ts";
import { type OutboundError, type OutboundResponse, outboundRequest } from "../../core/http/outbound.ts";
import type { Usage } from "../../llm/index.ts";
import type { ActionType, StructuredOutput } from "../schemas.ts";
import { ARTIFACT_MAX_BYTES, type ArtifactDraft } from "../sessions/artifacts.ts";
import { asText, renderText, renderValue } from "./template.ts";

/** A step's failure. `retryable` failures are tried again (pg-boss retry); others fail at once. */
export class StepError extends Error {
  readonly retryable: boolean;
  /**
   * The model calls the failed step paid for all the same (an llm agent's calls that answered
   * before the failure): recorded on its node and in the run's tokens and cost, as a success's are.
   */
  readonly usage: Usage | null;
  constructor(message: string, retryable: boolean, usage: Usage | null = null) {
    super(message);
    this.name = "StepError";
    this.retryable = retryable;
    this.usage = usage;
  }
}

export interface ActionOutcome {
  output: unknown;
  /** Stored with the step's completion, so they exist if and only if the step completed. */
  artifacts: ArtifactDraft[];
  structuredOutput: StructuredOutput | null;
  /**
   * The model calls the step paid for (a registered action that asks a model): recorded on its node
   * and added to the run's tokens and cost, as an agent's are. Built-in actions use no model.
   */
  usage?: Usage | null;
}

/** What an action reads: the settings of the run's Ctx it needs, the run's data and its stop signal. */
export interface ActionEnv {
  config: Pick<Ctx["config"], "automationHttpAllowedHosts" | "host" | "port" | "databaseUrl">;
  /** The run's context: { input, stages: { <id>: { output } }, execution, agent? }. */
  context: Record<string, unknown>;
  /** Aborts when the run stops (cancelled): an http_request under way is dropped. */
  signal?: AbortSignal;
}

/** Bodies kept from an http_request response; the rest is dropped and `truncated` set. */
export const HTTP_RESPONSE_MAX_BYTES = 64 * 1024;
export const HTTP_DEFAULT_TIMEOUT_MS = 10_000;
export const HTTP_MAX_TIMEOUT_MS = 60_000;
export const JSON_TRANSFORM_TIMEOUT_MS = 1_000;
const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];
const REPORT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const DEFAULT_REPORT_TEMPLATE = [
  "# {{report.title}}",
  "",
  "## Summary",
  "",
  "{{report.summary}}",
  "",
  "## Impact",
  "",
  "{{report.impact}}",
  "",
  "## Recommendations",
  "",
  "{{report.recommendations}}",
  "",
  "Confidence: {{report.confidence}}",
  "",
].join("\n");

function invalid(action: string, message: string): StepError {
  return new StepError(`${action}: ${message}`, false);
}

function optionalString(action: string, settings: Record<string, unknown>, field: string): string | null {
  const value = settings[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalid(action, `${field} must be a string`);
  return value;
}

export async function runAction(
  type: ActionType,
  rawSettings: Record<string, unknown>,
  env: ActionEnv,
): Promise<ActionOutcome> {
  if (type === "http_request") return httpRequest(renderValue(rawSettings, env.context), env);
  if (type === "json_transform") return jsonTransform(rawSettings, env);
  return writeReport(rawSettings, env);
}

/**
 * settings: method (default GET), url, headers, body (a string is sent as is, anything else as
 * JSON), timeout_ms (default 10000, at most 60000). Only hosts on AUTOMATION_HTTP_ALLOWED_HOSTS,
 * under the outbound rules (core/http/outbound.ts); redirects are not followed. 5xx, 408, 429,
 * timeouts and network errors are retried; other statuses and refused hosts fail at once.
 */
async function httpRequest(rendered: unknown, env: ActionEnv): Promise<ActionOutcome> {
  const action = "http_request";
  if (rendered === null || typeof rendered !== "object" || Array.isArray(rendered)) {
    throw invalid(action, "settings must be an object");
  }
  const settings = rendered as Record<string, unknown>;
  const method = (optionalString(action, settings, "method") ?? "GET").toUpperCase();
  if (!HTTP_METHODS.includes(method))
    throw invalid(action, `method must be one of ${HTTP_METHODS.join(", ")}`);
  const rawUrl = optionalString(action, settings, "url");
  if (!rawUrl) throw invalid(action, "url is required");
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw invalid(action, `url ${rawUrl} is not a valid URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw invalid(action, "url must be http(s)");
  const timeoutMs = settings.timeout_ms ?? HTTP_DEFAULT_TIMEOUT_MS;
  if (
    typeof timeoutMs !== "number" ||
    !Number.isInteger(timeoutMs) ||
    timeoutMs < 1 ||
    timeoutMs > HTTP_MAX_TIMEOUT_MS
  ) {
    throw invalid(action, `timeout_ms must be an integer from 1 to ${HTTP_MAX_TIMEOUT_MS}`);
  }
  const headers = new Headers();
  const givenHeaders = settings.headers ?? {};
  if (givenHeaders === null || typeof givenHeaders !== "object" || Array.isArray(givenHeaders)) {
    throw invalid(action, "headers must be an object of strings");
  }
  for (const [name, value] of Object.entries(givenHeaders)) headers.set(name, asText(value));
  let body: string | undefined;
  if (settings.body !== undefined && settings.body !== null && method !== "GET" && method !== "HEAD") {
    if (typeof settings.body === "string") body = settings.body;
    else {
      body = JSON.stringify(settings.body);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
  }
  const target = `${method} ${url.origin}${url.pathname}`;
  let response: OutboundResponse;
  try {
    response = await outboundRequest(
      {
        allowedHosts: env.config.automationHttpAllowedHosts,
        allowedHostsSetting: "AUTOMATION_HTTP_ALLOWED_HOSTS",
        config: env.config,
      },
      {
        url,
        method,
        headers: Object.fromEntries(headers),
        body,
        timeoutMs,
        maxResponseBytes: HTTP_RESPONSE_MAX_BYTES,
        oversize: "truncate",
        signal: env.signal,
      },
    );
  } catch (err) {
    const error = err as OutboundError;
    // A refused host or a request that cannot be sent fails the same way on every attempt.
    if (error.kind === "refused" || error.kind === "invalid") throw invalid(action, error.message);
    throw new StepError(`${action}: ${target} failed: ${error.message}`, true);
  }
  const { truncated } = response;
  const text = response.body.toString("utf8");
  // The failure names the start of the answer's body: the same body, answered 2xx, would be the
  // step's output, so the run's reader learns nothing more from it.
  if (response.status < 200 || response.status > 299) {
    const retryable = response.status >= 500 || response.status === 408 || response.status === 429;
    throw new StepError(`${action}: ${target} answered ${response.status}: ${text.slice(0, 200)}`, retryable);
  }
  const contentType = response.headers["content-type"] ?? "";
  let parsed: unknown = text;
  if (!truncated && /\bjson\b/i.test(contentType) && text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
  }
  return {
    output: { status: response.status, content_type: contentType || null, body: parsed, truncated },
    artifacts: [],
    structuredOutput: null,
  };
}

/**
 * settings: expression, a JSONata expression evaluated over the run's context (so `input.service`,
 * `stages.fetch.output.body.items[status = "firing"]`). Bounded to 1 s and a stack depth of 500.
 */
async function jsonTransform(settings: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const action = "json_transform";
  const expression = optionalString(action, settings, "expression");
  if (!expression) throw invalid(action, "expression is required");
  let result: unknown;
  try {
    const compiled = jsonata(expression, { timeout: JSON_TRANSFORM_TIMEOUT_MS, stack: 500 });
    result = await compiled.evaluate(env.context);
  } catch (err) {
    const { message, position } = err as { message?: string; position?: number };
    throw invalid(action, `${message ?? String(err)}${position === undefined ? "" : ` (at ${position})`}`);
  }
  // JSONata sequences carry a marker property; a JSON round trip keeps plain data only.
  const output = result === undefined ? null : JSON.parse(JSON.stringify(result));
  return { output, artifacts: [], structuredOutput: null };
}

/**
 * settings: name (file name, default report.md), title, summary, impact, recommendations,
 * confidence (each a template) and template (Markdown, default DEFAULT_REPORT_TEMPLATE), rendered
 * over the context plus `report` (the rendered fields). Stores the Markdown as a session artifact
 * and sets the run's structured_output.
 */
async function writeReport(settings: Record<string, unknown>, env: ActionEnv): Promise<ActionOutcome> {
  const action = "write_report";
  const name = optionalString(action, settings, "name") ?? "report.md";
  if (!REPORT_NAME.test(name)) throw invalid(action, "name must be a file name (letters, digits, . _ -)");
  const field = (key: string) => renderText(optionalString(action, settings, key) ?? "", env.context);
  const report = {
    title: field("title") || "Report",
    summary: field("summary"),
    impact: field("impact"),
    recommendations: field("recommendations"),
    confidence: field("confidence"),
  };
  const template = optionalString(action, settings, "template") ?? DEFAULT_REPORT_TEMPLATE;
  const markdown = renderText(template, { ...env.context, report });
  const content = Buffer.from(markdown, "utf8");
  if (content.byteLength > ARTIFACT_MAX_BYTES) {
    throw invalid(action, `the report is ${content.byteLength} bytes, more than ${ARTIFACT_MAX_BYTES}`);
  }
  const structuredOutput: StructuredOutput = {
    summary: report.summary,
    impact: report.impact,
    recommendations: report.recommendations,
    confidence: report.confidence,
  };
  return {
    output: { artifact: name, size_bytes: content.byteLength, structured_output: structuredOutput },
    artifacts: [{ name, mimeType: "text/markdown; charset=utf-8", content }],
    structuredOutput,
  };
}
