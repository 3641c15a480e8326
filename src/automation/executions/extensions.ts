// Ports through which a higher domain plugs work into the engine without automation importing it:
// action types of its own (`sre.investigation_gather`, ...) that stages run like the built-in ones,
// and listeners told, inside the transaction that ends a run, how it ended. A higher domain
// registers both at start (start.ts); the registrations are stateless functions, so every Vigil in
// one process may share them.
import type { Tenant } from "../../core/auth/tenancy.ts";
import type { Ctx } from "../../core/context.ts";
import type { Tx } from "../../core/db/database.ts";
import { REGISTERED_ACTION_PATTERN } from "../schemas.ts";
import type { ActionOutcome } from "./actions.ts";

export interface RegisteredActionInput {
  /** The work context; its `db` is the database (the step is not in a transaction). */
  ctx: Ctx;
  /** The run: its ids and tenant. */
  run: { traceId: string; sessionId: string; tenant: Tenant };
  /** The stage's config, not templated: the action reads what it needs. */
  settings: Record<string, unknown>;
  /** { input, stages: { <id>: { output } }, execution }. */
  context: Record<string, unknown>;
  signal?: AbortSignal;
}

/** Runs one step; throws StepError (retryable or not) on failure. */
export type RegisteredAction = (input: RegisteredActionInput) => Promise<ActionOutcome>;

const actions = new Map<string, RegisteredAction>();

export function registerActionType(name: string, action: RegisteredAction): void {
  if (!new RegExp(REGISTERED_ACTION_PATTERN).test(name)) {
    throw new Error(`action type ${name} must be namespaced (${REGISTERED_ACTION_PATTERN})`);
  }
  actions.set(name, action);
}

export function registeredAction(name: string): RegisteredAction | null {
  return actions.get(name) ?? null;
}

export interface ExecutionEnd {
  traceId: string;
  sessionId: string;
  /** completed, or error (failed, swept or cancelled). */
  status: "completed" | "error";
  cancelled: boolean;
  error: string | null;
  now: Date;
}

/** Told in the transaction that ends the run: what it writes commits with the run's end, or not at all. */
export type ExecutionEndListener = (tx: Tx, end: ExecutionEnd) => Promise<void>;

const listeners = new Set<ExecutionEndListener>();

export function onExecutionEnd(listener: ExecutionEndListener): void {
  listeners.add(listener);
}

export async function notifyExecutionEnd(tx: Tx, end: ExecutionEnd): Promise<void> {
  for (const listener of listeners) await listener(tx, end);
}
