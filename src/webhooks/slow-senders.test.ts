// Senders that never finish their request, over a real socket: the webhook trigger answers a missing
// or wrong token before reading the body, and any request whose body stops arriving is answered 408
// once REQUEST_TIMEOUT_MS has passed, so neither holds a connection for good.
import { connect } from "node:net";
import { afterEach, expect, it } from "vitest";
import { registerTrigger } from "../../test/alerts.ts";
import { describeOnOneEngine, type Harness, listenOnLoopback } from "../../test/harness.ts";

const sockets: ReturnType<typeof connect>[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

let listening: string | undefined;
const baseOf = async (h: Harness) => {
  listening ??= await listenOnLoopback(h.vigil);
  return listening;
};

/** Sends `head` and a part of the body it announces, never the rest; answers what comes back first. */
function stalledRequest(base: string, path: string, headers: Record<string, string>): Promise<string> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  sockets.push(socket);
  const lines = [`POST ${path} HTTP/1.1`, `Host: ${hostname}`, "Content-Type: application/json"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push("Content-Length: 100", "", '{"a":');
  socket.write(lines.join("\r\n"));
  return new Promise((resolve, reject) => {
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString("utf8");
      // The whole answer: headers, then the JSON body they announce.
      const [head, body] = answer.split("\r\n\r\n");
      const length = /content-length: (\d+)/i.exec(head ?? "")?.[1];
      if (body !== undefined && length && Buffer.byteLength(body) >= Number(length)) resolve(answer);
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
  });
}

describeOnOneEngine(
  "senders that never finish their request",
  (harness) => {
    it("answers a trigger without a valid token 401 before its body arrives", async () => {
      const base = await baseOf(harness());
      const wrong = await stalledRequest(base, "/platform/api/v1/webhooks/trigger?apiKey=whk_wrong", {});
      expect(wrong).toMatch(/^HTTP\/1\.1 401 /);
      expect(wrong).toContain('"errCode":"UNAUTHENTICATED"');
      const missing = await stalledRequest(base, "/platform/api/v1/webhooks/trigger", {});
      expect(missing).toMatch(/^HTTP\/1\.1 401 /);
      expect(missing).toContain("missing webhook token");
    });

    it("answers 408 when a body stops arriving, with a valid token or an API key", async () => {
      const h = harness();
      const base = await baseOf(h);
      const { auth } = await h.createKey();
      const trigger = await registerTrigger(h, auth, { source: "alertmanager", integration: "slow" });
      // Node looks for overdue requests every tenth of the limit (at least every second).
      const [delivery, api] = await Promise.all([
        stalledRequest(base, trigger, {}),
        stalledRequest(base, "/api/v1/orgs", { Authorization: auth.authorization }),
      ]);
      expect(delivery).toMatch(/^HTTP\/1\.1 408 /);
      expect(delivery).toContain("REQUEST_TIMEOUT");
      expect(api).toMatch(/^HTTP\/1\.1 408 /);
      // The server still answers others.
      const health = await fetch(`${base}/healthz`);
      expect(health.status).toBe(200);
    }, 120_000);
  },
  { requestTimeoutMs: 1000 },
);
