// Probes and metrics for operators: liveness, readiness (database reachable and schema current),
// and Prometheus text.
import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Services } from "../context.ts";
import { pendingMigrations } from "../db/migrate.ts";
import { registerClosing } from "./closing.ts";
import { registerErrorHandling } from "./error-handler.ts";

const Health = Type.Object({ status: Type.String() });
const Readiness = Type.Object({
  status: Type.Union([Type.Literal("ready"), Type.Literal("not_ready")]),
  checks: Type.Object({ database: Type.String(), migrations: Type.String() }),
});

export async function operationsRoutes(app: FastifyInstance): Promise<void> {
  const { database, metrics } = app.services;
  app.get(
    "/healthz",
    {
      config: { public: true },
      schema: { operationId: "getHealth", tags: ["operations"], response: { 200: Health } },
    },
    async () => ({ status: "ok" }),
  );

  app.get(
    "/readyz",
    {
      config: { public: true },
      schema: {
        operationId: "getReadiness",
        tags: ["operations"],
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      const checks = { database: "ok", migrations: "ok" };
      try {
        await database.ping();
        const pending = await pendingMigrations(database.db);
        if (pending.length > 0) checks.migrations = `pending: ${pending.join(", ")}`;
      } catch (err) {
        checks.database = `unreachable: ${(err as Error).message}`;
        checks.migrations = "unknown";
      }
      const ready = checks.database === "ok" && checks.migrations === "ok";
      return reply.status(ready ? 200 : 503).send({ status: ready ? "ready" : "not_ready", checks });
    },
  );

  app.get(
    "/metrics",
    { config: { public: true }, schema: { operationId: "getMetrics", tags: ["operations"], hide: true } },
    async (_request, reply) => {
      reply.header("content-type", metrics.registry.contentType);
      return metrics.registry.metrics();
    },
  );
}

/**
 * The probes and metrics on a port of their own (OPERATIONS_PORT): the worker role's only HTTP, and
 * for the other roles a port that a load balancer need not expose.
 */
export async function buildOperationsApp(services: Services, logger: Logger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger.child({ listener: "operations" }) as FastifyBaseLogger,
    // A scrape or probe that arrives while the server closes is answered by registerClosing.
    return503OnClosing: false,
  });
  app.decorate("services", services);
  registerErrorHandling(app);
  registerClosing(app);
  await app.register(operationsRoutes);
  await app.ready();
  return app;
}
