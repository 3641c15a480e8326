// Reading an integration's HTTP API for another domain (an investigation asks a `prometheus`
// integration for a series, an `alertmanager` one for its silences). One GET, under the outbound
// rules (core/http/outbound.ts) with INTEGRATION_ALLOWED_HOSTS, the integration's credentials as
// headers: `token` a bearer token, `username`/`password` basic auth (user info written in the url is
// among them: see url-credentials.ts).
import type { Config } from "../config.ts";
import { type OutboundError, outboundRequest } from "../core/http/outbound.ts";
import type { IntegrationConnection } from "./connections.ts";

const READ_TIMEOUT_MS = 10_000;
const READ_MAX_BYTES = 4 * 1024 * 1024;

export type ApiReadResult =
  | { ok: true; status: number; json: unknown; url: string }
  | { ok: false; error: string; url: string | null };

/** The integration's base URL joined with `path` and `query` (a connection's url holds no credentials). */
export function integrationApiUrl(
  connection: Pick<IntegrationConnection, "url">,
  path: string,
  query: Record<string, string> = {},
): URL | null {
  if (!connection.url || !URL.canParse(connection.url)) return null;
  const base = connection.url.endsWith("/") ? connection.url : `${connection.url}/`;
  const url = new URL(path.replace(/^\//, ""), base);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

/**
 * The request headers of a call to the integration: a `token` credential is a bearer token,
 * `username`/`password` basic auth. A connection read from the database has its url's user info
 * among its credentials already; any left in `url` counts as basic auth too and is removed from it
 * (fetch refuses URLs that carry it).
 */
export function integrationHeaders(connection: IntegrationConnection, url: URL): Record<string, string> {
  const headers: Record<string, string> = { accept: "application/json" };
  const credentials = connection.credentials ?? {};
  let basic: [string, string] | null = null;
  if (url.username || url.password) {
    basic = [decodeURIComponent(url.username), decodeURIComponent(url.password)];
    url.username = "";
    url.password = "";
  }
  if (credentials.token) headers.authorization = `Bearer ${credentials.token}`;
  else if (credentials.username !== undefined) basic = [credentials.username, credentials.password ?? ""];
  if (basic && !headers.authorization) {
    headers.authorization = `Basic ${Buffer.from(`${basic[0]}:${basic[1]}`).toString("base64")}`;
  }
  return headers;
}

/** GET a JSON document of the integration's API; failures are values naming the request, never its body. */
export async function readIntegrationApi(
  connection: IntegrationConnection,
  config: Pick<Config, "host" | "port" | "databaseUrl" | "integrationAllowedHosts">,
  request: { path: string; query?: Record<string, string>; signal?: AbortSignal },
): Promise<ApiReadResult> {
  const url = integrationApiUrl(connection, request.path, request.query);
  if (!url) return { ok: false, error: `integration ${connection.name} has no valid url`, url: null };
  if (connection.credentialsError) return { ok: false, error: connection.credentialsError, url: url.href };
  const headers = integrationHeaders(connection, url);
  const where = `GET ${url.origin}${url.pathname}`;
  try {
    const response = await outboundRequest(
      {
        allowedHosts: config.integrationAllowedHosts.length > 0 ? config.integrationAllowedHosts : null,
        allowedHostsSetting: "INTEGRATION_ALLOWED_HOSTS",
        config,
      },
      {
        url,
        headers,
        timeoutMs: READ_TIMEOUT_MS,
        maxResponseBytes: READ_MAX_BYTES,
        oversize: "fail",
        signal: request.signal,
      },
    );
    if (response.status < 200 || response.status > 299) {
      return { ok: false, error: `${where} answered ${response.status}`, url: url.href };
    }
    try {
      return {
        ok: true,
        status: response.status,
        json: JSON.parse(response.body.toString("utf8")),
        url: url.href,
      };
    } catch {
      return { ok: false, error: `${where} did not answer JSON`, url: url.href };
    }
  } catch (err) {
    const error = err as OutboundError;
    return { ok: false, error: `${where} failed: ${error.message}`, url: url.href };
  }
}
