// Ask end to end through HTTP: routing, inputs read from the message and asked for, a conversation
// continued in its session, ambiguity and fallback, entity_refs, prior-session reuse; then the
// sessions it leaves behind: search, detail, artifacts by name, export, terminate.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { itEnforcesAuth } from "../../../test/auth-matrix.ts";
import {
  type Auth,
  call,
  createApprovedWorkflow,
  type Loopback,
  type Owner,
  readTrace,
  registerAgent,
  settledTrace,
  startLoopback,
} from "../../../test/automation-runs.ts";
import { describeEachEngine, type Harness, waitFor } from "../../../test/harness.ts";
import { storeArtifact } from "../sessions/artifacts.ts";

const ASK = "/platform/api/v1/platform/ask/start";
const FALLBACK = "helper";

let loopback: Loopback;
beforeAll(async () => {
  loopback = await startLoopback();
});
afterAll(async () => {
  await loopback.close();
});

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

async function ask(h: Harness, auth: Auth, body: object) {
  const response = await call(h, auth, "POST", ASK, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** A tenant with an integration, a fallback agent, and workflows whose vocabulary overlaps. */
async function catalog(h: Harness): Promise<Owner> {
  const me = await h.createKey();
  const integration = await call(h, me.auth, "POST", "/api/v1/integrations", {
    name: "grafana",
    type: "grafana",
  });
  expect(integration.statusCode, integration.body).toBe(201);
  await registerAgent(h, me.auth, {
    name: FALLBACK,
    description: "General questions about the platform",
    integrations: ["grafana"],
    instructions: "You asked: {{input.message}}",
  });
  const report = (summary: string) => ({
    id: "report",
    action_type: "write_report",
    config: { name: "Restart-Report.md", title: "Restart", summary, confidence: "high" },
  });
  await createApprovedWorkflow(h, me.auth, {
    name: "restart-deployment",
    description: "Restart a Kubernetes deployment with a rolling restart",
    inputs: [
      { name: "service", required: true, pattern: "^[a-z][a-z0-9-]*$" },
      { name: "cluster", required: true, pattern: "^(prod|staging)-[a-z]+$" },
    ],
    routing_examples: ["restart the checkout deployment in prod-eu", "bounce the payments service"],
    stages: [report("restarted {{input.service}} in {{input.cluster}}")],
  });
  await createApprovedWorkflow(h, me.auth, {
    name: "rollback-release",
    description: "Roll back a release to the previous version",
    inputs: [{ name: "service", required: true }],
    routing_examples: ["roll back the checkout release", "revert the last deploy"],
    stages: [report("rolled back {{input.service}}")],
  });
  await createApprovedWorkflow(h, me.auth, {
    name: "disk-cleanup",
    description: "Free disk space on a host",
    inputs: [{ name: "host", required: false }],
    stages: [report("cleaned")],
  });
  await createApprovedWorkflow(h, me.auth, {
    name: "disk-expand",
    description: "Expand the disk of a host",
    inputs: [{ name: "host", required: false }],
    stages: [report("expanded")],
  });
  await createApprovedWorkflow(h, me.auth, {
    name: "slow-probe",
    description: "Probe an endpoint that never answers",
    routing_status: "inactive",
    stages: [
      {
        id: "wait",
        action_type: "http_request",
        config: { url: `${loopback.url}/slow`, timeout_ms: 60_000 },
      },
    ],
  });
  return me;
}

describeEachEngine(
  "ask",
  (harness) => {
    let me: Owner;
    beforeAll(async () => {
      me = await catalog(harness());
    });

    it("routes a message with every input, runs it to completion and keeps the conversation", async () => {
      const h = harness();
      const started = await ask(h, me.auth, {
        message: "Please restart the checkout deployment in prod-eu",
        source_app: "chatops",
        source_metadata: { channel: "#incident-4711" },
      });
      expect(started).toMatchObject({
        decision: "routed",
        plan: "restart-deployment",
        extracted: { service: "checkout", cluster: "prod-eu" },
        inputs_required: [],
        fallback_agent: "",
        prior_session_id: null,
      });
      expect(started.candidates[0]).toMatchObject({ name: "restart-deployment", candidate_type: "workflow" });
      expect(started.candidates[0].confidence).toBeGreaterThan(started.candidates[1]?.confidence ?? 0);
      const trace = await settledTrace(h, me.auth, started.trace_id);
      expect(trace.execution).toMatchObject({ status: "completed", session_id: started.session_id });
      expect(trace.structured_output).toEqual({
        summary: "restarted checkout in prod-eu",
        impact: "",
        recommendations: "",
        confidence: "high",
      });

      const detail = await call(h, me.auth, "GET", `/platform/api/v1/sessions/${started.session_id}`);
      expect(detail.statusCode, detail.body).toBe(200);
      const session = detail.json();
      expect(session).toMatchObject({
        id: started.session_id,
        first_prompt: "Please restart the checkout deployment in prod-eu",
        source_app: "chatops",
        source_metadata: { channel: "#incident-4711" },
        responder: { type: "workflow", name: "restart-deployment" },
        status: "idle",
        execution_count: 1,
        pending_inputs: null,
        computed: {
          message_count: 2,
          execution_count: 1,
          completed_count: 1,
          error_count: 0,
          artifact_count: 1,
        },
        cost: {
          total_cost: 0,
          by_execution: [{ trace_id: started.trace_id, target_name: "restart-deployment", total_cost: 0 }],
          by_model: [],
        },
      });
      expect(session.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
      expect(session.messages[1].trace_id).toBe(started.trace_id);
      expect(session.summary).toContain("1 run of workflow restart-deployment: 1 completed");
      expect(session.summary).toContain("restarted checkout in prod-eu");
    });

    it("asks for a missing input, then runs once it is answered in the same session", async () => {
      const h = harness();
      const first = await ask(h, me.auth, { message: "restart the payments deployment" });
      expect(first).toMatchObject({
        decision: "inputs_required",
        trace_id: "",
        run_id: "",
        inputs_required: ["cluster"],
        extracted: { service: "payments" },
        plan: "restart-deployment",
      });
      const waiting = (await call(h, me.auth, "GET", `/platform/api/v1/sessions/${first.session_id}`)).json();
      expect(waiting).toMatchObject({
        status: "waiting_for_input",
        execution_count: 0,
        pending_inputs: { target_name: "restart-deployment", inputs_required: ["cluster"] },
      });

      const answered = await ask(h, me.auth, { message: "cluster=staging-us", session_id: first.session_id });
      expect(answered).toMatchObject({
        decision: "continued",
        session_id: first.session_id,
        inputs_required: [],
        extracted: { cluster: "staging-us" },
      });
      const trace = await settledTrace(h, me.auth, answered.trace_id);
      expect(trace.structured_output.summary).toBe("restarted payments in staging-us");
      // The run reads the request the answer completed, and the answer beside it.
      const exported = await call(
        h,
        me.auth,
        "GET",
        `/platform/api/v1/sessions/${first.session_id}/export?parts=evidence`,
      );
      expect(exported.json().evidence.executions[0].input).toMatchObject({
        message: "restart the payments deployment",
        answer: "cluster=staging-us",
        cluster: "staging-us",
        service: "payments",
      });

      // An answer that names an input given before corrects it, and is not taken as the missing one.
      const located = await ask(h, me.auth, { message: "restart the deployment in prod-eu" });
      expect(located).toMatchObject({ inputs_required: ["service"], extracted: { cluster: "prod-eu" } });
      const corrected = await ask(h, me.auth, {
        message: "cluster=staging-eu",
        session_id: located.session_id,
      });
      expect(corrected).toMatchObject({
        decision: "inputs_required",
        trace_id: "",
        inputs_required: ["service"],
        extracted: { cluster: "staging-eu" },
      });
      const completed = await ask(h, me.auth, { message: "checkout", session_id: located.session_id });
      expect(completed).toMatchObject({ decision: "continued", inputs_required: [] });
      const correctedTrace = await settledTrace(h, me.auth, completed.trace_id);
      expect(correctedTrace.structured_output.summary).toBe("restarted checkout in staging-eu");

      // A value the caller passed in `inputs` stands through the session's later answers.
      const pinned = await ask(h, me.auth, {
        message: "restart the deployment",
        inputs: { cluster: "prod-us" },
      });
      expect(pinned).toMatchObject({ inputs_required: ["service"] });
      const kept = await ask(h, me.auth, {
        message: "service=cart cluster=staging-eu",
        session_id: pinned.session_id,
      });
      expect(kept).toMatchObject({
        decision: "continued",
        inputs_required: [],
        extracted: { service: "cart" },
      });
      const keptTrace = await settledTrace(h, me.auth, kept.trace_id);
      expect(keptTrace.structured_output.summary).toBe("restarted cart in prod-us");

      // A waiting session takes a message that clearly asks for something else as a new request.
      const waitingAgain = await ask(h, me.auth, { message: "restart the search deployment" });
      expect(waitingAgain.inputs_required).toEqual(["cluster"]);
      const changed = await ask(h, me.auth, {
        message: "no, roll back the search service instead",
        session_id: waitingAgain.session_id,
      });
      expect(changed).toMatchObject({
        decision: "routed",
        plan: "rollback-release",
        extracted: { service: "search" },
      });
      const after = (
        await call(h, me.auth, "GET", `/platform/api/v1/sessions/${waitingAgain.session_id}`)
      ).json();
      expect(after.pending_inputs).toBeNull();

      const stranger = await h.createKey();
      const foreign = await call(h, stranger.auth, "POST", ASK, {
        message: "hello",
        session_id: first.session_id,
      });
      expect(foreign.statusCode).toBe(404);
    });

    it("reports an ambiguous message without running anything, and sends a weak one to the fallback agent", async () => {
      const h = harness();
      const ambiguous = await ask(h, me.auth, { message: "disk on host web-1" });
      expect(ambiguous).toMatchObject({ decision: "ambiguous", trace_id: "", plan: "", fallback_agent: "" });
      expect(ambiguous.candidates.map((c: { name: string }) => c.name).sort()).toEqual([
        "disk-cleanup",
        "disk-expand",
      ]);
      const listed = await call(
        h,
        me.auth,
        "GET",
        `/platform/api/v1/executions?session_id=${ambiguous.session_id}`,
      );
      expect(listed.json()).toEqual([]);

      const weak = await ask(h, me.auth, { message: "what is the weather like in Lisbon tomorrow" });
      expect(weak).toMatchObject({
        decision: "fallback",
        fallback_agent: FALLBACK,
        plan: FALLBACK,
      });
      const trace = await settledTrace(h, me.auth, weak.trace_id);
      expect(trace.structured_output.summary).toBe("You asked: what is the weather like in Lisbon tomorrow");

      const workflowsOnly = await ask(h, me.auth, {
        message: "what is the weather like in Lisbon tomorrow",
        candidate_type: "workflow",
      });
      expect(workflowsOnly).toMatchObject({ decision: "no_match", trace_id: "", fallback_agent: "" });
    });

    it("runs what entity_refs pins, even a workflow Ask would not route to", async () => {
      const h = harness();
      const pinned = await ask(h, me.auth, {
        message: "disk on host web-1",
        entity_refs: [{ type: "workflow", name: "disk-expand" }],
      });
      expect(pinned).toMatchObject({
        decision: "pinned",
        plan: "disk-expand",
        candidates: [{ name: "disk-expand", confidence: 1, candidate_type: "workflow" }],
        extracted: { host: "web-1" },
      });
      expect((await settledTrace(h, me.auth, pinned.trace_id)).execution.status).toBe("completed");

      const unknown = await call(h, me.auth, "POST", ASK, {
        message: "x",
        entity_refs: [{ type: "agent", name: "ghost" }],
      });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json()).toMatchObject({
        errCode: "VALIDATION_FAILED",
        extras: [{ field: "entity_refs.0.name" }],
      });

      // A ref of type any names whichever agent or workflow has the name.
      const anyPinned = await ask(h, me.auth, {
        message: "disk on host web-2",
        entity_refs: [{ type: "any", name: "disk-expand" }],
      });
      expect(anyPinned).toMatchObject({
        decision: "pinned",
        plan: "disk-expand",
        candidates: [{ name: "disk-expand", candidate_type: "workflow" }],
      });
      const anyUnknown = await call(h, me.auth, "POST", ASK, {
        message: "x",
        entity_refs: [
          { type: "workflow", name: "disk-expand" },
          { type: "any", name: "ghost" },
        ],
      });
      expect(anyUnknown.statusCode).toBe(400);
      expect(anyUnknown.json()).toMatchObject({
        msg: "entity_refs.1.name: no agent or workflow ghost",
        extras: [{ field: "entity_refs.1.name" }],
      });
    });

    it("routes only to ready agents: one whose integrations were all deleted is not routed nor shown, but runs pinned", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      for (const name of ["tmp-int", "keep-int"]) {
        const created = await call(h, auth, "POST", "/api/v1/integrations", { name, type: "grafana" });
        expect(created.statusCode, created.body).toBe(201);
      }
      await registerAgent(h, auth, {
        name: "cdn-purger",
        description: "Purge the CDN cache of a website",
        integrations: ["tmp-int"],
        instructions: "purged",
      });
      await registerAgent(h, auth, {
        name: "cert-renewer",
        description: "Renew the TLS certificate of a domain",
        integrations: ["tmp-int", "keep-int"],
        instructions: "renewed",
      });
      const message = "purge the cdn cache of the website";
      const whileReady = await ask(h, auth, { message });
      expect(whileReady).toMatchObject({ decision: "routed", plan: "cdn-purger" });
      expect((await settledTrace(h, auth, whileReady.trace_id)).execution.status).toBe("completed");

      const deleted = await call(h, auth, "DELETE", "/api/v1/integrations/tmp-int");
      expect(deleted.statusCode, deleted.body).toBe(204);
      // The agent keeps the deleted name, and says it is not ready: Ask agrees.
      const agent = (await call(h, auth, "GET", "/platform/api/v1/agents/cdn-purger")).json();
      expect(agent).toMatchObject({ integrations: ["tmp-int"], ready: false });
      for (const candidateType of ["any", "agent"]) {
        expect(await ask(h, auth, { message, candidate_type: candidateType })).toEqual({
          trace_id: "",
          run_id: "",
          session_id: expect.any(String),
          decision: "no_match",
          candidates: [],
          inputs_required: [],
          extracted: {},
          fallback_agent: "",
          plan: "",
          prior_session_id: null,
          message: "No agent or workflow matches; nothing was started.",
        });
      }
      // Nor is it a candidate among others, nor does a deleted integration's name filter to it.
      const other = await ask(h, auth, { message: "purge the cdn cache and renew the certificate" });
      expect(other.candidates.map((c: { name: string }) => c.name)).toEqual(["cert-renewer"]);
      const byIntegration = await call(h, auth, "POST", ASK, {
        message,
        entity_refs: [{ type: "integration", name: "tmp-int" }],
      });
      expect(byIntegration.statusCode).toBe(400);
      expect(byIntegration.json()).toMatchObject({ extras: [{ field: "entity_refs.0.name" }] });

      // An agent with one of its integrations left stays ready, also under an integration ref.
      const renew = { message: "renew the tls certificate of the domain" };
      for (const body of [renew, { ...renew, entity_refs: [{ type: "integration", name: "keep-int" }] }]) {
        const routed = await ask(h, auth, body);
        expect(routed).toMatchObject({ decision: "routed", plan: "cert-renewer" });
        expect((await settledTrace(h, auth, routed.trace_id)).execution.status).toBe("completed");
      }

      // Pinned, it runs all the same (entity_refs: "even an agent without integrations").
      const pinned = await ask(h, auth, { message, entity_refs: [{ type: "agent", name: "cdn-purger" }] });
      expect(pinned).toMatchObject({
        decision: "pinned",
        plan: "cdn-purger",
        candidates: [{ name: "cdn-purger", confidence: 1, candidate_type: "agent" }],
      });
      expect((await settledTrace(h, auth, pinned.trace_id)).execution.status).toBe("completed");
    });

    it("lists only the close candidates of an ambiguous message, and names them; a routed one lists the runners-up", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const stages = [{ id: "t", action_type: "json_transform", config: { expression: "input" } }];
      for (const name of ["scale-web", "scale-api"])
        await createApprovedWorkflow(h, auth, {
          name,
          description: "Scale the replicas of a deployment",
          stages,
        });
      await createApprovedWorkflow(h, auth, {
        name: "restart-deployment",
        description: "Restart a Kubernetes deployment with a rolling restart",
        stages,
      });
      const ambiguous = await ask(h, auth, { message: "scale the replicas of the deployment" });
      expect(ambiguous).toEqual({
        trace_id: "",
        run_id: "",
        session_id: expect.any(String),
        decision: "ambiguous",
        candidates: [
          { name: "scale-api", confidence: 0.719, candidate_type: "workflow" },
          { name: "scale-web", confidence: 0.719, candidate_type: "workflow" },
        ],
        inputs_required: [],
        extracted: {},
        fallback_agent: "",
        plan: "",
        prior_session_id: null,
        message:
          "The request matches several equally well (scale-api, scale-web); say which one, or pin it with entity_refs.",
      });

      const routed = await ask(h, auth, { message: "restart the deployment" });
      expect(routed).toMatchObject({ decision: "routed", plan: "restart-deployment" });
      expect(routed.candidates.map((c: { name: string }) => c.name)).toEqual([
        "restart-deployment",
        "scale-api",
        "scale-web",
      ]);
      expect((await settledTrace(h, auth, routed.trace_id)).execution.status).toBe("completed");
    });

    it("reuses the summary of an earlier session that asked the same, within the policy", async () => {
      const h = harness();
      const message = "Roll back the checkout service";
      const earlier = await ask(h, me.auth, { message });
      await settledTrace(h, me.auth, earlier.trace_id);
      const policy = {
        enabled: true,
        match_mode: "exact_normalized_text",
        max_summary_chars: 40,
        max_age_hours: 1,
      };
      const again = await ask(h, me.auth, {
        message: "  roll back the CHECKOUT service! ",
        prior_session: policy,
      });
      expect(again.prior_session_id).toBe(earlier.session_id);
      const trace = await settledTrace(h, me.auth, again.trace_id);
      expect(trace.execution.status).toBe("completed");
      const evidence = (
        await call(h, me.auth, "GET", `/platform/api/v1/sessions/${again.session_id}/export?parts=evidence`)
      ).json();
      const input = evidence.evidence.executions[0].input;
      expect(input.prior_session.session_id).toBe(earlier.session_id);
      expect(input.prior_session.summary).toHaveLength(40);

      const otherAgent = await ask(h, me.auth, {
        message,
        entity_refs: [{ type: "workflow", name: "restart-deployment" }],
        inputs: { service: "checkout", cluster: "prod-eu" },
        prior_session: { ...policy, same_agent_only: true },
      });
      expect(otherAgent.prior_session_id).toBeNull();
      const stranger = await h.createKey();
      const foreign = await ask(h, stranger.auth, { message, prior_session: policy });
      expect(foreign.prior_session_id).toBeNull();

      // A first prompt as long as a message may be (a pasted log: request ids, which PostgreSQL
      // cannot compress) starts a session and is matched.
      const pasted = `Roll back the checkout service, it logs:\n${Array.from(
        { length: 200 },
        (_, n) => `timeout request_id=${createHash("sha256").update(String(n)).digest("hex")}`,
      ).join("\n")}`.slice(0, 10_000);
      const long = await ask(h, me.auth, { message: pasted });
      await settledTrace(h, me.auth, long.trace_id);
      const longAgain = await ask(h, me.auth, { message: pasted, prior_session: policy });
      expect(longAgain.prior_session_id).toBe(long.session_id);
    });

    it("finds the prior session of an answered session by the request it answers, under that request's policy", async () => {
      const h = harness();
      const policy = { enabled: true, max_age_hours: 1 };
      /** The prior_session the answer's run received, once the run is over. */
      const priorOf = async (answer: { session_id: string; trace_id: string }) => {
        await settledTrace(h, me.auth, answer.trace_id);
        const path = `/platform/api/v1/sessions/${answer.session_id}/export?parts=evidence`;
        const runs = (await call(h, me.auth, "GET", path)).json().evidence.executions;
        return runs.find((run: { trace_id: string }) => run.trace_id === answer.trace_id).input.prior_session;
      };
      // An earlier session that asked only "prod-eu" is not the prior session of a restart answered "prod-eu".
      const bare = await ask(h, me.auth, { message: "prod-eu" });
      expect(bare.decision).toBe("fallback");
      await settledTrace(h, me.auth, bare.trace_id);
      const unrelated = await ask(h, me.auth, {
        message: "restart the wxyz deployment",
        prior_session: policy,
      });
      expect(unrelated).toMatchObject({ decision: "inputs_required", prior_session_id: null });
      const unrelatedAnswer = await ask(h, me.auth, {
        message: "prod-eu",
        session_id: unrelated.session_id,
        prior_session: policy,
      });
      expect(unrelatedAnswer).toMatchObject({ decision: "continued", prior_session_id: null });
      expect(await priorOf(unrelatedAnswer)).toBeUndefined();

      // The same restart asked before is, and the answer keeps the policy of the request it answers.
      const earlier = await ask(h, me.auth, { message: "restart the quux deployment" });
      const earlierRun = await ask(h, me.auth, { message: "prod-eu", session_id: earlier.session_id });
      await settledTrace(h, me.auth, earlierRun.trace_id);
      const again = await ask(h, me.auth, { message: "RESTART the quux deployment.", prior_session: policy });
      expect(again).toMatchObject({ decision: "inputs_required", prior_session_id: null });
      const answered = await ask(h, me.auth, { message: "prod-eu", session_id: again.session_id });
      expect(answered).toMatchObject({ decision: "continued", prior_session_id: earlier.session_id });
      expect(await priorOf(answered)).toEqual({
        session_id: earlier.session_id,
        summary: expect.stringContaining("restart-deployment"),
      });

      // A policy the answer gives replaces the kept one.
      const declined = await ask(h, me.auth, {
        message: "restart the quux deployment",
        prior_session: policy,
      });
      const declinedAnswer = await ask(h, me.auth, {
        message: "prod-eu",
        session_id: declined.session_id,
        prior_session: { enabled: false },
      });
      expect(declinedAnswer).toMatchObject({ decision: "continued", prior_session_id: null });
      expect(await priorOf(declinedAnswer)).toBeUndefined();

      // A request that waits later in a session is matched by its own message, not the session's first.
      const later = await ask(h, me.auth, {
        message: "restart the quux deployment",
        session_id: bare.session_id,
        prior_session: policy,
      });
      expect(later.decision).toBe("inputs_required");
      const laterAnswer = await ask(h, me.auth, { message: "prod-eu", session_id: bare.session_id });
      expect(laterAnswer.decision).toBe("continued");
      expect([earlier.session_id, again.session_id, declined.session_id]).toContain(
        laterAnswer.prior_session_id,
      );
      expect((await priorOf(laterAnswer)).session_id).toBe(laterAnswer.prior_session_id);
    });

    it("shares an org's sessions with its members, but reuses only the caller's own prior session", async () => {
      const h = harness();
      const orgId = await h.createOrg("on-call");
      const [alice, carol] = [await h.createKey({ orgIds: [orgId] }), await h.createKey({ orgIds: [orgId] })];
      const inOrg = (path: string) => `${path}${path.includes("?") ? "&" : "?"}orgId=${orgId}`;
      const agent = await call(h, alice.auth, "POST", inOrg("/platform/api/v1/agents"), {
        kind: "builtin",
        name: "org-helper",
        description: "Answers questions about the checkout service",
        instructions: "You asked: {{input.message}}",
      });
      expect(agent.statusCode, agent.body).toBe(201);
      const message = "What is wrong with the checkout service";
      const started = await call(h, alice.auth, "POST", inOrg(ASK), {
        message,
        entity_refs: [{ type: "agent", name: "org-helper" }],
      });
      expect(started.statusCode, started.body).toBe(200);
      const { session_id: sessionId } = started.json();
      // A colleague in the org lists, reads and continues it.
      const listed = await call(h, carol.auth, "GET", inOrg("/platform/api/v1/sessions"));
      expect(listed.json().items.map((item: { id: string }) => item.id)).toContain(sessionId);
      expect(
        (await call(h, carol.auth, "GET", inOrg(`/platform/api/v1/sessions/${sessionId}`))).statusCode,
      ).toBe(200);
      const continued = await call(h, carol.auth, "POST", inOrg(ASK), {
        message: "and the payments one?",
        session_id: sessionId,
        entity_refs: [{ type: "agent", name: "org-helper" }],
      });
      expect(continued.statusCode, continued.body).toBe(200);
      expect(continued.json().session_id).toBe(sessionId);
      // Outside the org it does not exist.
      expect((await call(h, carol.auth, "GET", `/platform/api/v1/sessions/${sessionId}`)).statusCode).toBe(
        404,
      );

      // The same question asked again reuses the asker's own earlier session, never a colleague's.
      const policy = { enabled: true, max_age_hours: 1 };
      const again = { message, prior_session: policy, entity_refs: [{ type: "agent", name: "org-helper" }] };
      const byCarol = await call(h, carol.auth, "POST", inOrg(ASK), again);
      expect(byCarol.json().prior_session_id).toBeNull();
      const byAlice = await call(h, alice.auth, "POST", inOrg(ASK), again);
      expect(byAlice.json().prior_session_id).toBe(sessionId);

      expect(
        (await call(h, carol.auth, "POST", inOrg(`/platform/api/v1/sessions/${sessionId}/terminate`)))
          .statusCode,
      ).toBe(200);
    });

    it("answers 400 naming the field for a missing, empty or invalid message and bad inputs", async () => {
      const h = harness();
      for (const [body, field] of [
        [{}, "message"],
        [{ message: "" }, "message"],
        [{ message: "   " }, "message"],
        [{ message: 42 }, "message"],
        [{ message: "hi", candidate_type: "robot" }, "candidate_type"],
        [
          { message: "hi", prior_session: { enabled: true, max_age_hours: 0 } },
          "prior_session.max_age_hours",
        ],
        [
          {
            message: "restart",
            entity_refs: [{ type: "workflow", name: "restart-deployment" }],
            inputs: { cluster: "moon" },
          },
          "inputs.cluster",
        ],
      ] as const) {
        const response = await call(h, me.auth, "POST", ASK, body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(JSON.stringify(response.json()), JSON.stringify(body)).toContain(field);
      }
      // A pattern that backtracks exponentially in JavaScript's RegExp (2^100 steps on this value)
      // is matched in linear time: the answer is a 400, not a server held for ever.
      await createApprovedWorkflow(h, me.auth, {
        name: "nested-pattern",
        inputs: [{ name: "word", required: true, pattern: "^(a+)+$" }],
        stages: [{ id: "t", action_type: "json_transform", config: { expression: "input" } }],
      });
      for (const inputs of [{ word: `${"a".repeat(100)}!` }, { word: "aaaa" }]) {
        const response = await call(h, me.auth, "POST", ASK, {
          message: "go",
          entity_refs: [{ type: "workflow", name: "nested-pattern" }],
          inputs,
        });
        expect(response.statusCode, response.body).toBe(inputs.word === "aaaa" ? 200 : 400);
      }
    });

    it("searches sessions by prompt, responder, source metadata, id and source_app, paged", async () => {
      const h = harness();
      const tagged = await ask(h, me.auth, {
        message: "roll back the ledger service release",
        source_app: "search-test",
        source_metadata: { ticket: "OPS-9931" },
      });
      const list = async (query: string) => {
        const response = await call(h, me.auth, "GET", `/platform/api/v1/sessions?${query}`);
        expect(response.statusCode, response.body).toBe(200);
        return response.json();
      };
      for (const q of [
        "ledger",
        "LEDGER release",
        "ops-9931",
        "rollback-release",
        tagged.session_id.slice(0, 13),
      ]) {
        const found = await list(`q=${encodeURIComponent(q)}`);
        expect(
          found.items.map((item: { id: string }) => item.id),
          q,
        ).toContain(tagged.session_id);
      }
      expect((await list("q=ledger%20nonexistentword")).items).toEqual([]);
      const byApp = await list("source_app=search-test");
      expect(byApp.items).toHaveLength(1);
      expect(byApp.items[0]).toMatchObject({
        id: tagged.session_id,
        first_prompt: "roll back the ledger service release",
        initiator: expect.stringMatching(/^user:/),
        responder: { type: "workflow", name: "rollback-release" },
        execution_count: 1,
        total_cost: 0,
      });
      const page = await list("limit=2&offset=1");
      expect(page).toMatchObject({ limit: 2, offset: 1, has_more: true });
      expect(page.items).toHaveLength(2);
      const stranger = await h.createKey();
      const theirs = (await call(h, stranger.auth, "GET", "/platform/api/v1/sessions?q=ledger")).json();
      expect(theirs.items).toEqual([]);
      for (const bad of ["limit=0", "limit=101", "offset=-1"]) {
        expect((await call(h, me.auth, "GET", `/platform/api/v1/sessions?${bad}`)).statusCode, bad).toBe(400);
      }
      // A ninth word is refused, not ignored (which would find sessions without it).
      const nine = encodeURIComponent("ledger a b c d e f g nowhere");
      const tooMany = await call(h, me.auth, "GET", `/platform/api/v1/sessions?q=${nine}`);
      expect(tooMany.statusCode).toBe(400);
      expect(tooMany.json()).toMatchObject({ errCode: "VALIDATION_FAILED", extras: [{ field: "q" }] });
      const eight = encodeURIComponent("ledger a b c d e f nowhere");
      expect((await call(h, me.auth, "GET", `/platform/api/v1/sessions?q=${eight}`)).json().items).toEqual(
        [],
      );
    });

    it("downloads an artifact by id or name (any case) byte for byte, and exports the chosen parts", async () => {
      const h = harness();
      const started = await ask(h, me.auth, { message: "roll back the inventory service" });
      await settledTrace(h, me.auth, started.trace_id);
      const binary = Buffer.concat([randomBytes(300_000), Buffer.from([0, 255, 0, 13, 10])]);
      const id = await storeArtifact(
        h.vigil.services.database.db,
        { sessionId: started.session_id, traceId: started.trace_id },
        { name: "Heap.Dump.bin", mimeType: "application/octet-stream", content: binary },
        new Date(),
      );
      const base = `/platform/api/v1/sessions/${started.session_id}/artifacts`;
      for (const ref of [id, "heap.dump.BIN"]) {
        const download = await h.vigil.app.inject({
          method: "GET",
          url: `${base}/${ref}/download`,
          headers: me.auth,
        });
        expect(download.statusCode).toBe(200);
        expect(download.headers["content-type"]).toBe("application/octet-stream");
        expect(download.headers["content-disposition"]).toBe('attachment; filename="Heap.Dump.bin"');
        expect(sha256(download.rawPayload)).toBe(sha256(binary));
      }
      const report = await h.vigil.app.inject({
        method: "GET",
        url: `${base}/restart-report.md/download`,
        headers: me.auth,
      });
      expect(report.body).toContain("rolled back inventory");
      expect((await call(h, me.auth, "GET", `${base}/nothing.txt/download`)).statusCode).toBe(404);

      const exportOf = (query: string) =>
        call(h, me.auth, "GET", `/platform/api/v1/sessions/${started.session_id}/export${query}`);
      const all = (await exportOf("")).json();
      expect(all.parts).toEqual(["notes", "report", "evidence"]);
      expect(all.notes.messages).toHaveLength(2);
      expect(all.report.structured_outputs[0]).toMatchObject({ summary: "rolled back inventory" });
      expect(all.report.documents).toEqual([
        expect.objectContaining({
          name: "Restart-Report.md",
          content: expect.stringContaining("rolled back inventory"),
        }),
      ]);
      expect(all.evidence.artifacts.find((a: { id: string }) => a.id === id)).toMatchObject({
        size_bytes: binary.byteLength,
        sha256: sha256(binary),
      });
      const some = (await exportOf("?parts=evidence,bogus,notes&format=json")).json();
      expect(some.parts).toEqual(["notes", "evidence"]);
      expect(some.report).toBeUndefined();
      expect((await exportOf("?parts=bogus")).json().parts).toEqual([]);
      const pdf = await exportOf("?format=pdf");
      expect(pdf.statusCode).toBe(400);
      expect(JSON.stringify(pdf.json())).toContain("format");
      const stranger = await h.createKey();
      const foreign = await call(
        h,
        stranger.auth,
        "GET",
        `/platform/api/v1/sessions/${started.session_id}/export`,
      );
      expect(foreign.statusCode).toBe(404);
      expect(
        (await call(h, me.auth, "GET", `/platform/api/v1/sessions/${randomUUID()}/export`)).statusCode,
      ).toBe(404);
      expect(
        (await call(h, stranger.auth, "GET", `/platform/api/v1/sessions/${started.session_id}`)).statusCode,
      ).toBe(404);
    });

    it("terminates a session twice: the running run is cancelled once and its trace settles closed", async () => {
      const h = harness();
      const before = loopback.hits.get("/slow") ?? 0;
      const started = await ask(h, me.auth, {
        message: "probe it",
        entity_refs: [{ type: "workflow", name: "slow-probe" }],
      });
      await waitFor(async () => ((loopback.hits.get("/slow") ?? 0) > before ? true : undefined));
      const terminate = `/platform/api/v1/sessions/${started.session_id}/terminate`;
      const first = await call(h, me.auth, "POST", `${terminate}?reason=wrong%20target`);
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toEqual({ cancelled_workflows: 1 });
      const trace = await settledTrace(h, me.auth, started.trace_id);
      expect(trace.execution).toMatchObject({
        status: "error",
        cancelled: true,
        error: "cancelled: wrong target",
      });
      expect(
        trace.nodes.every((node: { state: string }) => ["success", "error", "skipped"].includes(node.state)),
      ).toBe(true);
      const second = await call(h, me.auth, "POST", terminate);
      expect(second.json()).toEqual({ cancelled_workflows: 0 });
      const session = (
        await call(h, me.auth, "GET", `/platform/api/v1/sessions/${started.session_id}`)
      ).json();
      expect(session.executions[0]).toMatchObject({ cancelled: true, cancel_reason: "wrong target" });
      expect(session.computed).toMatchObject({ cancelled_count: 1, error_count: 1, running_count: 0 });
      expect(session.messages.at(-1).data).toEqual({
        event: "terminated",
        reason: "wrong target",
        cancelled_workflows: 1,
      });
      // The termination is the session's latest activity.
      expect(session.last_activity_at).toBe(session.messages.at(-1).created_at);
    });

    it("answers 503 when a running run could not be cancelled, and cancels it on a later call", async () => {
      const h = harness();
      const db = h.vigil.services.database.db;
      const before = loopback.hits.get("/slow") ?? 0;
      const started = await ask(h, me.auth, {
        message: "probe",
        entity_refs: [{ type: "workflow", name: "slow-probe" }],
      });
      await waitFor(async () => ((loopback.hits.get("/slow") ?? 0) > before ? true : undefined));
      // The database refuses to record this cancellation (a real failure, from a trigger).
      await db.execute(sql`create function refuse_jammed() returns trigger language plpgsql as $$
        begin if new.cancel_reason = 'jammed' then raise exception 'cannot cancel now'; end if; return new; end $$`);
      await db.execute(sql`create trigger refuse_jammed before update on executions
        for each row execute function refuse_jammed()`);
      const terminate = `/platform/api/v1/sessions/${started.session_id}/terminate`;
      try {
        const refused = await call(h, me.auth, "POST", `${terminate}?reason=jammed`);
        expect(refused.statusCode, refused.body).toBe(503);
        expect(refused.json()).toMatchObject({
          errCode: "UNAVAILABLE",
          extras: [
            { session_id: started.session_id, cancelled_workflows: 0, failed_trace_ids: [started.trace_id] },
          ],
        });
        expect((await readTrace(h, me.auth, started.trace_id)).execution.status).toBe("running");
      } finally {
        await db.execute(sql`drop trigger refuse_jammed on executions`);
        await db.execute(sql`drop function refuse_jammed()`);
      }
      const retried = await call(h, me.auth, "POST", `${terminate}?reason=retry`);
      expect(retried.json()).toEqual({ cancelled_workflows: 1 });
      expect((await settledTrace(h, me.auth, started.trace_id)).execution).toMatchObject({ cancelled: true });
    });

    const ownedSession = (suffix: string) => async (h: Harness, who: Owner) => {
      const started = await ask(h, who.auth, { message: "hello there" });
      return suffix.replace("{session}", started.session_id);
    };
    itEnforcesAuth(harness, {
      method: "POST",
      scope: "aios_automation_write",
      url: ASK,
      body: { message: "hello" },
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: "/platform/api/v1/sessions",
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: ownedSession("/platform/api/v1/sessions/{session}"),
      ownedResource: true,
    });
    itEnforcesAuth(harness, {
      method: "GET",
      scope: "aios_automation_read",
      url: ownedSession("/platform/api/v1/sessions/{session}/export"),
      ownedResource: true,
    });
  },
  { askFallbackAgent: FALLBACK },
);
