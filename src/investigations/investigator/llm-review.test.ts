// The LLM investigator against the OpenAI-compatible stub on loopback: its tool loop, the refusal
// of a repeated identical call, a made-up link shown unverified, and the fallback to the
// deterministic conclusion when the model fails.
import { afterAll, expect, it } from "vitest";
import { investigateNewAlert } from "../../../test/alerts.ts";
import { type Auth, call, describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import { type OpenAiStub, startOpenAiStub } from "../../../test/openai-stub.ts";

const stub: OpenAiStub = await startOpenAiStub();
afterAll(() => stub.close());

async function investigateNew(h: Harness, auth: Auth) {
  const { id } = await investigateNewAlert(h, auth);
  return waitFor(async () => {
    const body = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
    return ["completed", "failed", "cancelled"].includes(body.status) ? body : undefined;
  }, 60_000);
}

const ANSWER = {
  verdict: "real_problem",
  what_broke: "Payments answered errors to customers.",
  what_to_do: "Roll back the payments deploy of 10:02.",
  how_we_got_here: ["Read the alert", "Read the findings"],
  hypotheses: [
    { statement: "A bad deploy", confidence: 0.7, status: "confirmed", rationale: "errors began with it" },
    { statement: "Database down", confidence: 0.1, status: "rejected", rationale: "no database alert" },
  ],
  citations: [
    { title: "Payments dashboard", url: "https://grafana.example.com/d/payments", kind: "dashboard" },
    { title: "Made up", url: "https://totally-invented.example.net/proof", kind: "log" },
    { title: "Not a link", url: "javascript:alert(1)", kind: "other" },
  ],
};

describeEachEngine(
  "the LLM investigator",
  (harness) => {
    it("runs a bounded tool loop, refuses a repeated call and labels an invented link unverified", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const grafana = await call(h, auth, "POST", "/api/v1/integrations", {
        name: "grafana",
        type: "grafana",
        url: "https://grafana.example.com",
      });
      expect(grafana.statusCode, grafana.body).toBe(201);
      // Answers by what is asked: triage's refinement (no tools) gets an error and keeps its own
      // classification; the investigator calls read_alert twice, then answers.
      stub.script([], (request) => {
        if (!request.body?.tools?.length)
          return { status: 500, body: { error: { message: "not this test" } } };
        const results = request.body.messages.filter((message) => message.role === "tool").length;
        return results < 2
          ? { toolCalls: [{ name: "read_alert", arguments: {} }] }
          : { content: JSON.stringify(ANSWER) };
      });
      const done = await investigateNew(h, auth);
      expect(done.status).toBe("completed");
      expect(done.triage_metadata.investigator).toBe("llm:stub-model");
      expect(done.structured_rca.plain_summary).toEqual({
        verdict: "real_problem",
        what_broke: ANSWER.what_broke,
        what_to_do: ANSWER.what_to_do,
        how_we_got_here: ANSWER.how_we_got_here,
      });
      expect(done.hypotheses.map((item: { statement: string }) => item.statement)).toEqual([
        "A bad deploy",
        "Database down",
      ]);
      const cited = done.evidence.filter((item: { source: string }) => item.source === "llm");
      expect(cited.map((item: { url: string; verified: boolean }) => [item.url, item.verified])).toEqual([
        ["https://grafana.example.com/d/payments", true],
        ["https://totally-invented.example.net/proof", false],
      ]);
      // The second, identical call was answered with a refusal, not the data again.
      const asked = stub.requests.filter((request) => request.body?.tools?.length);
      expect(asked).toHaveLength(3);
      const third = asked[2]?.body?.messages ?? [];
      const toolResults = third
        .filter((message) => message.role === "tool")
        .map((message) => JSON.stringify(message.content));
      expect(toolResults).toHaveLength(2);
      expect(toolResults[0]).toContain("PaymentsErrors");
      expect(toolResults[1]).toContain("already called");
    });

    it("falls back to the deterministic conclusion when the model fails or answers nonsense", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      stub.script([], { status: 500, body: { error: { message: "down" } } });
      const failed = await investigateNew(h, auth);
      expect(failed.status).toBe("completed");
      // The investigator value stays machine-readable; why the model's answer was not used is a step.
      expect(failed.triage_metadata.investigator).toBe("deterministic");
      expect(failed.structured_rca.plain_summary.verdict).toBe("not_enough_information");
      expect(failed.structured_rca.plain_summary.how_we_got_here.at(-1)).toBe(
        "Asked the model stub-model for a conclusion: it gave no usable answer (the model call failed), so this is the rule-based one.",
      );
      stub.script([], (request) =>
        request.body?.tools?.length ? { content: "I think it is fine." } : { status: 500, body: {} },
      );
      const nonsense = await investigateNew(h, auth);
      expect(nonsense.triage_metadata.investigator).toBe("deterministic");
      expect(nonsense.structured_rca.plain_summary.how_we_got_here.at(-1)).toContain(
        "(its answer was not the conclusion asked for)",
      );
      expect(nonsense.evidence.filter((item: { source: string }) => item.source === "llm")).toEqual([]);
    });

    it("leaves an investigation concluded through the status callback meanwhile as the callback left it", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      // The model's answer waits until the callback has concluded the investigation.
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      stub.script([], (request) =>
        request.body?.tools?.length
          ? { content: JSON.stringify(ANSWER), until: gate }
          : { status: 500, body: {} },
      );
      const { id } = await investigateNewAlert(h, auth);
      await waitFor(async () =>
        stub.requests.some((request) => request.body?.tools?.length) ? true : undefined,
      );
      const plain = {
        verdict: "alert_is_misconfigured",
        what_broke: "Nothing: the rule fires on a test series.",
        what_to_do: "Exclude the test series from the rule.",
        how_we_got_here: ["Read the rule"],
      };
      const concluded = await call(h, auth, "POST", `/app/sre/api/v1/investigations/${id}/status`, {
        status: "completed",
        result_summary: "Concluded by the on-call engineer.",
        plain_summary: plain,
      });
      expect(concluded.statusCode, concluded.body).toBe(200);
      release();
      // The run ends; the investigation, its evidence and the session hold nothing of its own conclusion.
      const run = await waitFor(async () => {
        const body = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
        const trace = await call(h, auth, "GET", `/platform/api/v1/executions/${body.guild_trace_id}`);
        const execution = trace.json().execution as { status: string };
        return execution.status === "running" ? undefined : { body, execution };
      }, 60_000);
      expect(run.execution.status).toBe("completed");
      expect(run.body).toMatchObject({
        status: "completed",
        result_summary: "Concluded by the on-call engineer.",
        structured_rca: { plain_summary: plain },
      });
      expect(run.body.evidence.filter((item: { source: string }) => item.source === "llm")).toEqual([]);
      const artifacts = await call(
        h,
        auth,
        "GET",
        `/platform/api/v1/sessions/${run.body.guild_session_id}/artifacts`,
      );
      expect(artifacts.json()).toEqual([]);
    });

    it("stores an answer holding U+0000 or a lone surrogate, each made U+FFFD", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const answer = {
        ...ANSWER,
        what_broke: "Payments\u0000 answered errors.",
        what_to_do: "Roll back \ud800the deploy.",
        how_we_got_here: ["Read\u0000 the alert", "\udc00"],
        hypotheses: [
          { statement: "A bad\u0000 deploy", confidence: 0.7, status: "confirmed", rationale: "\ud83d" },
        ],
        citations: [
          { title: "Dash\u0000board \ud800", url: "https://grafana.example.com/d/x", kind: "dashboard" },
        ],
      };
      stub.script([], (request) =>
        request.body?.tools?.length ? { content: JSON.stringify(answer) } : { status: 500, body: {} },
      );
      const done = await investigateNew(h, auth);
      expect(done.status).toBe("completed");
      expect(done.triage_metadata.investigator).toBe("llm:stub-model");
      expect(done.structured_rca.plain_summary).toEqual({
        verdict: "real_problem",
        what_broke: "Payments\ufffd answered errors.",
        what_to_do: "Roll back \ufffdthe deploy.",
        how_we_got_here: ["Read\ufffd the alert", "\ufffd"],
      });
      expect(done.hypotheses).toEqual([
        { statement: "A bad\ufffd deploy", confidence: 0.7, status: "confirmed", rationale: "\ufffd" },
      ]);
      expect(done.result_summary).toBe("real_problem: A bad\ufffd deploy. Roll back \ufffdthe deploy.");
      expect(done.evidence.filter((item: { source: string }) => item.source === "llm")).toEqual([
        expect.objectContaining({ title: "Dash\ufffdboard \ufffd", url: "https://grafana.example.com/d/x" }),
      ]);
    });

    it("files a misconfigured alert's RCA under the alert rule, whatever the rules had found", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const answer = {
        ...ANSWER,
        verdict: "alert_is_misconfigured",
        what_broke: "Nothing broke: the threshold is below the normal error rate.",
        what_to_do: "Raise the rule's threshold to 5%.",
        hypotheses: [
          { statement: "The alert rule threshold is too low", confidence: 0.8, status: "confirmed" },
        ],
        citations: [],
      };
      stub.script([], (request) =>
        request.body?.tools?.length ? { content: JSON.stringify(answer) } : { status: 500, body: {} },
      );
      const done = await investigateNew(h, auth);
      expect(done.triage_metadata.investigator).toBe("llm:stub-model");
      expect(done.structured_rca).toMatchObject({
        category: "alert_rule",
        root_cause: "The alert rule threshold is too low",
      });
      expect(done.result_summary).toBe(
        "alert_is_misconfigured: The alert rule threshold is too low. Raise the rule's threshold to 5%.",
      );
    });
  },
  { llm: { baseUrl: stub.baseUrl, model: "stub-model", apiKey: null } },
);
