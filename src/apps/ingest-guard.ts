// The spec's rule "ingest rejects payloads when the SRE app has no config row": alert ingest is
// wrapped so that a delivery to a tenant without the app's installation is refused with the
// trigger's "target not ready" status, 423 (errCode APP_NOT_CONFIGURED), and recorded on the
// invocation (status failed, with the message and the same extras). The extras entry has the shape
// of every 423 of the trigger (the spec's target-readiness extras, as a named webhook's), plus the
// invocation's identity that any refusal after the token was accepted carries. Creating a
// registration installs the app (ensureAppInstalled), so register-then-ingest needs no extra step; after
// DELETE /api/v1/apps/sre the tenant's deliveries are refused until the app is configured again.
import type { Executor } from "../core/db/database.ts";
import type { BatchedTarget, TargetResult, WebhookTarget, WebhookTargets } from "../webhooks/index.ts";
import { isAppConfigured } from "./installations.ts";

type Webhook = Parameters<WebhookTarget>[0]["webhook"];

/** The app a registration's webhook belongs to: its target name is `{app}/{source}/{integration}`. */
const appOf = (webhook: Webhook) => webhook.targetName.split("/")[0] ?? "";

async function refusal(
  db: Executor,
  webhook: Webhook,
  invocationId: string,
): Promise<Extract<TargetResult, { status: "rejected" }> | null> {
  const appName = appOf(webhook);
  const tenant = { orgId: webhook.orgId, ownerId: webhook.ownerId };
  if (await isAppConfigured(db, tenant, appName)) return null;
  return {
    status: "rejected",
    message: `the ${appName} app is not configured for this workspace: configure it with PUT /api/v1/apps/${appName}`,
    errCode: "APP_NOT_CONFIGURED",
    httpStatus: 423,
    extras: {
      webhook_id: webhook.id,
      invocation_id: invocationId,
      target_type: webhook.targetType,
      target_name: webhook.targetName,
      // The target is the app's ingest, which has no stages: null and 0, as for an agent.
      unbound_stage_id: null,
      total_stages: 0,
      resolution_hint: `configure the ${appName} app for this workspace: PUT /api/v1/apps/${appName} (the provider's svc_app resource)`,
    },
  };
}

function guard(target: WebhookTarget): WebhookTarget {
  const guarded: WebhookTarget = Object.assign(
    async (input: Parameters<WebhookTarget>[0]) =>
      (await refusal(input.tx, input.webhook, input.invocationId)) ?? target(input),
    target.readiness ? { readiness: target.readiness } : {},
  );
  const batch = target.batch;
  if (batch) {
    guarded.batch = {
      async prepare(input) {
        return (await refusal(input.db, input.webhook, input.invocationId)) ?? batch.prepare(input);
      },
      apply: (tx, works, services) => batch.apply(tx, works, services),
    } satisfies BatchedTarget<unknown>;
  }
  return guarded;
}

/** The given targets, each refusing deliveries of tenants that have not configured its app. */
export function requireConfiguredApp(targets: WebhookTargets): WebhookTargets {
  return Object.fromEntries(Object.entries(targets).map(([name, target]) => [name, guard(target)]));
}
