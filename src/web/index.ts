// The web console: the built front end (web/, built into dist/web) served at `/`, and the one route
// it needs beyond the API (who is signed in).
import type { FastifyInstance } from "fastify";
import { callerRoutes } from "./caller.ts";
import { consoleFileRoutes } from "./console-files.ts";

export async function registerWeb(app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
  await app.register(callerRoutes);
  await app.register(consoleFileRoutes, options);
}
