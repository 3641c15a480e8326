// Ask on a catalog of one workflow that changes production: a question that does not name its action
// starts nothing (the fallback agent answers it when the tenant has one), nor does a message that
// only names what the workflow's examples act on; a request, or a question naming the action, runs
// it. A candidate_type naming nothing runnable says so.
import { expect, it } from "vitest";
import {
  type Auth,
  call,
  createApprovedWorkflow,
  registerAgent,
  settledTrace,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, type Harness } from "../../../test/harness.ts";

const ASK = "/platform/api/v1/platform/ask/start";
const FALLBACK = "helper";

async function ask(h: Harness, auth: Auth, body: object) {
  const response = await call(h, auth, "POST", ASK, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** A tenant whose only routable workflow restarts a deployment; `withFallback` adds the fallback agent. */
async function tenant(h: Harness, withFallback = false) {
  const { auth } = await h.createKey();
  await createApprovedWorkflow(h, auth, {
    name: "restart-deployment",
    description: "Restart a Kubernetes deployment",
    inputs: [
      { name: "service", required: true, pattern: "^[a-z][a-z0-9-]*$" },
      { name: "cluster", required: true, pattern: "^(prod|staging)-[a-z]+$" },
    ],
    routing_examples: ["restart the checkout deployment in prod-eu", "bounce the search service"],
    stages: [
      {
        id: "report",
        action_type: "write_report",
        config: { name: "r.md", summary: "restarted {{input.service}} in {{input.cluster}}" },
      },
    ],
  });
  if (withFallback) {
    const integration = await call(h, auth, "POST", "/api/v1/integrations", {
      name: "grafana",
      type: "grafana",
    });
    expect(integration.statusCode, integration.body).toBe(201);
    await registerAgent(h, auth, {
      name: FALLBACK,
      description: "General questions about the platform",
      integrations: ["grafana"],
      instructions: "You asked: {{input.message}}",
    });
  }
  return auth;
}

async function runsOf(h: Harness, auth: Auth, sessionId: string) {
  const listed = await call(h, auth, "GET", `/platform/api/v1/executions?session_id=${sessionId}`);
  expect(listed.statusCode, listed.body).toBe(200);
  return listed.json();
}

describeEachEngine(
  "ask: questions and values",
  (harness) => {
    it("starts nothing for a question that does not name the workflow's action", async () => {
      const h = harness();
      const auth = await tenant(h);
      for (const message of [
        "what is the error rate of the checkout service in prod-eu?",
        "who owns the checkout deployment in prod-eu",
        "checkout prod-eu",
      ]) {
        const answer = await ask(h, auth, { message });
        expect(answer, message).toMatchObject({
          decision: "no_match",
          trace_id: "",
          run_id: "",
          plan: "",
          fallback_agent: "",
          extracted: {},
        });
        expect(answer.message, message).toMatch(/nothing was started\.$/);
        expect(await runsOf(h, auth, answer.session_id), message).toEqual([]);
      }
    });

    it("sends such a question to the fallback agent when the tenant has it", async () => {
      const h = harness();
      const auth = await tenant(h, true);
      const message = "what is the error rate of the checkout service in prod-eu?";
      const answer = await ask(h, auth, { message });
      expect(answer).toMatchObject({ decision: "fallback", fallback_agent: FALLBACK, plan: FALLBACK });
      const trace = await settledTrace(h, auth, answer.trace_id);
      expect(trace.structured_output.summary).toBe(`You asked: ${message}`);
    });

    it("runs the workflow for a request, and for a question that names its action", async () => {
      const h = harness();
      const auth = await tenant(h);
      for (const message of ["restart checkout in prod-eu", "can you bounce checkout in prod-eu?"]) {
        const answer = await ask(h, auth, { message });
        expect(answer, message).toMatchObject({
          decision: "routed",
          plan: "restart-deployment",
          extracted: { service: "checkout", cluster: "prod-eu" },
          inputs_required: [],
        });
        const trace = await settledTrace(h, auth, answer.trace_id);
        expect(trace.structured_output.summary).toBe("restarted checkout in prod-eu");
      }
    });

    it("says that candidate_type integration or knowledge names nothing runnable", async () => {
      const h = harness();
      const auth = await tenant(h);
      for (const type of ["integration", "knowledge"]) {
        const answer = await ask(h, auth, { message: "restart checkout in prod-eu", candidate_type: type });
        expect(answer).toMatchObject({ decision: "no_match", trace_id: "", plan: "", candidates: [] });
        expect(answer.message).toBe(
          `candidate_type ${type} names nothing runnable (only agents and workflows run); nothing was started. Ask with candidate_type any, agent or workflow.`,
        );
        expect(await runsOf(h, auth, answer.session_id)).toEqual([]);
      }
    });
  },
  { askFallbackAgent: FALLBACK },
);
