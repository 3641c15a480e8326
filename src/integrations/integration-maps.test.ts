// An integration's settings and credentials are maps of text to text: every key is checked for its
// length and every value for its type and length, whatever characters the key holds.
import { expect, it } from "vitest";
import { call, describeEachEngine } from "../../test/harness.ts";

const INTEGRATIONS = "/api/v1/integrations";

describeEachEngine("integration settings and credentials", (harness) => {
  it("answers 400 naming the key for a value that is not text, too long, or a key out of bounds", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const longKey = "k".repeat(129);
    for (const [maps, field, message] of [
      [{ settings: { "a\nb": { x: [1, 2] } } }, "settings.a\nb", "must be string"],
      [{ settings: { "b\n": "v".repeat(1025) } }, "settings.b\n", "must NOT have more than 1024 characters"],
      [{ settings: { "": "v" } }, "settings.", "is not an allowed key: a key holds 1 to 128 characters"],
      [
        { settings: { [longKey]: "v" } },
        `settings.${longKey}`,
        "is not an allowed key: a key holds 1 to 128 characters",
      ],
      [{ credentials: { "t\n": 5 } }, "credentials.t\n", "must be string"],
      [
        { credentials: { [longKey]: "s3cret" } },
        `credentials.${longKey}`,
        "is not an allowed key: a key holds 1 to 128 characters",
      ],
    ] as const) {
      const body = { name: "am-maps", type: "alertmanager", ...maps };
      const created = await call(h, auth, "POST", INTEGRATIONS, body);
      expect(created.statusCode, JSON.stringify(maps)).toBe(400);
      expect(created.json()).toEqual({
        error: `${field}: ${message}`,
        code: "VALIDATION_FAILED",
        details: { field, location: "body", rule: expect.any(String) },
      });
      const updated = await call(h, auth, "PUT", `${INTEGRATIONS}/am-maps`, body);
      expect(updated.statusCode, JSON.stringify(maps)).toBe(400);
    }
  });

  it("takes keys and values at their limits, counted in characters, and answers every setting", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    // Each emoji is one character and two UTF-16 units; a key may hold a line break.
    const settings = { ["😀".repeat(128)]: "😀".repeat(1024), "line\nbreak": "kept" };
    const created = await call(h, auth, "POST", INTEGRATIONS, {
      name: "am-limits",
      type: "alertmanager",
      settings,
      credentials: { ["😀".repeat(128)]: "😀".repeat(8192) },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ settings, has_credentials: true });
    const read = await call(h, auth, "GET", `${INTEGRATIONS}/am-limits`);
    expect(read.json().settings).toEqual(settings);
  });
});
