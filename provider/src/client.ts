// The provider's only way to the service: JSON over HTTP with the API key, every request in the
// configured workspace (`?orgId=`). A failed request becomes a diagnostic that names the attribute
// when the service's error body names a field the resource has. A 404 means "gone" only when it is
// about the object itself: the service answers an unknown workspace, or one the key may not act in,
// with a 404 too, and reading that as "deleted" would drop every resource from state. Likewise a 2xx
// that is not Vigil's JSON (a proxy's login page, another service) is an error, never an empty
// object whose missing fields would read as gone or as nulls.
import { DiagnosticError, error, type PathStep } from "./diagnostics.ts";
import { type Shape, shapeProblems } from "./shape.ts";

export interface Settings {
  workspaceId: string | null;
  /** As configured; null when neither the setting nor SVC_SERVICE_URL gives one. */
  serviceUrl: string | null;
  apiKey: string | null;
}

/** How long one request may wait for the service; polling loops are many such requests. */
export const REQUEST_TIMEOUT_MS = 60_000;

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

/** A URL as a message may show it: a user name and password in it are left out. */
export function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:[/\\]*)?[^/\\?#]*@/i, "$1");
}

export class Client {
  private readonly shownUrl: string;
  private readonly stopSignal: AbortSignal;
  private readonly timeoutMs: number;

  /**
   * `stopSignal` aborts every request in flight and every pause, and refuses later ones: OpenTofu
   * asked the provider to stop (StopProvider, sent on Ctrl-C).
   */
  constructor(
    readonly baseUrl: string,
    readonly workspaceId: string,
    private readonly apiKey: string | null,
    options: { stopSignal?: AbortSignal; timeoutMs?: number } = {},
  ) {
    this.shownUrl = withoutCredentials(baseUrl);
    this.stopSignal = options.stopSignal ?? new AbortController().signal;
    this.timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  get stopped(): boolean {
    return this.stopSignal.aborted;
  }

  /**
   * The JSON body of a 2xx answer (null for a 204). With `shape`, an answer lacking a field the
   * caller reads is refused like one that is not JSON at all.
   */
  async request<T>(
    method: string,
    path: string,
    options: { body?: unknown; query?: Record<string, string>; shape?: Shape } = {},
  ) {
    const url = new URL(this.baseUrl + path);
    url.searchParams.set("orgId", this.workspaceId);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    const headers: Record<string, string> = { accept: "application/json" };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const { response, text } = await this.exchange(`${method} ${path}`, url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    if (!response.ok) throw new ApiError(response.status, errorBody(response, text), `${method} ${path}`);
    const body = response.status === 204 ? null : this.jsonOf(`${method} ${path}`, response, text);
    if (options.shape) this.checkShape(`${method} ${path}`, response.status, body, options.shape);
    return body as T;
  }

  /** Waits `ms` before polling with `nextRequest`; a stop ends the wait at once, as an error. */
  async pause(ms: number, nextRequest: string): Promise<void> {
    const during = `the provider was waiting to send ${nextRequest}`;
    if (this.stopped) throw this.stoppedError(during);
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.stopSignal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stopSignal.addEventListener("abort", done);
    });
    if (this.stopped) throw this.stoppedError(during);
  }

  /** Sends one request and reads its body, within the timeout and unless stopped. */
  private async exchange(request: string, url: URL, init: RequestInit) {
    const during = `${request} was waiting for the service at ${this.shownUrl}`;
    if (this.stopped) throw this.stoppedError(during);
    const controller = new AbortController();
    const abort = () => controller.abort();
    const timer = setTimeout(abort, this.timeoutMs);
    this.stopSignal.addEventListener("abort", abort);
    try {
      const response = await fetch(url, { ...init, signal: controller.signal });
      return { response, text: await response.text() };
    } catch (thrown) {
      if (this.stopped) throw this.stoppedError(during);
      if (controller.signal.aborted) {
        throw new DiagnosticError([
          error(
            `No answer from the service at ${this.shownUrl}`,
            `${request} got no answer within ${this.timeoutMs / 1000} s, the longest the provider waits for one request. Check that service_url is the address of a running Vigil.`,
          ),
        ]);
      }
      const cause =
        thrown instanceof Error && thrown.cause instanceof Error ? `: ${thrown.cause.message}` : "";
      throw new DiagnosticError([
        error(`Cannot reach the service at ${this.shownUrl}`, `${request} failed${cause}`),
      ]);
    } finally {
      clearTimeout(timer);
      this.stopSignal.removeEventListener("abort", abort);
    }
  }

  private stoppedError(during: string): DiagnosticError {
    return new DiagnosticError([
      error(
        "The run was stopped",
        `OpenTofu asked the provider to stop (for example on Ctrl-C) while ${during}; the provider sends no more requests in this run.`,
      ),
    ]);
  }

  /** The body of a 2xx answer, which must be JSON: anything else did not come from Vigil. */
  private jsonOf(request: string, response: Response, text: string): unknown {
    const json = isJson(response);
    const parsed = json ? safeParse(text) : undefined;
    if (parsed !== undefined) return parsed;
    const what = json ? "a body that is not JSON" : contentTypeOf(response) || "no content type";
    throw this.notVigil(`${request} answered ${response.status} with ${what}, not Vigil's JSON`);
  }

  private checkShape(request: string, status: number, body: unknown, shape: Shape) {
    const problems = shapeProblems(body, shape);
    if (problems.length === 0) return;
    const listed = problems.slice(0, 5).join(", ");
    const more = problems.length > 5 ? ` and ${problems.length - 5} more` : "";
    throw this.notVigil(`${request} answered ${status} with JSON that is not Vigil's: ${listed}${more}`);
  }

  private notVigil(what: string): DiagnosticError {
    return new DiagnosticError([
      error(
        `Unexpected answer from the service at ${this.shownUrl}`,
        `${what}. Is service_url the Vigil server, not a proxy or a login page in front of it?`,
      ),
    ]);
  }
}

const contentTypeOf = (response: Response) =>
  response.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase() ?? "";

/** Whether the answer says it is JSON (application/json or a +json type). */
function isJson(response: Response): boolean {
  const type = contentTypeOf(response);
  return type === "application/json" || type.endsWith("+json");
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The body of an error answer; one that is not JSON (say a proxy's error page) only lends its text. */
function errorBody(response: Response, text: string): ApiError["body"] {
  if (!text) return null;
  const parsed = isJson(response) ? safeParse(text) : undefined;
  return (parsed ?? { error: text.slice(0, 500) }) as ApiError["body"];
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
