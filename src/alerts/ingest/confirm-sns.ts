// CloudWatch alarms arrive through SNS, which first sends a SubscriptionConfirmation. When the
// registration enables auto-confirm, a job GETs the SubscribeURL (only ever an SNS host: the parser's
// readSnsHandshake decides that), outside the ingest transaction and with retries.
import { Type } from "@sinclair/typebox";
import { defineJob } from "../../core/queue/catalog.ts";

const CONFIRM_TIMEOUT_MS = 10_000;

export const confirmSnsSubscriptionJob = defineJob({
  name: "alerts.confirm_sns_subscription",
  schema: Type.Object({
    subscribeUrl: Type.String(),
    topicArn: Type.Union([Type.String(), Type.Null()]),
    webhookId: Type.String(),
    invocationId: Type.String(),
  }),
  retryLimit: 5,
  retryDelaySeconds: 10,
  handler: async ({ ctx, data }) => {
    const response = await fetch(data.subscribeUrl, { signal: AbortSignal.timeout(CONFIRM_TIMEOUT_MS) });
    await response.body?.cancel();
    if (!response.ok) throw new Error(`SNS answered ${response.status} to the subscription confirmation`);
    ctx.log.info({ topicArn: data.topicArn, webhookId: data.webhookId }, "SNS subscription confirmed");
  },
});
