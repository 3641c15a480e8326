// A built-in run whose investigation is concluded through the status callback while the run waits on
// the model (the OpenAI-compatible stub on loopback, held by a gate): the callback's record stands,
// and the run's summary, which the session shows, says so in words.
import { afterAll, expect, it } from "vitest";
import { investigateNewAlert, MODEL_CONCLUSION, readAlert } from "../../test/alerts.ts";
import { type Auth, call, describeEachEngine, type Harness, waitFor } from "../../test/harness.ts";
import { type OpenAiStub, startOpenAiStub } from "../../test/openai-stub.ts";
import { findActiveKey } from "../core/auth/keys.ts";

const stub: OpenAiStub = await startOpenAiStub();
afterAll(() => stub.close());

const ANSWER = MODEL_CONCLUSION;

/**
 * Starts an investigation whose model call is held until the returned `release`; answers once the
 * run is waiting on the model. Triage's refinement (no tools) is refused, so it is no run's call.
 */
async function startHeldInvestigation(h: Harness, auth: Auth) {
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  stub.script([], (request) =>
    request.body?.tools?.length
      ? { content: JSON.stringify(ANSWER), until: gate }
      : { status: 500, body: { error: { message: "not this test" } } },
  );
  const { id, alertId } = await investigateNewAlert(h, auth, {
    service: "payments-api",
    cluster: "prod-eu-west-1",
  });
  await waitFor(async () =>
    stub.requests.some((request) => request.body?.tools?.length) ? true : undefined,
  );
  return { id, alertId, release };
}

/** The investigation, its run's trace and its session once the run has ended. */
async function endedRun(h: Harness, auth: Auth, id: string) {
  return waitFor(async () => {
    const investigation = (await call(h, auth, "GET", `/app/sre/api/v1/investigations/${id}`)).json();
    const trace = (
      await call(h, auth, "GET", `/platform/api/v1/executions/${investigation.guild_trace_id}`)
    ).json();
    if (trace.execution.status === "running") return undefined;
    const session = (
      await call(h, auth, "GET", `/platform/api/v1/sessions/${investigation.guild_session_id}`)
    ).json();
    return { investigation, trace, session };
  }, 60_000);
}

describeEachEngine(
  "a built-in run concluded meanwhile through the status callback",
  (harness) => {
    it("keeps the callback's record, and its summary says who concluded it and what they said", async () => {
      const h = harness();
      const { key, auth } = await h.createKey();
      const reporter = `user:${(await findActiveKey(h.vigil.services.database.db, key))?.userId}`;

      // Failed without a summary: why, and who said so.
      const failed = await startHeldInvestigation(h, auth);
      const reported = await call(h, auth, "POST", `/app/sre/api/v1/investigations/${failed.id}/status`, {
        status: "failed",
      });
      expect(reported.statusCode, reported.body).toBe(200);
      failed.release();
      const why = `Investigation failed: reported failed by ${reporter} without a summary`;
      const afterFailure = await endedRun(h, auth, failed.id);
      expect(afterFailure.investigation).toMatchObject({ status: "failed", result_summary: why });
      expect((await readAlert(h, auth, failed.alertId)).investigation).toMatchObject({
        status: "failed",
        result_summary: why,
      });
      const failedSummary = `The investigation was already failed by ${reporter} when this run concluded. Its summary: ${why}`;
      expect(afterFailure.trace.structured_output).toEqual({
        summary: failedSummary,
        impact: "",
        recommendations: "",
        confidence: "",
      });
      expect(afterFailure.session.summary).toBe(
        `1 run of workflow sre-alert-investigation: 1 completed, 0 failed, 0 running.\n${failedSummary}`,
      );

      // Completed with a summary of the reporter's own.
      const completed = await startHeldInvestigation(h, auth);
      await call(h, auth, "POST", `/app/sre/api/v1/investigations/${completed.id}/status`, {
        status: "completed",
        result_summary: "Concluded by the on-call engineer.",
      });
      completed.release();
      const afterCompletion = await endedRun(h, auth, completed.id);
      expect(afterCompletion.investigation).toMatchObject({
        status: "completed",
        result_summary: "Concluded by the on-call engineer.",
        structured_rca: null,
      });
      expect(afterCompletion.trace.structured_output.summary).toBe(
        `The investigation was already completed by ${reporter} when this run concluded. Its summary: Concluded by the on-call engineer.`,
      );
    });
  },
  { llm: { baseUrl: stub.baseUrl, model: "stub-model", apiKey: null } },
);
