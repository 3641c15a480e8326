// What an investigation's model review costs: the tokens the OpenAI-compatible stub on loopback
// reports for each call count in the run (the execution's total_cost, the session's tokens and
// by_model), whether its answer was used, unusable, cut short by a failure, or came after the
// investigation was concluded through the callback. A run without a model costs nothing.
import { afterAll, expect, it } from "vitest";
import { investigateNewAlert, MODEL_CONCLUSION } from "../../test/alerts.ts";
import { type Auth, call, describeEachEngine, type Harness, waitFor } from "../../test/harness.ts";
import { type OpenAiStub, type StubReply, startOpenAiStub } from "../../test/openai-stub.ts";

const stub: OpenAiStub = await startOpenAiStub();
afterAll(() => stub.close());

// A model of the price table (src/llm/pricing.ts), so the cost is not 0: gpt-4o-mini at USD 0.00015
// per 1K input tokens and 0.0006 per 1K output tokens.
const MODEL = "gpt-4o-mini";
const priceOf = (prompt: number, completion: number) => (prompt * 0.00015 + completion * 0.0006) / 1000;

const ANSWER = MODEL_CONCLUSION;

/**
 * Scripts the investigator's calls (those offering tools) in order, each once; triage's refinement
 * (no tools) is refused, so it keeps its own classification and its calls are no run's.
 */
function scriptInvestigator(replies: StubReply[]) {
  const queue = [...replies];
  stub.script([], (request) => {
    if (!request.body?.tools?.length) return { status: 500, body: { error: { message: "not this test" } } };
    return queue.shift() ?? { status: 500, body: { error: { message: "no reply left" } } };
  });
}

/** A new alert's investigation, started: its id. */
async function startInvestigation(h: Harness, auth: Auth): Promise<string> {
  return (await investigateNewAlert(h, auth)).id;
}

/** Waits for the investigation's run to end; answers the investigation, its execution and its session. */
async function runOf(h: Harness, auth: Auth, id: string) {
  return waitFor(async () => {
    const investigation = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
    if (!investigation.guild_trace_id) return undefined;
    const trace = (
      await call(h, auth, "GET", `/platform/api/v1/executions/${investigation.guild_trace_id}`)
    ).json();
    if (trace.execution.status === "running") return undefined;
    // Read again: the first read may have come before the run concluded the investigation.
    const concluded = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
    const session = (
      await call(h, auth, "GET", `/platform/api/v1/sessions/${investigation.guild_session_id}`)
    ).json();
    return { investigation: concluded, trace, session };
  }, 60_000);
}

type Run = Awaited<ReturnType<typeof runOf>>;

/** The run's cost everywhere it is told, for `prompt` and `completion` tokens of MODEL (none: 0). */
function expectCost(run: Run, prompt: number, completion: number) {
  const cost = priceOf(prompt, completion);
  expect(run.trace.execution.status).toBe("completed");
  expect(run.trace.execution.total_cost).toBeCloseTo(cost, 12);
  // Only the conclude step asked the model.
  const costs = run.trace.nodes
    .filter((node: { cost: number }) => node.cost !== 0)
    .map((node: { id: string; cost: number }) => [node.id, node.cost]);
  expect(costs).toEqual(cost === 0 ? [] : [[expect.stringContaining("conclude"), expect.closeTo(cost, 12)]]);
  expect(run.session.cost).toEqual({
    total_cost: expect.closeTo(cost, 12),
    prompt_tokens: prompt,
    completion_tokens: completion,
    by_execution: [
      {
        trace_id: run.investigation.guild_trace_id,
        target_name: "sre-alert-investigation",
        total_cost: expect.closeTo(cost, 12),
      },
    ],
    by_model:
      prompt + completion === 0
        ? []
        : [
            {
              model: MODEL,
              prompt_tokens: prompt,
              completion_tokens: completion,
              cost: expect.closeTo(cost, 12),
            },
          ],
  });
}

describeEachEngine(
  "the cost of an investigation's model review",
  (harness) => {
    it("counts every call's tokens of a review whose answer is used", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      scriptInvestigator([
        {
          toolCalls: [{ name: "read_alert", arguments: {} }],
          usage: { prompt_tokens: 1200, completion_tokens: 30 },
        },
        { content: JSON.stringify(ANSWER), usage: { prompt_tokens: 2400, completion_tokens: 310 } },
      ]);
      const run = await runOf(h, auth, await startInvestigation(h, auth));
      expect(run.investigation.triage_metadata.investigator).toBe(`llm:${MODEL}`);
      expectCost(run, 3600, 340);
    });

    it("counts the tokens of an unusable answer, and of the calls before one that failed", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      scriptInvestigator([
        {
          toolCalls: [{ name: "read_alert", arguments: {} }],
          usage: { prompt_tokens: 800, completion_tokens: 20 },
        },
        { content: "I think it is fine.", usage: { prompt_tokens: 900, completion_tokens: 12 } },
      ]);
      const nonsense = await runOf(h, auth, await startInvestigation(h, auth));
      expect(nonsense.investigation.triage_metadata.investigator).toBe("deterministic");
      expectCost(nonsense, 1700, 32);

      scriptInvestigator([
        {
          toolCalls: [{ name: "read_alert", arguments: {} }],
          usage: { prompt_tokens: 700, completion_tokens: 25 },
        },
        { status: 500, body: { error: { message: "down" } } },
      ]);
      const failed = await runOf(h, auth, await startInvestigation(h, auth));
      expect(failed.investigation.structured_rca.plain_summary.how_we_got_here.at(-1)).toContain(
        "(the model call failed)",
      );
      expectCost(failed, 700, 25);

      // A call that fails at once answered no tokens: the model is not named in the run's cost.
      scriptInvestigator([{ status: 500, body: { error: { message: "down" } } }]);
      expectCost(await runOf(h, auth, await startInvestigation(h, auth)), 0, 0);
    });

    it("counts the tokens of a review that finds the investigation already concluded", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      scriptInvestigator([
        {
          content: JSON.stringify(ANSWER),
          usage: { prompt_tokens: 1500, completion_tokens: 200 },
          until: gate,
        },
      ]);
      const id = await startInvestigation(h, auth);
      await waitFor(async () =>
        stub.requests.some((request) => request.body?.tools?.length) ? true : undefined,
      );
      const concluded = await call(h, auth, "POST", `/app/sre/api/v1/investigations/${id}/status`, {
        status: "completed",
        result_summary: "Concluded by the on-call engineer.",
      });
      expect(concluded.statusCode, concluded.body).toBe(200);
      release();
      const run = await runOf(h, auth, id);
      expect(run.investigation.result_summary).toBe("Concluded by the on-call engineer.");
      expectCost(run, 1500, 200);
    });
  },
  { llm: { baseUrl: stub.baseUrl, model: MODEL, apiKey: null } },
);

describeEachEngine("the cost of an investigation without a model", (harness) => {
  it("is 0, with no model named", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    stub.script([]);
    const run = await runOf(h, auth, await startInvestigation(h, auth));
    expect(run.investigation.triage_metadata.investigator).toBe("deterministic");
    expectCost(run, 0, 0);
    expect(stub.requests).toEqual([]);
  });
});
