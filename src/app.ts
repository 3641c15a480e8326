// Builds the Fastify instance: core plugins first, then one register() per domain.
import { randomUUID } from "node:crypto";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
} from "fastify";
import type { Logger } from "pino";
import { ALERT_WEBHOOK_TARGETS, registerAlerts } from "./alerts/index.ts";
import { installAppOnRegistration, registerApps, requireConfiguredApp } from "./apps/index.ts";
import { AUTOMATION_WEBHOOK_TARGETS, registerAutomation } from "./automation/index.ts";
import { registerAuthentication } from "./core/auth/authenticate.ts";
import { keysRoutes } from "./core/auth/keys-routes.ts";
import type { Services } from "./core/context.ts";
import { AppError } from "./core/errors.ts";
import { registerClosing } from "./core/http/closing.ts";
import { answerClientError, registerErrorHandling, renderError } from "./core/http/error-handler.ts";
import { registerInputRules } from "./core/http/input-rules.ts";
import { registerRequestMetrics } from "./core/http/metrics.ts";
import { registerOpenApi } from "./core/http/openapi.ts";
import { operationsRoutes } from "./core/http/operations.ts";
import { validationOptions } from "./core/http/validation.ts";
import { redactSecrets } from "./core/redact.ts";
import { registerIntegrations } from "./integrations/index.ts";
import { registerInvestigations } from "./investigations/index.ts";
import { registerMcp } from "./mcp/index.ts";
import { registerWeb } from "./web/index.ts";
import { registerWebhooks } from "./webhooks/index.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** `extraRoutes` lets an embedder (or a test) add its own routes behind the same plumbing. */
export async function buildApp(
  services: Services,
  logger: Logger,
  extraRoutes: FastifyPluginAsync[] = [],
): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: services.config.bodyLimitBytes,
    // Fastify turns Node's request timeout off by default: a body sent slowly, or never finished,
    // would hold its connection for good. Node answers 408 (answerClientError) when it fires.
    requestTimeout: services.config.requestTimeoutMs,
    // Node looks for overdue requests every 30 s by default, so a 408 came up to 30 s late: it looks
    // every tenth of the limit instead (at least every second), and the answer comes within that.
    http: {
      connectionsCheckingInterval: Math.min(
        30_000,
        Math.max(1000, Math.round(services.config.requestTimeoutMs / 10)),
      ),
    },
    // A request that arrives while the server closes gets registerClosing's 503, in the API's body.
    return503OnClosing: false,
    // Trust a caller's request id when it is sane, so logs join up across services.
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Idle keep-alive sockets close at shutdown; requests in flight finish first (registerClosing).
    forceCloseConnections: "idle",
    // A path parameter may be an alert's external_uid, up to 128 characters (getAlertV1 deep links);
    // the router's default of 100 answered 414 for the longer ones. Longer still is the route
    // schema's 400 naming the parameter, and past this the router's 414.
    routerOptions: { maxParamLength: 1024 },
    // A URL the router cannot take (bad percent-encoding, an over-long parameter): Fastify's own
    // answer quotes it whole, query included, and a sender may log the answer with a webhook token.
    // The answer says what is wrong without the URL.
    clientErrorHandler: answerClientError,
    frameworkErrors: (error, request, reply: FastifyReply) => {
      const status = error.statusCode ?? 500;
      const appError =
        status < 500
          ? new AppError(
              "BAD_REQUEST",
              "the request URL cannot be read: bad percent-encoding, or a part too long",
              {},
              status,
            )
          : new AppError("INTERNAL", "internal error", {}, status);
      request.log.info({ code: appError.code, reason: redactSecrets(error.message) }, "request rejected");
      return reply.status(status).send(renderError(request.url, appError));
    },
    ...validationOptions(),
  });

  app.decorate("services", services);
  // Node checks the headers' limit (60 s by default) apart from the whole request's: a shorter
  // request limit holds for the headers too.
  app.server.headersTimeout = Math.min(app.server.headersTimeout, services.config.requestTimeoutMs);
  // A request that arrived before the close finishes (SHUTDOWN_TIMEOUT_MS), then its connection closes.
  registerClosing(app);
  app.addHook("onSend", async (request, reply) => {
    reply.header("x-request-id", request.id);
  });
  registerErrorHandling(app);
  registerInputRules(app);
  registerAuthentication(app, services.database.readDb);
  registerRequestMetrics(app, services.metrics);
  await registerOpenApi(app, services.config.publicUrl);

  await app.register(operationsRoutes);
  await app.register(keysRoutes);
  await app.register(registerIntegrations);
  await app.register(registerWebhooks, {
    // Alert ingest refuses tenants that have not configured the app (spec, Events 1).
    targets: { ...requireConfiguredApp(ALERT_WEBHOOK_TARGETS), ...AUTOMATION_WEBHOOK_TARGETS },
  });
  await app.register(registerAlerts, { onRegistered: installAppOnRegistration });
  await app.register(registerAutomation);
  await app.register(registerInvestigations);
  await app.register(registerApps);
  await app.register(registerMcp);
  await app.register(registerWeb);
  for (const routes of extraRoutes) await app.register(routes);
  return app;
}
