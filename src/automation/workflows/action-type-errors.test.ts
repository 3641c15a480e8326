// An action type outside the built-ins and the registered-name pattern: the 400 lists every built-in
// and says what else may be given (it listed the first built-in alone).
import { expect, it } from "vitest";
import { call, describeOnOneEngine } from "../../../test/harness.ts";
import { ACTION_TYPES } from "../schemas.ts";

describeOnOneEngine("a workflow stage's unknown action type", (harness) => {
  it("is 400 naming the field, listing the built-in actions and the form of a registered one", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const response = await call(h, auth, "POST", "/platform/api/v1/workflows", {
      name: "wf-unknown-action",
      stages: [{ id: "a", action_type: "nope" }],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      msg: `stages.0.action_type: must be one of ${ACTION_TYPES.join(", ")}, or an action Vigil's domains add, such as sre.investigation_gather`,
      errCode: "VALIDATION_FAILED",
      extras: [expect.objectContaining({ field: "stages.0.action_type" })],
    });
  });
});
