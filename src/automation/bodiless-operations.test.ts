// The spec's operations that take no body (approveWorkflowVersion, createWorkflowVersion,
// terminateSession) answer as usual when a client sends `Content-Type: application/json` with an
// empty body, as many HTTP clients do for a POST without a payload.
import { expect, it } from "vitest";
import { type Auth, call, describeEachEngine, type Harness } from "../../test/harness.ts";

// `curl -d ''` sends the form type; some clients send text/plain for an empty body.
const JSON_TYPES = [
  "application/json",
  "application/json; charset=utf-8",
  "application/x-www-form-urlencoded",
  "text/plain",
];

const postEmpty = (h: Harness, auth: Auth, url: string, contentType: string) =>
  h.vigil.app.inject({ method: "POST", url, headers: { ...auth, "content-type": contentType }, payload: "" });

describeEachEngine("operations without a body", (harness) => {
  it("approve and new version answer 200 and 201 for an empty JSON body", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    for (const [n, contentType] of JSON_TYPES.entries()) {
      const name = `bodiless-${n}`;
      const created = await call(h, auth, "POST", "/platform/api/v1/workflows", { name });
      expect(created.statusCode, created.body).toBe(201);

      const approved = await postEmpty(
        h,
        auth,
        `/platform/api/v1/workflows/${name}/versions/1/approve`,
        contentType,
      );
      expect(approved.statusCode, approved.body).toBe(200);
      expect(approved.json()).toMatchObject({ name, approved_version: 1, draft_version: null });

      const drafted = await postEmpty(h, auth, `/platform/api/v1/workflows/${name}/versions`, contentType);
      expect(drafted.statusCode, drafted.body).toBe(201);
      expect(drafted.json()).toMatchObject({
        name,
        approved_version: 1,
        draft_version: 2,
        latest_version: 2,
      });

      // The state table still decides: a second draft is 409, approving an approved version 400.
      const again = await postEmpty(h, auth, `/platform/api/v1/workflows/${name}/versions`, contentType);
      expect(again.statusCode, again.body).toBe(409);
      expect(again.json()).toMatchObject({ errCode: "DRAFT_EXISTS" });
      const reapproved = await postEmpty(
        h,
        auth,
        `/platform/api/v1/workflows/${name}/versions/1/approve`,
        contentType,
      );
      expect(reapproved.statusCode, reapproved.body).toBe(400);
      expect(reapproved.json()).toMatchObject({ errCode: "ALREADY_APPROVED" });
    }
  });

  it("terminate answers 200 with cancelled_workflows 0 for an empty JSON body", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const asked = await call(h, auth, "POST", "/platform/api/v1/platform/ask/start", {
      message: "hello there",
    });
    expect(asked.statusCode, asked.body).toBe(200);
    const sessionId = asked.json().session_id;
    for (const contentType of JSON_TYPES) {
      const url = `/platform/api/v1/sessions/${sessionId}/terminate?reason=done`;
      const response = await postEmpty(h, auth, url, contentType);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ cancelled_workflows: 0 });
    }
  });

  it("an operation that takes a body still refuses an empty JSON body with 400", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const response = await postEmpty(h, auth, "/platform/api/v1/platform/ask/start", "application/json");
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toMatchObject({ errCode: "INVALID_JSON", extras: [] });
    // A body that is not JSON is 415 on any operation, bodiless or not.
    for (const url of ["/platform/api/v1/platform/ask/start", "/platform/api/v1/workflows/x/versions"]) {
      const form = await h.vigil.app.inject({
        method: "POST",
        url,
        headers: { ...auth, "content-type": "application/x-www-form-urlencoded" },
        payload: "message=hi",
      });
      expect(form.statusCode, url).toBe(415);
      expect(form.json(), url).toMatchObject({ errCode: "UNSUPPORTED_MEDIA_TYPE" });
    }
  });
});
