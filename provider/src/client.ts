// The provider's only way to the service: JSON over HTTP with the API key, every request in the
// configured workspace (`?orgId=`). A failed request becomes a diagnostic that names the attribute
// when the service's error body names a field the resource has. A 404 means "gone" only when it is
// about the object itself: the service answers an unknown workspace, or one the key may not act in,
// with a 404 too, and reading that as "deleted" would drop every resource from state.
import { DiagnosticError, error, type PathStep } from "./diagnostics.ts";

export interface Settings {
  workspaceId: string | null;
  /** As configured; null when neither the setting nor SVC_SERVICE_URL gives one. */
  serviceUrl: string | null;
  apiKey: string | null;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: {
      error?: string;
      code?: string;
      details?: { field?: string; orgId?: string; [key: string]: unknown };
    } | null,
    readonly request: string,
  ) {
    super(`${request} answered ${status}${body?.error ? `: ${body.error}` : ""}`);
  }
}

export class Client {
  constructor(
    readonly baseUrl: string,
    readonly workspaceId: string,
    private readonly apiKey: string | null,
  ) {}

  async request<T>(
    method: string,
    path: string,
    options: { body?: unknown; query?: Record<string, string> } = {},
  ) {
    const url = new URL(this.baseUrl + path);
    url.searchParams.set("orgId", this.workspaceId);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
    } catch (thrown) {
      const cause =
        thrown instanceof Error && thrown.cause instanceof Error ? `: ${thrown.cause.message}` : "";
      throw new DiagnosticError([
        error(`Cannot reach the service at ${this.baseUrl}`, `${method} ${path} failed${cause}`),
      ]);
    }
    const text = await response.text();
    const body = text ? safeJson(text) : null;
    if (!response.ok) throw new ApiError(response.status, body as never, `${method} ${path}`);
    return body as T;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { error: text.slice(0, 500) };
  }
}

/** The workspace the service could not act in: a 404 whose details name the orgId. */
function refusedWorkspace(thrown: ApiError): string | null {
  const orgId = thrown.body?.details?.orgId;
  return thrown.status === 404 && typeof orgId === "string" ? orgId : null;
}

/**
 * True when the service answered that the object itself does not exist: a 404 NOT_FOUND whose
 * details name it by one of `keys` (`app_name` for an app the catalog lacks, `id` for an unknown
 * registration). A 404 about the workspace (details.orgId) or a route the service lacks is not.
 */
export function isGone(thrown: unknown, keys: readonly string[]): boolean {
  if (!(thrown instanceof ApiError) || thrown.body?.code !== "NOT_FOUND") return false;
  const details = thrown.body.details ?? {};
  return refusedWorkspace(thrown) === null && keys.some((key) => key in details);
}

/** The diagnostic for a failed request, on the attribute the error names when the resource has it. */
export function apiDiagnostic(
  thrown: unknown,
  summary: string,
  attributes: readonly string[],
): DiagnosticError {
  if (!(thrown instanceof ApiError)) {
    return thrown instanceof DiagnosticError ? thrown : new DiagnosticError([error(summary, String(thrown))]);
  }
  // A 404 for an app the service lacks names it in details.app_name, not in details.field.
  const unknownApp = isGone(thrown, ["app_name"]);
  const field = thrown.body?.details?.field ?? (unknownApp ? "app_name" : undefined);
  const top = field?.split(/[.[/]/)[0];
  const path: PathStep[] | undefined = top && attributes.includes(top) ? [top] : undefined;
  const workspace = refusedWorkspace(thrown);
  const hint = workspace
    ? ` Check workspace_id (or SVC_WORKSPACE_ID) and the API key: the workspace ${workspace} must exist and the key must be allowed to act in it.`
    : unknownApp
      ? " Check app_name: GET /api/v1/apps lists the apps of the catalog."
      : thrown.status === 401
        ? " Check the api_key setting (or SVC_API_KEY)."
        : thrown.status === 403
          ? " The API key lacks a scope this resource needs."
          : "";
  return new DiagnosticError([error(summary, `${thrown.message}.${hint}`, path)]);
}
