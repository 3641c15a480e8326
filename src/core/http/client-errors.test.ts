// Requests Node's HTTP parser refuses before any route sees them, sent as raw bytes to a listening
// Vigil: they are answered in the API's error body, not the framework's own.
import { connect } from "node:net";
import { beforeAll, expect, it } from "vitest";
import { describeOnOneEngine, listenOnLoopback } from "../../../test/harness.ts";

/** Sends `request` as is and reads the whole answer until the server closes the connection. */
function rawRequest(port: number, request: Buffer): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), body: body ? JSON.parse(body) : null });
    });
  });
}

describeOnOneEngine("requests the HTTP parser refuses", (harness) => {
  let port = 0;
  beforeAll(async () => {
    port = Number(new URL(await listenOnLoopback(harness().vigil)).port);
  });

  it("answers headers over the size limit with 431 in the error body", async () => {
    const answer = await rawRequest(
      port,
      Buffer.from(`GET /api/v1/integrations HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`),
    );
    expect(answer).toEqual({
      status: 431,
      body: {
        error: "the request headers (URL included) are larger than the limit",
        code: "HEADERS_TOO_LARGE",
        details: {},
      },
    });
  });

  it("answers a request line with raw non-ASCII bytes with 400 in the error body", async () => {
    const answer = await rawRequest(
      port,
      Buffer.concat([
        Buffer.from("GET /app/sre/api/v1/alerts/"),
        Buffer.from("caf\u00e9", "utf8"),
        Buffer.from(" HTTP/1.1\r\nHost: x\r\n\r\n"),
      ]),
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "BAD_REQUEST", details: {} });
  });

  it("answers a console file path that climbs out of its folder as not found", async () => {
    const response = await harness().vigil.app.inject({ url: "/assets/..%2f..%2f..%2fpackage.json" });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: "ROUTE_NOT_FOUND" });
  });
});
