// The one place where errors become responses. Platform routes answer JsonError, all others
// ErrorResponse. Schema violations name the field; nothing a client sends yields a 500.
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { isDatabaseUnavailable } from "../db/pg-errors.ts";
import { AppError } from "../errors.ts";
import { jsonSyntaxReason } from "../json-syntax.ts";
import { wordsOfPattern } from "./pattern-words.ts";

export function isPlatformPath(url: string): boolean {
  return url.startsWith("/platform/");
}

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
  /** Set by ajv's verbose option: the failing keyword's value, and the schema holding it. */
  schema?: unknown;
  parentSchema?: { patternProperties?: Record<string, unknown> };
}

/**
 * What a map's keys may be, for a key its pattern refused: a KeyedRecord's keys hold 1 to N
 * characters, which "is not a known field" would hide.
 */
function keyRule(issue: AjvIssue): string | null {
  const patterns = Object.keys(issue.parentSchema?.patternProperties ?? {});
  const bound = patterns.length === 1 ? /^\^\[\\s\\S\]\{1,(\d+)\}\$$/.exec(patterns[0] as string) : null;
  return bound ? `is not an allowed key: a key holds 1 to ${bound[1]} characters` : null;
}

/** The values a schema admits when it is a literal, an enum, null, or a union of those; else null. */
function literalValues(schema: unknown): unknown[] | null {
  if (schema === null || typeof schema !== "object") return null;
  const record = schema as Record<string, unknown>;
  if ("const" in record) return [record.const];
  if (Array.isArray(record.enum)) return record.enum;
  if (record.type === "null") return [null];
  const branches = record.anyOf ?? record.oneOf;
  return Array.isArray(branches) ? literalsOfBranches(branches) : null;
}

function literalsOfBranches(branches: unknown[]): unknown[] | null {
  const values: unknown[] = [];
  for (const branch of branches) {
    const more = literalValues(branch);
    if (!more) return null;
    values.push(...more);
  }
  return values;
}

/**
 * A value outside a union of literals fails every branch, and ajv reports each branch ("must be
 * equal to constant", or "must be string" for a number) before the union itself. With allErrors
 * off the last issue is the keyword that decided: when it is an enum, a literal, or a union whose
 * branches are all literals, the answer lists the allowed values instead.
 */
function choiceIssue(issues: AjvIssue[]): Choice | null {
  const last = issues.at(-1);
  // A value inside an optional object or map (Nullable: it or null) fails that branch first, and
  // the union last: the first issue, deeper than the union, is the value's own and decides.
  const first = issues[0];
  if (first && last?.keyword === "anyOf" && first.instancePath !== last.instancePath) {
    return leafChoice(first);
  }
  return last ? choiceOf(last) : null;
}

/** A closed list of values, or one that also admits what `or` says (a union of literals and a pattern). */
interface Choice {
  issue: AjvIssue;
  allowed: unknown[];
  or?: string;
}

/** An enum or a literal that failed by itself. */
function leafChoice(issue: AjvIssue): Choice | null {
  if (issue.keyword === "enum" && Array.isArray(issue.params.allowedValues)) {
    return { issue, allowed: issue.params.allowedValues };
  }
  if (issue.keyword === "const" && "allowedValue" in issue.params) {
    return { issue, allowed: [issue.params.allowedValue] };
  }
  return null;
}

function choiceOf(issue: AjvIssue): Choice | null {
  // A union of one literal is the literal itself (exportSession's format=json).
  const leaf = leafChoice(issue);
  if (leaf) return leaf;
  if ((issue.keyword === "anyOf" || issue.keyword === "oneOf") && Array.isArray(issue.schema)) {
    const allowed = literalsOfBranches(issue.schema);
    if (allowed) return { issue, allowed };
    return mixedChoice(issue, issue.schema);
  }
  return null;
}

/**
 * Literals beside one described branch of another kind (an action type: a built-in's name, or a
 * name a domain registers): the literals listed, and the other branch by its description.
 */
function mixedChoice(issue: AjvIssue, branches: unknown[]): Choice | null {
  const literals = branches.map(literalValues);
  const others = branches.filter((_, index) => literals[index] === null) as {
    type?: unknown;
    description?: unknown;
  }[];
  const listed = literals.flatMap((values) => values ?? []);
  // Only a text branch: an object's own issues (Nullable of an object or a map) say more.
  const or = others.length === 1 && others[0]?.type === "string" ? others[0].description : undefined;
  return listed.length > 0 && typeof or === "string" ? { issue, allowed: listed, or: lowerFirst(or) } : null;
}

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);

function fromValidation(issues: AjvIssue[], location: string): AppError {
  const choice = choiceIssue(issues);
  const issue = choice?.issue ?? issues[0];
  if (!issue) return new AppError("VALIDATION_FAILED", `${location} is invalid`, { location });
  const path = issue.instancePath
    .split("/")
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (choice) {
    const field = path.join(".") || location;
    const allowed = choice.allowed.map((value) =>
      typeof value === "string" ? value : JSON.stringify(value),
    );
    const or = choice.or ? `, or ${choice.or}` : "";
    return new AppError("VALIDATION_FAILED", `${field}: must be one of ${allowed.join(", ")}${or}`, {
      field,
      location,
      rule: "enum",
    });
  }
  let message = issue.message ?? "is invalid";
  if (issue.keyword === "required") {
    path.push(String(issue.params.missingProperty));
    message = "is required";
  } else if (issue.keyword === "additionalProperties") {
    path.push(String(issue.params.additionalProperty));
    message = keyRule(issue) ?? "is not a known field";
  } else if (issue.keyword === "pattern") {
    const words = wordsOfPattern(issue.params.pattern);
    if (words) message = `must be ${words}`;
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
    if (status === 415) {
      return new AppError(
        "UNSUPPORTED_MEDIA_TYPE",
        "unsupported content type: send the body as application/json",
      );
    }
    if (err instanceof SyntaxError || /JSON/.test(fastifyErr.code ?? "")) {
      // Fastify's own JSON errors repeat it with the content type; a SyntaxError says where.
      const reason = err instanceof SyntaxError ? `: ${jsonSyntaxReason(err)}` : "";
      return new AppError("INVALID_JSON", `body is not valid JSON${reason}`, {}, 400);
    }
    return new AppError("BAD_REQUEST", err.message, {}, status);
  }
  if (isDatabaseUnavailable(err)) {
    return new AppError(
      "UNAVAILABLE",
      "the database cannot be reached, refuses Vigil's connections or is at its connection limit: send the request again",
    );
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

/**
 * The database's own report of a failed query (message, SQLSTATE, the constraint, table or column it
 * names), found down the `cause` chain: drizzle wraps it in an error whose message is mostly the
 * query. Its `detail` is left out, as it may quote row values.
 */
function databaseErrorOf(err: unknown): Record<string, string> | null {
  const seen = new Set<unknown>();
  for (let current = err; current instanceof Error && !seen.has(current); current = current.cause) {
    seen.add(current);
    const fields = current as Error & Record<string, unknown>;
    // Both drivers (pg and PGlite) report a server error with its severity and SQLSTATE code.
    if (typeof fields.severity === "string" && typeof fields.code === "string") {
      const report: Record<string, string> = { message: current.message, code: fields.code };
      for (const key of ["constraint", "table", "column"]) {
        const value = fields[key];
        if (typeof value === "string") report[key] = value;
      }
      return report;
    }
  }
  return null;
}

/**
 * The challenge every 401 carries (RFC 9110 requires one; RFC 6750 spells it for bearer tokens):
 * MCP clients and HTTP libraries read it to learn how to authenticate. A request that sent
 * credentials learns they were refused; one that sent none is only told the scheme.
 */
function bearerChallenge(request: FastifyRequest): string {
  const query = request.query as Record<string, unknown> | undefined;
  const sentCredentials = Boolean(request.headers.authorization) || Boolean(query?.apiKey);
  return sentCredentials ? 'Bearer realm="vigil", error="invalid_token"' : 'Bearer realm="vigil"';
}

/** The longest path a 404 repeats. */
const MAX_ECHOED_PATH = 256;

/** ROUTE_NOT_FOUND naming the method and path; a long path is cut, as it fills logs to no purpose. */
export function routeNotFound(request: FastifyRequest): AppError {
  const path = request.url.split("?")[0] ?? "";
  const shown = path.length > MAX_ECHOED_PATH ? `${path.slice(0, MAX_ECHOED_PATH)}...` : path;
  return new AppError("ROUTE_NOT_FOUND", `no route ${request.method} ${shown}`);
}

/** When a request refused for want of the database is worth sending again. */
const DATABASE_RETRY_AFTER_SECONDS = 5;

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let appErr = toAppError(err);
    // The sender can only send less when told how much is allowed (the trigger's limit is its own).
    const limit = request.routeOptions.bodyLimit;
    if (appErr.status === 413 && !(err instanceof AppError) && limit) {
      appErr = new AppError(
        "PAYLOAD_TOO_LARGE",
        `request body is larger than the limit of ${limit} bytes`,
        {},
        413,
      );
    }
    // toAppError answers UNAVAILABLE for an error of its own only when the database is unavailable.
    if (appErr.code === "UNAVAILABLE" && !(err instanceof AppError)) {
      // The request may succeed when sent again: a sender that honours Retry-After, or retries any
      // 5xx as Alertmanager does, sends it again (a delivery that arrives twice is deduplicated).
      reply.header("retry-after", String(DATABASE_RETRY_AFTER_SECONDS));
      request.log.warn(
        { err, database: databaseErrorOf(err) ?? undefined },
        "request failed: database unavailable",
      );
    } else if (err instanceof AppError && err.code === "UNAVAILABLE") {
      // Refused on purpose (shutting down, a run that would not cancel): the answer says to retry.
      request.log.warn({ code: appErr.code, reason: appErr.message }, "request refused: unavailable");
    } else if (appErr.status >= 500) {
      const database = databaseErrorOf(err);
      request.log.error(database ? { err, database } : { err }, "request failed");
    } else request.log.info({ code: appErr.code, reason: appErr.message }, "request rejected");
    if (appErr.status === 401) reply.header("www-authenticate", bearerChallenge(request));
    return reply.status(appErr.status).send(renderError(request.url, appErr));
  });
  app.setNotFoundHandler((request, reply) => {
    return reply.status(404).send(renderError(request.url, routeNotFound(request)));
  });
}

/**
 * A request Node's HTTP parser refused before any route saw it (headers over the size limit, bytes
 * an HTTP request line may not hold, a client too slow to send its headers). The URL is unknown
 * then, so the answer is an ErrorResponse; it is written to the socket, which then closes.
 */
export function answerClientError(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === "ECONNRESET" || socket.destroyed) return;
  const appError =
    err.code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new AppError("REQUEST_TIMEOUT", "the request did not arrive in time")
      : err.code === "HPE_HEADER_OVERFLOW"
        ? new AppError("HEADERS_TOO_LARGE", "the request headers (URL included) are larger than the limit")
        : new AppError(
            "BAD_REQUEST",
            "the request cannot be read as HTTP: a character the request line or a header may not hold",
          );
  this.log.info({ code: appError.code, reason: err.code }, "request rejected");
  if (socket.writable) {
    const body = JSON.stringify(renderError("/", appError));
    socket.write(
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
