// The Ask start response as the spec's resources section words it: `plan` is the name of the matched
// plan (the agent or workflow that answers), empty when nothing matched; each candidate's
// candidate_type is a CandidateType.
import { expect, it } from "vitest";
import { call, createApprovedWorkflow } from "../../../test/automation-runs.ts";
import { describeEachEngine } from "../../../test/harness.ts";
import { CANDIDATE_TYPES } from "./schemas.ts";

const ASK = "/platform/api/v1/platform/ask/start";

describeEachEngine("ask start response", (harness) => {
  it("names the matched plan in `plan`: started, waiting for inputs, or nothing matched", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const report = { id: "report", action_type: "write_report", config: { name: "r.md", summary: "done" } };
    await createApprovedWorkflow(h, auth, { name: "purge-cache", stages: [report] });
    await createApprovedWorkflow(h, auth, {
      name: "scale-service",
      inputs: [{ name: "replicas", required: true, pattern: "^[0-9]+$" }],
      stages: [report],
    });

    const started = await call(h, auth, "POST", ASK, {
      message: "purge it",
      entity_refs: [{ type: "workflow", name: "purge-cache" }],
    });
    expect(started.statusCode, started.body).toBe(200);
    expect(started.json()).toMatchObject({
      decision: "pinned",
      plan: "purge-cache",
      trace_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      candidates: [{ name: "purge-cache", confidence: 1, candidate_type: "workflow" }],
    });

    const waiting = await call(h, auth, "POST", ASK, {
      message: "scale it",
      entity_refs: [{ type: "workflow", name: "scale-service" }],
    });
    expect(waiting.statusCode, waiting.body).toBe(200);
    expect(waiting.json()).toMatchObject({
      decision: "inputs_required",
      plan: "scale-service",
      inputs_required: ["replicas"],
      trace_id: "",
      run_id: "",
    });

    const nothing = await call(h, auth, "POST", ASK, { message: "zzz qqq", candidate_type: "agent" });
    expect(nothing.statusCode, nothing.body).toBe(200);
    expect(nothing.json()).toMatchObject({ decision: "no_match", plan: "", trace_id: "" });
  });

  it("describes candidate_type as a CandidateType in the API description", async () => {
    const response = await harness().vigil.app.inject({ method: "GET", url: "/openapi.json" });
    const schema = response.json().components.schemas.AskStartResponse;
    const candidateType = schema.properties.candidates.items.properties.candidate_type;
    const values =
      candidateType.enum ??
      candidateType.anyOf?.flatMap(
        (branch: { enum?: string[]; const?: string }) => branch.enum ?? [branch.const],
      );
    expect(values).toEqual([...CANDIDATE_TYPES]);
  });
});
