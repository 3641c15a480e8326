// What a webhook starts. The webhooks domain records invocations and resolves tokens; the target
// (alert ingest, an agent, a workflow) decides what the body means.
import type { Logger } from "pino";
import type { Tenant } from "../core/auth/tenancy.ts";
import type { Services } from "../core/context.ts";
import type { Executor, Tx } from "../core/db/database.ts";
import type { ErrorCode } from "../core/errors.ts";
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
  | {
      /**
       * Taken but nothing started (a named webhook's body misses its target's required inputs):
       * answered 202, as every trigger of a named webhook is; the invocation records why.
       */
      status: "failed";
      message: string;
    }
  | {
      status: "rejected";
      message: string;
      /** INVALID_PAYLOAD (400) unless given, e.g. a readiness code answered with 423. */
      errCode?: ErrorCode;
      httpStatus?: number;
      /** The error's one extras entry; the invocation's identity when absent. */
      extras?: Record<string, unknown>;
    };

/** Why a target is not safe to run unattended: the spec's JsonError body of 400 and 423. */
export interface TargetRefusal {
  errCode: ErrorCode;
  msg: string;
  extras: Record<string, unknown>;
}

export type ReadinessCheck = (input: {
  db: Executor;
  tenant: Tenant;
  targetName: string;
}) => Promise<TargetRefusal[]>;

/**
 * A target that can apply deliveries arriving together in one transaction (group commit, trigger.ts).
 * `prepare` does everything that needs no transaction and may refuse the body; `apply` must be
 * safe to run again on a fresh transaction (the trigger retries a batch that lost a race).
 */
export interface BatchedTarget<W> {
  prepare(
    input: Omit<TargetInput, "tx"> & { db: Executor },
  ): Promise<{ status: "prepared"; work: W } | Extract<TargetResult, { status: "rejected" }>>;
  /** One result per work item, in order. */
  apply(tx: Tx, works: W[], services: Services): Promise<TargetResult[]>;
}

/**
 * Starts the target for one delivery. A target with `readiness` is a named target (agent,
 * workflow): users manage its webhooks through the webhooks CRUD, which refuses unready targets.
 * Targets without it (alert ingest) are managed by their own domain's registration API.
 */
export type WebhookTarget = ((input: TargetInput) => Promise<TargetResult>) & {
  readiness?: ReadinessCheck;
  batch?: BatchedTarget<unknown>;
};
export type WebhookTargets = Record<string, WebhookTarget>;
