// GET /api/setup: whether the tenant's observability is ready for the SRE app (at least one bound,
// reachable prometheus or alertmanager integration), and what is missing when it is not. The IaC
// provider polls it before it starts discovery.
import { tenantOf } from "../core/auth/tenancy.ts";
import type { CallerCtx } from "../core/context.ts";
import { listIntegrations, readIntegrationConnection } from "../integrations/index.ts";
import { readInstallation } from "./installations.ts";
import { fetchJson, OBSERVABILITY_TYPES, probePath } from "./observability.ts";
import type { SetupStatus } from "./schemas.ts";

const APP = "sre";
const PROBE_TIMEOUT_MS = 3_000;
const isObservability = (type: string) => (OBSERVABILITY_TYPES as readonly string[]).includes(type);

export async function readSetup({ ctx }: { ctx: CallerCtx }): Promise<SetupStatus> {
  const tenant = tenantOf(ctx.actor);
  const installation = await readInstallation(ctx.db, tenant, APP);
  const bound = new Set(installation?.integrations ?? []);
  const all = await listIntegrations({ ctx });
  // Probed together: the answer waits for the slowest integration, not for their sum (a caller
  // polls this every few seconds).
  const probes = await Promise.all(
    all.map(async (integration) => {
      const isBound = bound.has(integration.name);
      const path = probePath(integration.type);
      if (!isBound || !path) return { integration, isBound, probe: undefined };
      const connection = await readIntegrationConnection(ctx.db, ctx.secrets, {
        tenant,
        name: integration.name,
      });
      const probe = connection ? await fetchJson(ctx, connection, path, PROBE_TIMEOUT_MS) : null;
      return { integration, isBound, probe };
    }),
  );
  const integrations: SetupStatus["integrations"] = [];
  const missing: string[] = [];
  for (const { integration, isBound, probe } of probes) {
    const reachable = probe === undefined ? null : probe?.ok === true;
    if (probe && !probe.ok) missing.push(`integration ${integration.name} is not reachable: ${probe.error}`);
    integrations.push({ name: integration.name, type: integration.type, bound: isBound, reachable });
  }
  const ready = integrations.some((item) => item.bound && item.reachable === true);
  if (!ready) {
    if (!installation) missing.unshift(`the ${APP} app is not configured: PUT /api/v1/apps/${APP}`);
    const candidates = integrations.filter((item) => isObservability(item.type));
    if (candidates.length === 0) {
      missing.push(
        "no prometheus or alertmanager integration: create one with POST /api/v1/integrations (type prometheus or alertmanager, with its url)",
      );
    } else if (!candidates.some((item) => item.bound)) {
      missing.push(
        `no prometheus or alertmanager integration is bound to the app: PUT /api/v1/apps/${APP} with integrations (one of ${candidates.map((item) => item.name).join(", ")})`,
      );
    }
  }
  return { observability_ready: ready, missing: ready ? [] : missing, integrations };
}
