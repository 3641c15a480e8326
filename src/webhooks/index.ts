export { webhooksRoutes as registerWebhooks } from "./routes.ts";
export { storableJson, storableText, storableValue } from "./storable.ts";
export { webhookInvocations } from "./tables.ts";
export type { BatchedTarget, TargetInput, TargetResult, WebhookTarget, WebhookTargets } from "./targets.ts";
export {
  createWebhook,
  deleteWebhook,
  enabledWebhookIds,
  findWebhook,
  rotateWebhookToken,
  setWebhookEnabled,
  triggerPathOf,
  type WebhookRow,
} from "./webhooks.ts";
