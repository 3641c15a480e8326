// One error type with a closed list of codes. The HTTP error handler renders it as the spec's
// ErrorResponse (SRE and other routes) or JsonError (platform routes).

const STATUS_BY_CODE = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  INVALID_PAYLOAD: 400,
  BAD_REQUEST: 400,
  NOT_A_DRAFT: 400,
  ALREADY_APPROVED: 400,
  UNAUTHENTICATED: 401,
  INSUFFICIENT_SCOPE: 403,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  DRAFT_EXISTS: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  HEADERS_TOO_LARGE: 431,
  // Readiness of an automation target: 400 when a webhook or schedule is saved, 423 when triggered.
  TARGET_NOT_FOUND: 400,
  NO_INTEGRATIONS: 400,
  WORKFLOW_HAS_NO_STAGES: 400,
  WORKFLOW_HAS_UNBOUND_STAGE: 400,
  // Alert ingest to a workspace whose app is not configured: the trigger's "target not ready".
  APP_NOT_CONFIGURED: 423,
  INTERNAL: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, status?: number) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.status = status ?? STATUS_BY_CODE[code];
    this.details = details;
  }
}

export const notFound = (what: string, details: Record<string, unknown> = {}) =>
  new AppError("NOT_FOUND", `${what} not found`, details);

export const badRequest = (field: string, message: string) =>
  new AppError("VALIDATION_FAILED", `${field}: ${message}`, { field });

export const conflict = (message: string, details: Record<string, unknown> = {}) =>
  new AppError("CONFLICT", message, details);
