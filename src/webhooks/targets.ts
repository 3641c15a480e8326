// What a webhook starts. The webhooks domain records invocations and resolves tokens; the target
// (alert ingest, an agent, a workflow) decides what the body means.
import type { Logger } from "pino";
import type { Services } from "../core/context.ts";
import type { Tx } from "../core/db/database.ts";
import type { WebhookRow } from "./webhooks.ts";

export interface TargetInput {
  tx: Tx;
  webhook: WebhookRow;
  invocationId: string;
  /** The body exactly as received. */
  body: string;
  /** Request headers, names lower-cased. */
  headers: Record<string, string>;
  receivedAt: Date;
  services: Services;
  log: Logger;
}

export type TargetResult =
  | {
      status: "accepted";
      /** Merged into the 202 body and kept as the invocation's outcome. */
      response: Record<string, unknown>;
      note?: string | null;
      sessionId?: string | null;
      traceId?: string | null;
      runId?: string | null;
    }
  | { status: "rejected"; message: string };

export type WebhookTarget = (input: TargetInput) => Promise<TargetResult>;
export type WebhookTargets = Record<string, WebhookTarget>;
