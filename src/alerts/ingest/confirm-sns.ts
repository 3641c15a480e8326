// CloudWatch alarms arrive through SNS, which first sends a SubscriptionConfirmation. When the
// registration enables auto-confirm, a job GETs the SubscribeURL (only ever an SNS host: the parser's
// readSnsHandshake decides that), outside the ingest transaction and with retries. The call goes
// through the outbound rules like every other call to a URL that came from outside
// (core/http/outbound.ts): public addresses only, no redirects, a timeout and a size limit.
import { Type } from "@sinclair/typebox";
import { type OutboundPolicy, outboundRequest } from "../../core/http/outbound.ts";
import { defineJob } from "../../core/queue/catalog.ts";

const CONFIRM_TIMEOUT_MS = 10_000;
// SNS answers a short XML document; nothing of it is read.
const MAX_RESPONSE_BYTES = 64 * 1024;

/** GETs the SubscribeURL under `policy`; throws (so the queue retries) unless SNS answers 2xx. */
export async function confirmSubscription(policy: OutboundPolicy, subscribeUrl: string): Promise<void> {
  const response = await outboundRequest(policy, {
    url: new URL(subscribeUrl),
    timeoutMs: CONFIRM_TIMEOUT_MS,
    maxResponseBytes: MAX_RESPONSE_BYTES,
    oversize: "truncate",
  });
  if (response.status < 200 || response.status > 299) {
    throw new Error(`SNS answered ${response.status} to the subscription confirmation`);
  }
}

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
  // Confirmed as soon as the subscription request commits, not at the worker's next poll.
  notify: true,
  handler: async ({ ctx, data }) => {
    // No allow-list: SNS is a public host, and an internal address is never SNS.
    const policy: OutboundPolicy = {
      allowedHosts: null,
      allowedHostsSetting: "an allow-list (SNS confirmations reach public hosts only)",
      config: ctx.config,
    };
    await confirmSubscription(policy, data.subscribeUrl);
    ctx.log.info({ topicArn: data.topicArn, webhookId: data.webhookId }, "SNS subscription confirmed");
  },
});
