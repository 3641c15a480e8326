// The one place where errors become responses. Platform routes answer JsonError, all others
// ErrorResponse. Schema violations name the field; nothing a client sends yields a 500.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../errors.ts";

export function isPlatformPath(url: string): boolean {
  return url.startsWith("/platform/");
}

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

function fromValidation(issues: AjvIssue[], location: string): AppError {
  const [issue] = issues;
  if (!issue) return new AppError("VALIDATION_FAILED", `${location} is invalid`, { location });
  const path = issue.instancePath
    .split("/")
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  let message = issue.message ?? "is invalid";
  if (issue.keyword === "required") {
    path.push(String(issue.params.missingProperty));
    message = "is required";
  } else if (issue.keyword === "additionalProperties") {
    path.push(String(issue.params.additionalProperty));
    message = "is not a known field";
  }
  const field = path.join(".") || location;
  return new AppError("VALIDATION_FAILED", `${field}: ${message}`, { field, location, rule: issue.keyword });
}

export function toAppError(err: FastifyError | AppError | Error): AppError {
  if (err instanceof AppError) return err;
  const fastifyErr = err as FastifyError;
  if (fastifyErr.validation) {
    return fromValidation(fastifyErr.validation as AjvIssue[], fastifyErr.validationContext ?? "body");
  }
  const status = fastifyErr.statusCode;
  if (status && status >= 400 && status < 500) {
    if (status === 413)
      return new AppError("PAYLOAD_TOO_LARGE", "request body is larger than the limit", {}, 413);
    if (status === 415) return new AppError("UNSUPPORTED_MEDIA_TYPE", err.message, {}, 415);
    if (err instanceof SyntaxError || /JSON/.test(fastifyErr.code ?? "")) {
      return new AppError("INVALID_JSON", `body is not valid JSON: ${err.message}`, {}, 400);
    }
    return new AppError("BAD_REQUEST", err.message, {}, status);
  }
  return new AppError("INTERNAL", "internal error");
}

export function renderError(url: string, err: AppError) {
  if (isPlatformPath(url)) {
    const extras = Object.keys(err.details).length > 0 ? [err.details] : [];
    return { msg: err.message, errCode: err.code, extras };
  }
  return { error: err.message, code: err.code, details: err.details };
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const appErr = toAppError(err);
    if (appErr.status >= 500) request.log.error({ err }, "request failed");
    else request.log.info({ code: appErr.code, msg: appErr.message }, "request rejected");
    return reply.status(appErr.status).send(renderError(request.url, appErr));
  });
  app.setNotFoundHandler((request, reply) => {
    const err = new AppError("ROUTE_NOT_FOUND", `no route ${request.method} ${request.url.split("?")[0]}`);
    return reply.status(404).send(renderError(request.url, err));
  });
}
