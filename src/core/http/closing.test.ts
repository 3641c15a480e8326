// A request that reaches a server while it closes (SIGTERM with a connection still open) is answered
// 503 UNAVAILABLE in the API's own error body, so a sender or load balancer can read it.
import { connect } from "node:net";
import { expect, it } from "vitest";
import { describeOnOneEngine, listenOnLoopback, waitFor } from "../../../test/harness.ts";

describeOnOneEngine("a server that is closing", (harness) => {
  it("answers 503 UNAVAILABLE in the error body of the route's area", async () => {
    const h = harness();
    const { auth } = await h.createKey();
    const { hostname, port } = new URL(await listenOnLoopback(h.vigil));
    // A request whose body is still on its way when the close begins: the server's 100 Continue says
    // it has read the headers.
    const body = '{"name":"late-org"}';
    const socket = connect(Number(port), hostname);
    let text = "";
    const answer = new Promise<string>((resolve) => {
      socket.on("data", (chunk) => {
        text += chunk.toString("utf8");
      });
      // What came after the 100 Continue.
      socket.on("close", () => resolve(text.slice(text.indexOf("HTTP/1.1", 1))));
    });
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
    socket.write(body);
    const answered = await answer;
    await closing;
    expect(answered).toMatch(/^HTTP\/1\.1 503 /);
    expect(answered.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(answered.slice(answered.indexOf("\r\n\r\n") + 4))).toEqual({
      error: "Vigil is shutting down: send the request again",
      code: "UNAVAILABLE",
      details: {},
    });
  });
});
