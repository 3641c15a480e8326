// The redaction rule on its own: what counts as a credential, and that the rest of a line, JSON
// included, is left as it was.
import { describe, expect, it } from "vitest";
import { redactSecrets } from "./redact.ts";

const TOKEN = "whk_Q2hlY2tvdXQgaXMgZG93bi4gUGFnZSB0aGUgb25jYWxs";
const API_KEY = "vgl_c2VjcmV0LWFwaS1rZXktdGhhdC1tdXN0LW5vdC1sZWFr";

describe("redactSecrets", () => {
  it.each([
    ["apiKey", `/platform/api/v1/webhooks/trigger?apiKey=${TOKEN}`],
    ["apiKey after another parameter", `/platform/api/v1/webhooks/trigger?orgId=o-1&apiKey=${TOKEN}#top`],
    ["api_key", "/api/v1/alerts?api_key=operator-chosen-key-0001"],
    ["token", "/callback?token=abc.def.ghi"],
    ["access_token", "/callback?state=s&access_token=ya29.a0AfH6SM"],
    ["client_secret", "/oauth?client_id=c&client_secret=s3cr3t"],
    ["X-Amz-Signature", "https://bucket.s3.amazonaws.com/o?X-Amz-Credential=AKIA&X-Amz-Signature=9f8e7d"],
    ["password", "/login?user=ops&password=hunter2"],
  ])("redacts a URL parameter named %s", (_name, url) => {
    const redacted = redactSecrets(url);
    expect(redacted).toContain("=[REDACTED]");
    for (const secret of [
      TOKEN,
      "operator-chosen-key-0001",
      "abc.def.ghi",
      "ya29",
      "s3cr3t",
      "9f8e7d",
      "AKIA",
      "hunter2",
    ]) {
      expect(redacted).not.toContain(secret);
    }
  });

  it("keeps the other parameters, the path and the fragment", () => {
    expect(redactSecrets(`/platform/api/v1/webhooks/trigger?orgId=o-1&apiKey=${TOKEN}&limit=5#top`)).toBe(
      "/platform/api/v1/webhooks/trigger?orgId=o-1&apiKey=[REDACTED]&limit=5#top",
    );
  });

  it("redacts Vigil's own credentials by their shape anywhere, percent-encoded URLs included", () => {
    const text = `mistaken ${API_KEY} in /hooks/${TOKEN} and next=%2Fhook%3FapiKey%3D${TOKEN}`;
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(TOKEN.slice(4));
    expect(redacted).not.toContain(API_KEY.slice(4));
    expect(redacted).toBe(
      "mistaken vgl_[REDACTED] in /hooks/whk_[REDACTED] and next=%2Fhook%3FapiKey%3Dwhk_[REDACTED]",
    );
  });

  it("redacts bearer credentials, credential fields of JSON and URL passwords", () => {
    const line = JSON.stringify({
      msg: `upstream said: Authorization: Bearer ${TOKEN}`,
      headers: { authorization: "Basic b3BzOmh1bnRlcjI=", "x-api-key": API_KEY, accept: "*/*" },
      url: "postgres://vigil:db-password@db.internal:5432/vigil",
    });
    const redacted = redactSecrets(line);
    expect(JSON.parse(redacted)).toEqual({
      msg: "upstream said: Authorization: Bearer [REDACTED]",
      headers: { authorization: "[REDACTED]", "x-api-key": "[REDACTED]", accept: "*/*" },
      url: "postgres://vigil:[REDACTED]@db.internal:5432/vigil",
    });
  });

  it("leaves a line without credentials as it was, and keeps a redacted line valid JSON", () => {
    const plain = JSON.stringify({
      level: 30,
      req: { method: "GET", url: "/app/sre/api/v1/alerts?status=active&limit=20" },
      msg: "incoming request",
      token_hash: "3f2a",
    });
    expect(redactSecrets(plain)).toBe(plain);
    const escaped = JSON.stringify({ url: `/x?apiKey=${TOKEN}"quoted\\"&y=1`, note: 'say "hi"' });
    expect(JSON.parse(redactSecrets(escaped))).toEqual({
      url: '/x?apiKey=[REDACTED]"quoted\\"&y=1',
      note: 'say "hi"',
    });
  });
});
