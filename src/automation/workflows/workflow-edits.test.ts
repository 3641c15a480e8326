// A PUT of a workflow or of its draft changes only the fields it gives: read in sequence, and on
// PostgreSQL when it waits on another edit of the same workflow (a routing change or a draft field
// was lost to an edit of another field).
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueName } from "../../../test/automation-runs.ts";
import {
  type Auth,
  call,
  describeEachEngine,
  ENGINES,
  type Harness,
  startHarness,
} from "../../../test/harness.ts";
import { sendWhileHeld } from "../../../test/lock-wait.ts";
import type { Tx } from "../../core/db/database.ts";
import { workflows, workflowVersions } from "../tables.ts";

const BASE = "/platform/api/v1/workflows";

const STAGES = [{ id: "report", action_type: "write_report", config: { title: "t" } }];

/** An inactive workflow whose draft, version 1, holds a description, a stage and a routing example. */
async function createDraftWorkflow(h: Harness, auth: Auth) {
  const name = uniqueName("wf");
  const response = await call(h, auth, "POST", BASE, {
    name,
    routing_status: "inactive",
    description: "first",
    stages: STAGES,
    routing_examples: ["restart checkout"],
  });
  expect(response.statusCode, response.body).toBe(201);
  return name;
}

async function put(h: Harness, auth: Auth, url: string, body: object) {
  const response = await call(h, auth, "PUT", url, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** What the tests look at: the routing status and the draft's content. */
function edited(workflow: {
  routing_status: string;
  versions: { description: string; stages: unknown; routing_examples: string[] }[];
}) {
  const [draft] = workflow.versions;
  return {
    routing_status: workflow.routing_status,
    description: draft?.description,
    stages: draft?.stages,
    routing_examples: draft?.routing_examples,
  };
}

describeEachEngine("workflow edits", (harness) => {
  it("changes only the fields a PUT gives, on the workflow and on its draft", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const name = await createDraftWorkflow(h, auth);
    const content = { stages: STAGES, routing_examples: ["restart checkout"] };

    expect(edited(await put(h, auth, `${BASE}/${name}`, { description: "second" }))).toEqual({
      routing_status: "inactive",
      description: "second",
      ...content,
    });
    expect(edited(await put(h, auth, `${BASE}/${name}`, { routing_status: "active" }))).toEqual({
      routing_status: "active",
      description: "second",
      ...content,
    });
    const examples = ["roll back checkout"];
    expect(edited(await put(h, auth, `${BASE}/${name}/versions/1`, { routing_examples: examples }))).toEqual({
      routing_status: "active",
      description: "second",
      stages: STAGES,
      routing_examples: examples,
    });
  });
});

// On PostgreSQL, where two edits of one workflow run at once: the second waits for the first's
// transaction to commit, then writes its fields onto what the first wrote.
if (ENGINES.includes("postgres")) {
  describe("workflow edits at once [postgres]", () => {
    let h: Harness & { stop(): Promise<void> };
    beforeAll(async () => {
      h = await startHarness("postgres");
    });
    afterAll(async () => {
      await h?.stop();
    });

    /** `request`, sent while `write` is held (sendWhileHeld); answers its body, expecting 200. */
    async function okWhileHeld(
      write: (tx: Tx) => PromiseLike<unknown>,
      request: () => ReturnType<typeof call>,
    ) {
      const answer = await sendWhileHeld(h.vigil.services.database, write, request);
      expect(answer.statusCode, answer.body).toBe(200);
      return answer.json();
    }

    it("keeps a routing change that commits while a description edit waits", async () => {
      const { auth } = await h.createKey();
      const name = await createDraftWorkflow(h, auth);
      await put(h, auth, `${BASE}/${name}`, { routing_status: "active" });
      const answer = await okWhileHeld(
        (tx) => tx.update(workflows).set({ routingStatus: "inactive" }).where(eq(workflows.name, name)),
        () => call(h, auth, "PUT", `${BASE}/${name}`, { description: "second" }),
      );
      const expected = {
        routing_status: "inactive",
        description: "second",
        stages: STAGES,
        routing_examples: ["restart checkout"],
      };
      expect(edited(answer)).toEqual(expected);
      expect(edited((await call(h, auth, "GET", `${BASE}/${name}`)).json())).toEqual(expected);
    });

    it("keeps a draft's description that commits while an edit of its routing examples waits", async () => {
      const { auth } = await h.createKey();
      const name = await createDraftWorkflow(h, auth);
      const [workflow] = await h.vigil.services.database.db
        .select({ id: workflows.id })
        .from(workflows)
        .where(eq(workflows.name, name));
      const examples = ["roll back checkout"];
      const answer = await okWhileHeld(
        (tx) =>
          tx
            .update(workflowVersions)
            .set({ description: "second" })
            .where(and(eq(workflowVersions.workflowId, workflow?.id ?? ""), eq(workflowVersions.version, 1))),
        () => call(h, auth, "PUT", `${BASE}/${name}/versions/1`, { routing_examples: examples }),
      );
      const expected = {
        routing_status: "inactive",
        description: "second",
        stages: STAGES,
        routing_examples: examples,
      };
      expect(edited(answer)).toEqual(expected);
      expect(edited((await call(h, auth, "GET", `${BASE}/${name}`)).json())).toEqual(expected);
    });
  });
}
