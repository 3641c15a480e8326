// How a server that is closing (SIGTERM) treats the connections still open. Node closes only the
// keep-alive connections idle when the close begins: one that carried a request then stayed open
// after its answer, and a sender that keeps its connection (Alertmanager, Grafana, a load balancer)
// held the shutdown until SHUTDOWN_TIMEOUT_MS.
import type { FastifyInstance } from "fastify";
import { AppError } from "../errors.ts";

/**
 * Once the close begins, a request whose head arrives (on a keep-alive connection still open) is
 * refused 503 before any work, and one that arrived before it finishes; every answer then says
 * `Connection: close`, and a connection an answer leaves idle is closed at once. Needs
 * `return503OnClosing: false`, or Fastify answers the late requests itself, in a body of its own.
 */
export function registerClosing(app: FastifyInstance): void {
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onRequest", async () => {
    if (closing) throw new AppError("UNAVAILABLE", "Vigil is shutting down: send the request again", {}, 503);
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) reply.header("connection", "close");
  });
  // An answer whose head went out before the close (a slow download) still said keep-alive.
  app.addHook("onResponse", async () => {
    if (closing) app.server.closeIdleConnections();
  });
}
