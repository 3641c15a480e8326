// Reads from the tenant's metrics and alert systems, under the outbound rules (allowed hosts, no
// redirects, a timeout, a size limit), as alert pull sync does. Integration types: `prometheus`
// (its HTTP API: targets, series) and `alertmanager` (API v2: alerts, silences).
import type { Ctx } from "../core/context.ts";
import { type OutboundError, outboundRequest } from "../core/http/outbound.ts";
import type { IntegrationConnection } from "../integrations/index.ts";

export const OBSERVABILITY_TYPES = ["prometheus", "alertmanager"] as const;
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export type Fetched = { ok: true; json: unknown } | { ok: false; error: string };

function headersOf(connection: IntegrationConnection): Record<string, string> {
  const credentials = connection.credentials ?? {};
  if (credentials.token) return { authorization: `Bearer ${credentials.token}` };
  if (credentials.username && credentials.password) {
    const basic = Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64");
    return { authorization: `Basic ${basic}` };
  }
  return {};
}

/** GET `path` (with query) of the integration's URL as JSON; failures as values, naming the integration. */
export async function fetchJson(
  ctx: Pick<Ctx, "config">,
  connection: IntegrationConnection,
  path: string,
  timeoutMs: number,
): Promise<Fetched> {
  const where = `${connection.name} (${connection.type})`;
  if (!connection.url) return { ok: false, error: `${where} has no url` };
  if (connection.credentialsError) return { ok: false, error: `${where}: ${connection.credentialsError}` };
  const base = connection.url.replace(/\/+$/, "");
  const config = ctx.config;
  try {
    const response = await outboundRequest(
      {
        allowedHosts: config.integrationAllowedHosts.length > 0 ? config.integrationAllowedHosts : null,
        allowedHostsSetting: "INTEGRATION_ALLOWED_HOSTS",
        config,
      },
      {
        url: new URL(`${base}${path}`),
        headers: { accept: "application/json", ...headersOf(connection) },
        timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        oversize: "fail",
      },
    );
    // Only the status: the body of an unexpected answer stays out of what the tenant reads.
    if (response.status !== 200)
      return { ok: false, error: `${where} answered ${response.status} to ${path.split("?")[0]}` };
    try {
      return { ok: true, json: JSON.parse(response.body.toString("utf8")) };
    } catch {
      return { ok: false, error: `${where} answered ${path.split("?")[0]} with something other than JSON` };
    }
  } catch (err) {
    return { ok: false, error: `${where}: ${(err as OutboundError).message}` };
  }
}

/** A cheap request that only a live system of the type answers with 200 and JSON. */
export function probePath(type: string): string | null {
  if (type === "prometheus") return "/api/v1/status/buildinfo";
  if (type === "alertmanager") return "/api/v2/status";
  return null;
}
