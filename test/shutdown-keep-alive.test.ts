// SIGTERM while a sender that keeps its connection open (Alertmanager, Grafana, a load balancer) has
// a delivery in flight: the real `vigil serve` answers it, closes that connection itself, and exits
// without waiting for SHUTDOWN_TIMEOUT_MS, set here far beyond the time the test waits.
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { freePort } from "./alertmanager-process.ts";
import { createTestDatabase, ENGINES } from "./harness.ts";
import { killVigils, type Running, runVigil } from "./vigil-process.ts";

const KEY = "shutdown-keep-alive-test-bootstrap-key";
const SHUTDOWN_TIMEOUT_MS = 600_000;
// Generous for a loaded machine (a stop takes seconds), and below the 72 s after which Node closes
// an idle keep-alive connection by itself.
const WAIT_MS = 60_000;

vi.setConfig({ testTimeout: 400_000, hookTimeout: 300_000 });

afterAll(killVigils);

async function until(check: () => boolean | Promise<boolean>, what: string, running: Running) {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${running.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const ALERTMANAGER_BODY = JSON.stringify({
  version: "4",
  status: "firing",
  receiver: "vigil",
  alerts: [
    {
      status: "firing",
      labels: { alertname: "DiskFilling", instance: "node-1:9100", severity: "warning" },
      annotations: { summary: "disk filling on node-1" },
      startsAt: "2026-01-01T00:00:00Z",
      endsAt: "0001-01-01T00:00:00Z",
      fingerprint: "d15c000000000001",
    },
  ],
});

// The process's checks do not depend on the engine: PostgreSQL where the tests have one.
const engine = ENGINES.at(-1) ?? "pglite";

describe(`SIGTERM with a keep-alive delivery in flight [${engine}]`, () => {
  it("answers it with Connection: close, closes the connection, and exits without waiting for the timeout", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vigil-keep-alive-"));
    const database = engine === "postgres" ? await createTestDatabase("postgres") : null;
    await database?.database.close();
    try {
      const port = await freePort();
      const running = runVigil(["serve"], {
        DATA_DIR: dataDir,
        ...(database ? { DATABASE_URL: database.url ?? "", SECRET_KEY: "shutdown-keep-alive-secret" } : {}),
        PORT: String(port),
        BOOTSTRAP_API_KEY: KEY,
        SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
      });
      await until(() => running.output().includes('"msg":"vigil listening on'), "vigil to listen", running);
      const registered = await fetch(`http://127.0.0.1:${port}/app/sre/api/v1/alerts/webhook`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ source: "alertmanager", integration: "keep-alive" }),
      });
      expect(registered.status).toBe(201);
      const { platform_webhook_url } = (await registered.json()) as { platform_webhook_url: string };

      // The delivery's head without its body, on a connection the sender keeps open.
      const socket = connect(port, "127.0.0.1");
      let answer = "";
      let closedByServer = false;
      socket.on("data", (chunk) => {
        answer += chunk.toString("utf8");
      });
      socket.on("close", () => {
        closedByServer = true;
      });
      socket.write(
        [
          `POST /platform${platform_webhook_url} HTTP/1.1`,
          `Host: 127.0.0.1:${port}`,
          "Content-Type: application/json",
          `Content-Length: ${Buffer.byteLength(ALERTMANAGER_BODY)}`,
          "Connection: keep-alive",
          "Expect: 100-continue",
          "",
          "",
        ].join("\r\n"),
      );
      await until(() => answer.startsWith("HTTP/1.1 100 Continue"), "the head to be read", running);
      running.child.kill("SIGTERM");
      await until(() => running.output().includes("shutting down"), "shutdown to begin", running);
      socket.write(ALERTMANAGER_BODY);

      // The answer's head, once it is all there (the 100 Continue came first).
      const acceptedHead = () => {
        const after = answer.split(/(?=HTTP\/1\.1 )/)[1] ?? "";
        return after.includes("\r\n\r\n") ? after.slice(0, after.indexOf("\r\n\r\n")) : undefined;
      };
      await until(() => acceptedHead() !== undefined, "the answer", running);
      expect(acceptedHead()?.slice(0, 12)).toBe("HTTP/1.1 202");
      expect(acceptedHead()?.toLowerCase()).toContain("connection: close");
      await until(() => closedByServer, "the server to close the connection", running);
      let code: number | null | undefined;
      running.exited.then((exitCode) => {
        code = exitCode;
      });
      await until(() => code !== undefined, "vigil to exit", running);
      expect(code).toBe(0);
      expect(running.output()).toContain('"msg":"stopped"');
    } finally {
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
