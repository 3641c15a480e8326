// Which resource types each provider version offers: svc_app from 0.1.26, svc_sre_alert_webhook
// from 0.1.27. A build for an older version simply lacks the newer types, so OpenTofu rejects a
// configuration using one with "The provider ... does not support resource type ...".
import type { Resource } from "./resource.ts";
import { alertWebhookResource } from "./resources/alert-webhook.ts";
import { appResource } from "./resources/app.ts";

export const LATEST_VERSION = "0.1.27";

const SINCE: [string, Resource][] = [
  ["0.1.26", appResource],
  ["0.1.27", alertWebhookResource],
];

function compare(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

export function resourcesOf(version: string): Resource[] {
  return SINCE.filter(([since]) => compare(version, since) >= 0).map(([, resource]) => resource);
}
