// A request that reaches a server once its close has begun (SIGTERM, a keep-alive connection still
// open) is answered 503 UNAVAILABLE in the API's own error body, so a sender or a load balancer can
// read it; the request that was already on its way on that connection still finishes.
import { connect } from "node:net";
import pino from "pino";
import { expect, it } from "vitest";
import { describeOnOneEngine, listenOnLoopback, waitFor } from "../../../test/harness.ts";

const logged: string[] = [];
const logger = pino({ level: "info" }, { write: (line: string) => logged.push(line) });

describeOnOneEngine(
  "a server that is closing",
  (harness) => {
    it("finishes the request in flight and answers the next one 503 UNAVAILABLE", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const { hostname, port } = new URL(await listenOnLoopback(h.vigil));
      const socket = connect(Number(port), hostname);
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString("utf8");
      });
      const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()));
      // The first request's head, without its body: the server's 100 Continue says it has read it.
      const body = '{"name":"late-org"}';
      socket.write(
        [
          "POST /api/v1/orgs HTTP/1.1",
          `Host: ${hostname}`,
          `Authorization: ${auth.authorization}`,
          "Content-Type: application/json",
          `Content-Length: ${body.length}`,
          "Expect: 100-continue",
          "",
          "",
        ].join("\r\n"),
      );
      await waitFor(async () => (text.startsWith("HTTP/1.1 100 Continue") ? true : undefined));
      const closing = h.vigil.app.close();
      await waitFor(async () => (h.vigil.app.server.listening ? undefined : true));
      // Its body, and a second request behind it on the same connection.
      socket.write(
        `${body}GET /app/sre/api/v1/alerts HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${auth.authorization}\r\n\r\n`,
      );
      await closed;
      await closing;
      const answers = text.split(/(?=HTTP\/1\.1 )/).slice(1);
      expect(answers.map((answer) => answer.slice(0, 12))).toEqual(["HTTP/1.1 201", "HTTP/1.1 503"]);
      const refused = answers[1] ?? "";
      expect(refused.toLowerCase()).toContain("connection: close");
      expect(JSON.parse(refused.slice(refused.indexOf("\r\n\r\n") + 4))).toEqual({
        error: "Vigil is shutting down: send the request again",
        code: "UNAVAILABLE",
        details: {},
      });
      // A refusal the answer explains is routine: a warning, not an error with its stack.
      const requests = logged
        .map((line) => JSON.parse(line) as { level: number; msg: string; reqId?: string })
        .filter((line) => line.reqId !== undefined && line.level >= 40);
      expect(requests.map((line) => [line.level, line.msg])).toEqual([[40, "request refused: unavailable"]]);
    });
  },
  {},
  { logger },
);
