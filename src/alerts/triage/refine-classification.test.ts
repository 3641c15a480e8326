// The LLM second opinion on an alert's classification, against a loopback OpenAI-compatible stub:
// a valid answer is returned validated; anything else (bad JSON, a value outside the schema, an
// error status, a timeout, no LLM configured) gives null.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAiStub, startOpenAiStub } from "../../../test/openai-stub.ts";
import type { LlmConfig } from "../../llm/index.ts";
import { type RefineClassificationInput, refineClassification } from "./refine-classification.ts";

let stub: OpenAiStub;
let llm: LlmConfig;
beforeAll(async () => {
  stub = await startOpenAiStub();
  llm = { baseUrl: stub.baseUrl, model: "gpt-4o-mini", apiKey: "sk-test-llm-key" };
});
afterAll(async () => {
  await stub.close();
});

const input: RefineClassificationInput = {
  alert: {
    title: "PostgreSQL primary down",
    severity: "Critical",
    labels: { env: "production", service: "orders-db" },
    alert_role: "cause",
  },
  classification: {
    attention: "needs_review",
    attentionReason: "Critical in an unknown environment",
    shortSummary: "PostgreSQL primary down: needs review",
  },
};

const answer = (value: unknown) => ({
  content: typeof value === "string" ? value : JSON.stringify(value),
  usage: { prompt_tokens: 120, completion_tokens: 30 },
});

describe("refineClassification", () => {
  it("returns the model's validated refinement and sends a well-formed request", async () => {
    stub.script([
      answer({
        attention: "needs_attention",
        attention_reason: "  the production database primary is down ",
        short_summary: "orders-db primary down in production",
      }),
    ]);
    const refined = await refineClassification(llm, input);
    expect(refined).toEqual({
      attention: "needs_attention",
      attentionReason: "the production database primary is down",
      shortSummary: "orders-db primary down in production",
      usage: { model: "gpt-4o-mini", promptTokens: 120, completionTokens: 30 },
    });
    expect(stub.requests).toHaveLength(1);
    const [request] = stub.requests;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe("Bearer sk-test-llm-key");
    const body = request?.body;
    expect(body).toMatchObject({
      model: "gpt-4o-mini",
      max_tokens: 400,
      response_format: { type: "json_object" },
    });
    expect(body?.messages.map((message) => message.role)).toEqual(["system", "user"]);
    expect(String(body?.messages[0]?.content)).toContain('"needs_attention", "needs_review"');
    const user = JSON.parse(String(body?.messages[1]?.content));
    expect(user).toEqual({
      alert: input.alert,
      deterministic_classification: {
        attention: "needs_review",
        attention_reason: "Critical in an unknown environment",
        short_summary: "PostgreSQL primary down: needs review",
      },
    });
  });

  it("accepts an answer wrapped in a Markdown fence", async () => {
    const object = { attention: "others", attention_reason: "a symptom", short_summary: "latency" };
    stub.script([answer(`\`\`\`json\n${JSON.stringify(object)}\n\`\`\``)]);
    expect(await refineClassification(llm, input)).toMatchObject({
      attention: "others",
      attentionReason: "a symptom",
    });
  });

  it("gives null for an answer that is not JSON or breaks the schema", async () => {
    const invalid = [
      "I think this alert needs attention.",
      '{"attention": "needs_attention", "attention_reason": "x"',
      { attention: "urgent", attention_reason: "x", short_summary: "y" },
      { attention: "needs_attention", attention_reason: "", short_summary: "y" },
      { attention: "needs_attention", attention_reason: "x", short_summary: "y".repeat(301) },
      { attention: "needs_attention", attention_reason: "x" },
      { attention: "needs_attention", attention_reason: "x", short_summary: "y", extra: 1 },
      ["needs_attention"],
    ];
    for (const value of invalid) {
      stub.script([answer(value)]);
      expect(await refineClassification(llm, input), JSON.stringify(value)).toBeNull();
      expect(stub.requests).toHaveLength(1);
    }
  });

  it("gives null on an error status, without retrying", async () => {
    stub.script([{ status: 500, body: { error: { message: "overloaded" } } }]);
    expect(await refineClassification(llm, input)).toBeNull();
    expect(stub.requests).toHaveLength(1);
    stub.script([{ status: 401, body: { error: { message: "bad key" } } }]);
    expect(await refineClassification(llm, input)).toBeNull();
  });

  it("gives null when the model does not answer in time", async () => {
    stub.script([
      { ...answer({ attention: "others", attention_reason: "x", short_summary: "y" }), delayMs: 2_000 },
    ]);
    const started = Date.now();
    expect(await refineClassification(llm, input, { timeoutMs: 200 })).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("gives null when the caller aborts", async () => {
    stub.script([
      { ...answer({ attention: "others", attention_reason: "x", short_summary: "y" }), delayMs: 2_000 },
    ]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(await refineClassification(llm, input, { signal: controller.signal })).toBeNull();
  });

  it("gives null with no LLM configured, without any request", async () => {
    stub.script([]);
    expect(await refineClassification(null, input)).toBeNull();
    expect(stub.requests).toHaveLength(0);
  });
});
