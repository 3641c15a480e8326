// exportSession's format: json is the only one, the default; any other is 400 saying what is
// supported, in the platform's JsonError body.
import { expect, it } from "vitest";
import { call, describeEachEngine } from "../../../test/harness.ts";

describeEachEngine("session export format", (harness) => {
  it("answers 400 naming format and json for an unsupported format, 200 for json or none", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const asked = await call(h, auth, "POST", "/platform/api/v1/platform/ask/start", {
      message: "hello there",
    });
    expect(asked.statusCode, asked.body).toBe(200);
    const url = `/platform/api/v1/sessions/${asked.json().session_id}/export`;

    for (const format of ["csv", "JSON"]) {
      const response = await call(h, auth, "GET", `${url}?format=${format}`);
      expect(response.statusCode, format).toBe(400);
      expect(response.json()).toEqual({
        msg: "format: must be one of json",
        errCode: "VALIDATION_FAILED",
        extras: [{ field: "format", location: "querystring", rule: "enum" }],
      });
    }
    for (const query of ["?parts=notes", "?parts=notes&format=json"]) {
      const response = await call(h, auth, "GET", `${url}${query}`);
      expect(response.statusCode, query).toBe(200);
      expect(response.json()).toMatchObject({ format: "json", parts: ["notes"] });
    }
  });
});
