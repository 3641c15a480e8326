// A server that is closing (SIGTERM) finishes the requests already on their way, then closes their
// connections, even when the client would keep them open (Alertmanager, Grafana and load balancers
// do): the shutdown must not wait for SHUTDOWN_TIMEOUT_MS. A request that reaches it on a connection
// still open is answered 503 UNAVAILABLE in the API's own error body, so a sender or a load balancer
// can read it.
import { connect, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import type { FastifyInstance } from "fastify";
import pino from "pino";
import { expect, it } from "vitest";
import { describeOnOneEngine, listenOnLoopback, waitFor } from "../../../test/harness.ts";
import { buildOperationsApp } from "./operations.ts";

const logged: string[] = [];
const logger = pino({ level: "info" }, { write: (line: string) => logged.push(line) });

// The body of a download that is still being sent when the close begins.
const download = new PassThrough();
async function slowDownloadRoute(app: FastifyInstance) {
  app.get("/test/slow-download", { config: { public: true } }, async (_request, reply) =>
    reply.type("text/plain").send(download),
  );
}

interface Client {
  socket: Socket;
  /** Everything the server sent so far. */
  text: () => string;
  /** True once the server has closed the connection (the client never closes it). */
  closed: () => boolean;
}

function openClient(url: string): Client {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  let text = "";
  let closed = false;
  socket.on("data", (chunk) => {
    text += chunk.toString("utf8");
  });
  socket.on("close", () => {
    closed = true;
  });
  return { socket, text: () => text, closed: () => closed };
}

/** Resolves once the server has read `bytes` bytes from the client's connection. */
async function serverRead(app: FastifyInstance, client: Client, bytes: number): Promise<void> {
  await waitFor(async () => {
    const { localPort } = client.socket;
    const [server] = serverSockets.get(app)?.filter((socket) => socket.remotePort === localPort) ?? [];
    return server && server.bytesRead >= bytes ? true : undefined;
  });
}
const serverSockets = new Map<FastifyInstance, Socket[]>();
function trackSockets(app: FastifyInstance): void {
  const sockets: Socket[] = [];
  serverSockets.set(app, sockets);
  app.server.on("connection", (socket: Socket) => sockets.push(socket));
}

/** Each answer on a connection: its status line, its headers (lower case) and its body. */
function answersOf(text: string) {
  return text
    .split(/(?=HTTP\/1\.1 \d{3} )/)
    .filter(Boolean)
    .map((answer) => {
      const [head = "", body = ""] = answer.split("\r\n\r\n");
      const [status = "", ...headers] = head.split("\r\n");
      return { status: status.slice(9, 12), headers: headers.join("\n").toLowerCase(), body };
    });
}

describeOnOneEngine(
  "a server that is closing",
  (harness) => {
    it("refuses a scrape that arrives on the operations port 503 UNAVAILABLE and closes its connection", async () => {
      const h = harness();
      const operations = await buildOperationsApp(h.vigil.services, logger);
      trackSockets(operations);
      await operations.listen({ port: 0, host: "127.0.0.1" });
      const late = openClient(`http://127.0.0.1:${(operations.server.address() as { port: number }).port}`);
      const head = "GET /metrics HTTP/1.1\r\nHost: localhost\r\n";
      late.socket.write(head);
      await serverRead(operations, late, head.length);
      const closing = operations.close();
      await waitFor(async () => (operations.server.listening ? undefined : true));
      late.socket.write("\r\n");
      await waitFor(async () => (late.closed() ? true : undefined));
      await closing;
      const answers = answersOf(late.text());
      expect(answers.map((answer) => answer.status)).toEqual(["503"]);
      expect(answers[0]?.headers).toContain("connection: close");
      expect(JSON.parse(answers[0]?.body ?? "")).toEqual({
        error: "Vigil is shutting down: send the request again",
        code: "UNAVAILABLE",
        details: {},
      });
    });

    it("finishes the requests in flight, closes their connections, and answers a late one 503 UNAVAILABLE", async () => {
      const h = harness();
      const { auth } = await h.createKey();
      const app = h.vigil.app;
      trackSockets(app);
      const url = await listenOnLoopback(h.vigil);

      // In flight: a request's head, without its body; the server's 100 Continue says it has read it.
      const inFlight = openClient(url);
      const body = '{"name":"late-org"}';
      inFlight.socket.write(
        [
          "POST /api/v1/orgs HTTP/1.1",
          "Host: localhost",
          `Authorization: ${auth.authorization}`,
          "Content-Type: application/json",
          `Content-Length: ${body.length}`,
          "Expect: 100-continue",
          "",
          "",
        ].join("\r\n"),
      );
      await waitFor(async () => (inFlight.text().startsWith("HTTP/1.1 100 Continue") ? true : undefined));
      // A download whose head (keep-alive) and first part went out before the close.
      const downloading = openClient(url);
      downloading.socket.write("GET /test/slow-download HTTP/1.1\r\nHost: localhost\r\n\r\n");
      download.write("first part;");
      await waitFor(async () => (downloading.text().includes("first part;") ? true : undefined));
      // Late: a request whose head is only partly there when the close begins.
      const late = openClient(url);
      const lateHead = "GET /app/sre/api/v1/alerts HTTP/1.1\r\nHost: localhost\r\n";
      late.socket.write(lateHead);
      await serverRead(app, late, lateHead.length);

      const closing = app.close();
      await waitFor(async () => (app.server.listening ? undefined : true));
      inFlight.socket.write(body);
      download.end("last part");
      late.socket.write(`Authorization: ${auth.authorization}\r\n\r\n`);
      // The server closes every connection once its answer is done; the clients would keep them.
      await waitFor(async () =>
        [inFlight, downloading, late].every((client) => client.closed()) ? true : undefined,
      );
      await closing;

      const created = answersOf(inFlight.text()).slice(1);
      expect(created.map((answer) => answer.status)).toEqual(["201"]);
      expect(created[0]?.headers).toContain("connection: close");
      const downloaded = answersOf(downloading.text());
      expect(downloaded.map((answer) => answer.status)).toEqual(["200"]);
      expect(downloaded[0]?.headers).toContain("connection: keep-alive");
      expect(downloaded[0]?.body).toContain("last part");
      const refused = answersOf(late.text());
      expect(refused.map((answer) => answer.status)).toEqual(["503"]);
      expect(refused[0]?.headers).toContain("connection: close");
      expect(JSON.parse(refused[0]?.body ?? "")).toEqual({
        error: "Vigil is shutting down: send the request again",
        code: "UNAVAILABLE",
        details: {},
      });
      // A refusal the answer explains is routine: a warning, not an error with its stack.
      const requests = logged
        .map((line) => JSON.parse(line) as { level: number; msg: string; reqId?: string })
        .filter((line) => line.reqId !== undefined && line.level >= 40);
      expect(requests.map((line) => [line.level, line.msg])).toEqual([
        [40, "request refused: unavailable"],
        [40, "request refused: unavailable"],
      ]);
    });
  },
  {},
  { logger, extraRoutes: [slowDownloadRoute] },
);
