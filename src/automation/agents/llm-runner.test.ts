// The `llm` agent runner end to end on the real queue, against a loopback server speaking the
// OpenAI chat completions protocol: a tool call then a final answer (trace nodes, output, usage and
// cost, the tool result sent back to the model), a failing tool reported to the model, the
// max_steps and token bounds, endpoint errors (5xx retried then error, 401 at once), the tokens of
// every call that answered counted whatever became of its attempt (failed, retried, over budget),
// and the clear error with no LLM configured.
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  call,
  createApprovedWorkflow,
  type Loopback,
  type Owner,
  registerAgent,
  settledTrace,
  startAs,
  startLoopback,
  uniqueName,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import {
  type ChatRequestBody,
  chatBodies,
  concurrencyGate,
  type OpenAiStub,
  startOpenAiStub,
} from "../../../test/openai-stub.ts";
import { createRunStageJob, watchExecutionJob } from "../executions/jobs.ts";
import { executionNodes } from "../tables.ts";
import { LLM_RUNNER_DEFAULTS } from "./llm-runner.ts";

const RETRY_LIMIT = 2;
const jobs = [
  createRunStageJob({ retryLimit: RETRY_LIMIT, retryDelaySeconds: 1, retryBackoff: false }),
  watchExecutionJob,
];
const LLM_API_KEY = "sk-vigil-test";
const DEFAULT_MODEL = "local-model";

// The stub must be listening before the harness config (which names its URL) is built.
const stub: OpenAiStub = await startOpenAiStub();
let loopback: Loopback;
beforeAll(async () => {
  loopback = await startLoopback();
});
afterAll(async () => {
  await loopback.close();
  await stub.close();
});

const nodeSummary = (body: { nodes: { id: string; state: string; error: string | null }[] }) =>
  body.nodes.map((node) => [node.id, node.state, node.error]);

async function stageOutput(h: Harness, traceId: string, stageId: string) {
  const [row] = await h.vigil.services.database.db
    .select({ output: executionNodes.output })
    .from(executionNodes)
    .where(and(eq(executionNodes.traceId, traceId), eq(executionNodes.key, `stage:${stageId}`)));
  return row?.output;
}

const toolMessages = (body: ChatRequestBody | undefined) =>
  (body?.messages ?? []).filter((message) => message.role === "tool");

/** The usage of a gpt-4o agent run alone: its tokens, and their price (USD) the test works out. */
interface ExpectedUsage {
  prompt: number;
  completion: number;
  cost: number;
}

/**
 * The run's model usage wherever it is told: on the agent's node alone (the stage node reads 0), in
 * the run's total_cost, and in its session's cost (token totals, by run and by model).
 */
async function expectAgentRunCost(
  h: Harness,
  me: Owner,
  run: { traceId: string; sessionId: string },
  trace: { execution: { total_cost: number }; nodes: { id: string; cost: number }[] },
  agent: string,
  expected: ExpectedUsage,
) {
  const cost = expect.closeTo(expected.cost, 12);
  expect(trace.nodes.filter((node) => node.cost !== 0).map((node) => [node.id, node.cost])).toEqual([
    [`stage:${agent}/agent:${agent}`, cost],
  ]);
  expect(trace.execution.total_cost).toEqual(cost);
  const session = await call(h, me.auth, "GET", `/platform/api/v1/sessions/${run.sessionId}`);
  expect(session.statusCode, session.body).toBe(200);
  expect(session.json().cost).toEqual({
    total_cost: cost,
    prompt_tokens: expected.prompt,
    completion_tokens: expected.completion,
    by_execution: [{ trace_id: run.traceId, target_name: agent, total_cost: cost }],
    by_model: [
      { model: "gpt-4o", prompt_tokens: expected.prompt, completion_tokens: expected.completion, cost },
    ],
  });
}

describeEachEngine(
  "llm agent runner",
  (harness) => {
    const owner = (): Promise<Owner> => harness().createKey();

    it("runs a workflow stage through a tool call and a final answer, traced and priced", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("investigator");
      await registerAgent(h, me.auth, {
        name: agent,
        kind: "llm",
        model: "gpt-4o-mini",
        instructions: "Investigate {{input.service}}. Answer in JSON.",
        tools: ["http_request"],
        max_steps: 4,
      });
      const workflow = uniqueName("llm-flow");
      await createApprovedWorkflow(h, me.auth, {
        name: workflow,
        inputs: [{ name: "service", required: true }],
        stages: [
          {
            id: "investigate",
            agent_ref: agent,
            // Defaults for the tool's settings; the model's arguments override them.
            config: { http_request: { method: "GET", url: "http://example.com/ignored", timeout_ms: 5_000 } },
          },
        ],
      });
      const final = { summary: "checkout has 2 firing alerts", confidence: "high" };
      stub.script([
        {
          toolCalls: [
            {
              id: "call_fetch",
              name: "http_request",
              arguments: { method: "POST", url: `${loopback.url}/ok`, body: { service: "checkout" } },
            },
          ],
          usage: { prompt_tokens: 400, completion_tokens: 20 },
        },
        { content: JSON.stringify(final), usage: { prompt_tokens: 600, completion_tokens: 80 } },
      ]);
      const started = await startAs(h, me, {
        target: { type: "workflow", name: workflow },
        input: { service: "checkout" },
      });
      const body = await settledTrace(h, me.auth, started.traceId);

      // gpt-4o-mini: 1000 prompt tokens * 0.00015 / 1K + 100 completion tokens * 0.0006 / 1K
      const cost = 0.00021;
      expect(body.execution).toMatchObject({ status: "completed", total_cost: cost, error: null });
      const agentKey = `stage:investigate/agent:${agent}`;
      expect(body.nodes).toEqual([
        expect.objectContaining({ id: "stage:investigate", type: "stage", state: "success" }),
        expect.objectContaining({ id: agentKey, type: "agent", label: agent, state: "success", cost }),
        expect.objectContaining({
          id: `${agentKey}/tool:1:http_request`,
          type: "tool",
          label: "http_request",
          state: "success",
          cost: 0,
        }),
      ]);
      expect(body.edges).toContainEqual({ source: agentKey, target: `${agentKey}/tool:1:http_request` });
      expect(body.structured_output.summary).toBe(JSON.stringify(final));
      expect(await stageOutput(h, started.traceId, "investigate")).toEqual({
        agent,
        model: "gpt-4o-mini",
        text: JSON.stringify(final),
        json: final,
        steps: 2,
        tool_calls: 1,
        finish_reason: "stop",
      });
      const [agentRow] = await h.vigil.services.database.db
        .select({
          model: executionNodes.model,
          promptTokens: executionNodes.promptTokens,
          completionTokens: executionNodes.completionTokens,
        })
        .from(executionNodes)
        .where(and(eq(executionNodes.traceId, started.traceId), eq(executionNodes.key, agentKey)));
      expect(agentRow).toEqual({ model: "gpt-4o-mini", promptTokens: 1000, completionTokens: 100 });
      // The tool really ran, with the model's arguments over the stage's defaults.
      expect(loopback.bodies).toContain(JSON.stringify({ service: "checkout" }));

      const [first, second] = chatBodies(stub);
      expect(chatBodies(stub)).toHaveLength(2);
      for (const request of stub.requests)
        expect(request.headers.authorization).toBe(`Bearer ${LLM_API_KEY}`);
      expect(first).toMatchObject({ model: "gpt-4o-mini", max_tokens: LLM_RUNNER_DEFAULTS.maxOutputTokens });
      expect(first?.messages.map((message) => message.role)).toEqual(["system", "user"]);
      expect(String(first?.messages[0]?.content)).toContain("Investigate checkout. Answer in JSON.");
      const context = JSON.parse(String(first?.messages[1]?.content));
      expect(context).toMatchObject({
        input: { service: "checkout" },
        stages: {},
        execution: { trace_id: started.traceId, target_type: "workflow", target_name: workflow },
        config: { http_request: { timeout_ms: 5_000 } },
      });
      expect(first?.tools?.map((item) => item.function.name)).toEqual(["http_request"]);
      expect(first?.tools?.[0]?.function.parameters).toMatchObject({
        properties: { url: { type: "string" } },
      });
      // The follow-up carries the assistant's tool call and the tool's result.
      expect(second?.messages.map((message) => message.role)).toEqual([
        "system",
        "user",
        "assistant",
        "tool",
      ]);
      expect(second?.messages[2]?.tool_calls?.[0]).toMatchObject({
        id: "call_fetch",
        function: { name: "http_request" },
      });
      const [result] = toolMessages(second);
      expect(result?.tool_call_id).toBe("call_fetch");
      expect(JSON.parse(String(result?.content))).toEqual({
        status: 200,
        content_type: "application/json",
        body: { status: "firing", count: 2, echo: { service: "checkout" } },
        truncated: false,
      });
    });

    it("reports a failing tool call to the model, which can still answer", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("careful");
      await registerAgent(h, me.auth, { name: agent, kind: "llm", tools: ["http_request"] });
      stub.script([
        { toolCalls: [{ id: "call_x", name: "http_request", arguments: { url: "http://example.com/x" } }] },
        { content: "example.com is not reachable from Vigil; nothing to report." },
      ]);
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = "http_request: host example.com is not on AUTOMATION_HTTP_ALLOWED_HOSTS";
      expect(body.execution).toMatchObject({ status: "completed", total_cost: 0 });
      expect(nodeSummary(body)).toEqual([
        [`stage:${agent}`, "success", null],
        [`stage:${agent}/agent:${agent}`, "success", null],
        [`stage:${agent}/agent:${agent}/tool:1:http_request`, "error", reason],
      ]);
      const [, second] = chatBodies(stub);
      // No agent model: LLM_MODEL, which the price table does not know (cost 0).
      expect(second?.model).toBe(DEFAULT_MODEL);
      expect(String(toolMessages(second)[0]?.content)).toContain(reason);
      expect(await stageOutput(h, started.traceId, agent)).toMatchObject({
        text: "example.com is not reachable from Vigil; nothing to report.",
        json: null,
        tool_calls: 1,
      });
    });

    it("bounds a model that keeps calling tools by max_steps, failing the node clearly", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("looper");
      await registerAgent(h, me.auth, { name: agent, kind: "llm", tools: ["json_transform"], max_steps: 3 });
      stub.script([], { toolCalls: [{ name: "json_transform", arguments: { expression: "1 + 1" } }] });
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = `agent ${agent}: no final answer: the model was still calling tools after 3 of 3 steps (max_steps)`;
      expect(body.execution).toMatchObject({ status: "error", error: `stage ${agent} failed: ${reason}` });
      const agentKey = `stage:${agent}/agent:${agent}`;
      expect(nodeSummary(body)).toEqual([
        [`stage:${agent}`, "error", reason],
        [agentKey, "error", reason],
        [`${agentKey}/tool:1:json_transform`, "success", null],
        [`${agentKey}/tool:2:json_transform`, "success", null],
        [`${agentKey}/tool:3:json_transform`, "success", null],
      ]);
      // Not retried: three model calls in all; the last one was told not to call tools.
      const bodies = chatBodies(stub);
      expect(bodies).toHaveLength(3);
      expect(bodies.map((request) => request.tool_choice)).toEqual(["auto", "auto", "none"]);
    });

    it("stops at once when the run is cancelled during a tool call, without another model call", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("patient");
      await registerAgent(h, me.auth, { name: agent, kind: "llm", tools: ["http_request"] });
      stub.script([
        {
          toolCalls: [
            { name: "http_request", arguments: { url: `${loopback.url}/slow`, timeout_ms: 60_000 } },
          ],
        },
        { content: "should never be asked for" },
      ]);
      const before = loopback.hits.get("/slow") ?? 0;
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      await waitFor(async () => ((loopback.hits.get("/slow") ?? 0) > before ? true : undefined));
      const terminate = await call(
        h,
        me.auth,
        "POST",
        `/platform/api/v1/sessions/${started.sessionId}/terminate`,
      );
      expect(terminate.json()).toEqual({ cancelled_workflows: 1 });
      const cancelled = await settledTrace(h, me.auth, started.traceId);
      expect(cancelled.execution).toMatchObject({ status: "error", cancelled: true });

      // The tool call is dropped; the agent stops instead of asking the model again.
      await loopback.dropped;
      const [stage] = await h.vigil.services.database.db
        .select({ jobId: executionNodes.jobId })
        .from(executionNodes)
        .where(and(eq(executionNodes.traceId, started.traceId), eq(executionNodes.key, `stage:${agent}`)));
      await waitFor(async () => {
        const { rows } = await h.vigil.services.database.db.execute(
          sql`select state::text as state from pgboss.job where id = ${stage?.jobId ?? null}`,
        );
        return rows[0]?.state === "completed" ? true : undefined;
      });
      expect(chatBodies(stub)).toHaveLength(1);
      const after = await settledTrace(h, me.auth, started.traceId);
      expect(nodeSummary(after)).toEqual(nodeSummary(cancelled));
    });

    it("drops the model call under way when the run is cancelled", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("pondering");
      await registerAgent(h, me.auth, { name: agent, kind: "llm", tools: [] });
      // The model would answer only after the test's own time limit.
      stub.script([{ content: "too late", delayMs: 60_000 }]);
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      await waitFor(async () => (stub.requests.length > 0 ? true : undefined));
      const terminate = await call(
        h,
        me.auth,
        "POST",
        `/platform/api/v1/sessions/${started.sessionId}/terminate`,
      );
      expect(terminate.json()).toEqual({ cancelled_workflows: 1 });
      await waitFor(async () => (stub.requests[0]?.dropped ? true : undefined));
      const cancelled = await settledTrace(h, me.auth, started.traceId);
      expect(cancelled.execution).toMatchObject({ status: "error", cancelled: true });
      expect(stub.requests).toHaveLength(1);
    });

    it("runs the stages of several runs at once: a slow model answer holds no other run", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("parallel");
      await registerAgent(h, me.auth, { name: agent, kind: "llm", tools: [] });
      // Each answer is held until every run's model call is in flight.
      const runs = 4;
      const gate = concurrencyGate(runs);
      stub.script([], () => gate.reply("done"));
      const started = await Promise.all(
        Array.from({ length: runs }, () => startAs(h, me, { target: { type: "agent", name: agent } })),
      );
      for (const run of started) {
        const settled = await settledTrace(h, me.auth, run.traceId);
        expect(settled.execution.status).toBe("completed");
      }
      expect(gate.gaveUp).toBe(false);
    });

    it("stops at the token budget, counting the tokens that spent it", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("spender");
      await registerAgent(h, me.auth, {
        name: agent,
        kind: "llm",
        model: "gpt-4o",
        tools: ["json_transform"],
      });
      const budget = LLM_RUNNER_DEFAULTS.tokenBudget;
      stub.script([
        {
          toolCalls: [{ name: "json_transform", arguments: { expression: "1" } }],
          usage: { prompt_tokens: budget - 10, completion_tokens: 20 },
        },
      ]);
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = `agent ${agent}: no final answer: the token budget of ${budget} was spent (${budget + 10} tokens)`;
      expect(body.execution).toMatchObject({ status: "error", error: `stage ${agent} failed: ${reason}` });
      expect(chatBodies(stub)).toHaveLength(1);
      // gpt-4o: 99,990 prompt tokens * 0.0025 / 1K + 20 completion tokens * 0.01 / 1K
      await expectAgentRunCost(h, me, started, body, agent, {
        prompt: budget - 10,
        completion: 20,
        cost: 0.250175,
      });
    });

    it("counts the calls that answered before the endpoint refused the next one (400)", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("refused");
      await registerAgent(h, me.auth, {
        name: agent,
        kind: "llm",
        model: "gpt-4o",
        tools: ["json_transform"],
      });
      const refusal = { error: { message: "the context is too long", type: "invalid_request_error" } };
      stub.script([
        {
          toolCalls: [{ name: "json_transform", arguments: { expression: "1 + 1" } }],
          usage: { prompt_tokens: 5_000, completion_tokens: 1_000 },
        },
        { status: 400, body: refusal },
      ]);
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = `agent ${agent}: the model endpoint answered 400: ${JSON.stringify(refusal)}`;
      expect(body.execution).toMatchObject({ status: "error", error: `stage ${agent} failed: ${reason}` });
      expect(nodeSummary(body)).toEqual([
        [`stage:${agent}`, "error", reason],
        [`stage:${agent}/agent:${agent}`, "error", reason],
        [`stage:${agent}/agent:${agent}/tool:1:json_transform`, "success", null],
      ]);
      // Not retried: the 400 is the endpoint's refusal.
      expect(chatBodies(stub)).toHaveLength(2);
      // gpt-4o: 5,000 prompt tokens * 0.0025 / 1K + 1,000 completion tokens * 0.01 / 1K
      await expectAgentRunCost(h, me, started, body, agent, {
        prompt: 5_000,
        completion: 1_000,
        cost: 0.0225,
      });
    });

    it("counts each attempt's answered calls once when the stage is retried", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("persistent");
      await registerAgent(h, me.auth, {
        name: agent,
        kind: "llm",
        model: "gpt-4o",
        tools: ["json_transform"],
      });
      // Attempts 1 and 2: a tool call answered, then the endpoint fails (500, retried); attempt 3 answers.
      const answeredThenFailed = [
        {
          toolCalls: [{ name: "json_transform", arguments: { expression: "1 + 1" } }],
          usage: { prompt_tokens: 5_000, completion_tokens: 1_000 },
        },
        { status: 500, body: { error: { message: "overloaded", type: "server_error" } } },
      ];
      stub.script([
        ...answeredThenFailed,
        ...answeredThenFailed,
        { content: "all good", usage: { prompt_tokens: 1_000, completion_tokens: 100 } },
      ]);
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      expect(body.execution).toMatchObject({ status: "completed", error: null });
      expect(body.nodes).toContainEqual(
        expect.objectContaining({ id: `stage:${agent}/agent:${agent}`, state: "success", attempt: 3 }),
      );
      expect(chatBodies(stub)).toHaveLength(5);
      // gpt-4o: 11,000 prompt tokens * 0.0025 / 1K + 2,100 completion tokens * 0.01 / 1K
      await expectAgentRunCost(h, me, started, body, agent, {
        prompt: 11_000,
        completion: 2_100,
        cost: 0.0485,
      });
    });

    it("retries a stage whose model endpoint answers 500, then fails the node with the reason", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("unlucky");
      await registerAgent(h, me.auth, { name: agent, kind: "llm" });
      const failure = { error: { message: "overloaded", type: "server_error" } };
      stub.script([], { status: 500, body: failure });
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = `agent ${agent}: the model endpoint answered 500: ${JSON.stringify(failure)}`;
      expect(body.execution).toMatchObject({ status: "error", error: `stage ${agent} failed: ${reason}` });
      expect(body.nodes).toEqual([
        expect.objectContaining({
          id: `stage:${agent}`,
          state: "error",
          attempt: RETRY_LIMIT + 1,
          error: reason,
        }),
        expect.objectContaining({
          id: `stage:${agent}/agent:${agent}`,
          state: "error",
          attempt: RETRY_LIMIT + 1,
          error: reason,
        }),
      ]);
      expect(chatBodies(stub)).toHaveLength(RETRY_LIMIT + 1);
    });

    it("fails at once when the endpoint refuses the key (401)", async () => {
      const h = harness();
      const me = await owner();
      const agent = uniqueName("locked-out");
      await registerAgent(h, me.auth, { name: agent, kind: "llm" });
      stub.script([], { status: 401, body: { error: { message: "invalid api key" } } });
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      expect(body.execution.status).toBe("error");
      expect(body.nodes[0]).toMatchObject({ attempt: 1, error: expect.stringContaining("answered 401") });
      expect(chatBodies(stub)).toHaveLength(1);
    });
  },
  { llm: { baseUrl: stub.baseUrl, model: DEFAULT_MODEL, apiKey: LLM_API_KEY } },
  { jobs },
);

describeEachEngine(
  "llm agent runner without an LLM configured",
  (harness) => {
    it("fails an llm agent's node at once with the clear reason", async () => {
      const h = harness();
      const me = await h.createKey();
      const agent = uniqueName("unconfigured");
      await registerAgent(h, me.auth, { name: agent, kind: "llm" });
      stub.script([]);
      const started = await startAs(h, me, { target: { type: "agent", name: agent } });
      const body = await settledTrace(h, me.auth, started.traceId);
      const reason = `agent ${agent}: no LLM configured (set LLM_BASE_URL and LLM_MODEL) to run llm agents`;
      expect(body.execution).toMatchObject({ status: "error", error: `stage ${agent} failed: ${reason}` });
      expect(nodeSummary(body)).toEqual([
        [`stage:${agent}`, "error", reason],
        [`stage:${agent}/agent:${agent}`, "error", reason],
      ]);
      expect(stub.requests).toHaveLength(0);
    });
  },
  {},
  { jobs },
);
