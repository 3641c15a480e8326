// Ask's inputs and source_metadata are maps of text to text: every key is checked for its length and
// every value for its type and length, whatever characters the key holds (a line break included).
import { expect, it } from "vitest";
import { call } from "../../../test/automation-runs.ts";
import { describeEachEngine } from "../../../test/harness.ts";

const ASK = "/platform/api/v1/platform/ask/start";
/** Matches no agent or workflow: the session is kept, nothing runs. */
const NO_MATCH = { message: "zzz qqq", candidate_type: "agent" };

describeEachEngine("ask inputs and source_metadata", (harness) => {
  it("answers 400 naming the key for a value that is not text, too long, or a key out of bounds", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const longKey = "k".repeat(101);
    for (const [body, field, message] of [
      [{ inputs: { "a\nb": { x: [1, 2] } } }, "inputs.a\nb", "must be string"],
      [{ inputs: { "x\n": "v".repeat(10_001) } }, "inputs.x\n", "must NOT have more than 10000 characters"],
      [
        { inputs: { [longKey]: "v" } },
        `inputs.${longKey}`,
        "is not an allowed key: a key holds 1 to 64 characters",
      ],
      [{ inputs: { "": "v" } }, "inputs.", "is not an allowed key: a key holds 1 to 64 characters"],
      [
        { source_metadata: { "m\n": "v".repeat(1001) } },
        "source_metadata.m\n",
        "must NOT have more than 1000 characters",
      ],
      [{ source_metadata: { "m\r\n": 7 } }, "source_metadata.m\r\n", "must be string"],
      [
        { source_metadata: { [longKey]: "v" } },
        `source_metadata.${longKey}`,
        "is not an allowed key: a key holds 1 to 100 characters",
      ],
    ] as const) {
      const response = await call(h, auth, "POST", ASK, { ...NO_MATCH, ...body });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json()).toEqual({
        msg: `${field}: ${message}`,
        errCode: "VALIDATION_FAILED",
        extras: [{ field, location: "body", rule: expect.any(String) }],
      });
    }
  });

  it("takes keys and values at their limits, counted in characters, and shows the metadata on the session", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    // Each emoji is one character and two UTF-16 units.
    const sourceMetadata = { ["😀".repeat(100)]: "😀".repeat(1000) };
    const started = await call(h, auth, "POST", ASK, {
      ...NO_MATCH,
      inputs: { ["😀".repeat(64)]: "😀".repeat(10_000), "line\nbreak": "text" },
      source_metadata: sourceMetadata,
    });
    expect(started.statusCode, started.body).toBe(200);
    const session = await call(h, auth, "GET", `/platform/api/v1/sessions/${started.json().session_id}`);
    expect(session.json().source_metadata).toEqual(sourceMetadata);
  });

  it("states the key bounds in the API description", async () => {
    const document = (await harness().vigil.app.inject({ url: "/openapi.json" })).json();
    const { inputs, source_metadata } = document.components.schemas.AskPlatformRequest.properties;
    expect(inputs).toMatchObject({
      maxProperties: 50,
      additionalProperties: { type: "string", maxLength: 10_000 },
      description: expect.stringContaining("Each key holds 1 to 64 characters"),
    });
    expect(source_metadata).toMatchObject({
      maxProperties: 50,
      additionalProperties: { type: "string", maxLength: 1000 },
      description: expect.stringContaining("each key holds 1 to 100 characters"),
    });
  });
});
