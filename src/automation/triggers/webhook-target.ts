// The agent and workflow targets of named webhooks. A trigger checks the target's readiness again
// (it was ready when the webhook was saved, and may not be any more: 423), reads the body as the
// run's input, and starts the run in the trigger's transaction, so the invocation record and the run
// (session, execution, first jobs) commit together or not at all.
import { and, eq } from "drizzle-orm";
import { inTenant, type Tenant } from "../../core/auth/tenancy.ts";
import { workContext } from "../../core/context.ts";
import type { Executor } from "../../core/db/database.ts";
import { AppError, type ErrorCode } from "../../core/errors.ts";
import { tooDeepAt } from "../../core/json-depth.ts";
import { integrationNamesOf } from "../../integrations/index.ts";
import type { TargetInput, TargetResult, WebhookTarget, WebhookTargets } from "../../webhooks/index.ts";
import { storableText, storableValue } from "../../webhooks/index.ts";
import { startExecution } from "../executions/executions.ts";
import { agents, workflows } from "../tables.ts";
import { agentReadiness, missingTarget, type NotReady, workflowReadiness } from "../workflows/readiness.ts";
import { runnableVersion } from "../workflows/workflows.ts";

type TargetType = "agent" | "workflow";

/** The input that holds a body which is not JSON (text/plain and any other content type). */
const TEXT_INPUT = "message";

const READINESS_CODES = new Set<ErrorCode>([
  "TARGET_NOT_FOUND",
  "NO_INTEGRATIONS",
  "WORKFLOW_HAS_NO_STAGES",
  "WORKFLOW_HAS_UNBOUND_STAGE",
]);

/**
 * Is the target safe to run unattended now? Empty when it is. A workflow is judged by the version a
 * run would pin (the newest approved one); without one it counts as not found.
 */
async function targetReadiness(
  db: Executor,
  tenant: Tenant,
  target: { type: TargetType; name: string },
): Promise<NotReady[]> {
  if (target.type === "agent") {
    const [agent] = await db
      .select({ name: agents.name, integrations: agents.integrations })
      .from(agents)
      .where(and(inTenant(agents, tenant), eq(agents.name, target.name)));
    return agent
      ? agentReadiness(agent, await integrationNamesOf(db, tenant))
      : [missingTarget("agent", target.name)];
  }
  const [workflow] = await db
    .select({ id: workflows.id })
    .from(workflows)
    .where(and(inTenant(workflows, tenant), eq(workflows.name, target.name)));
  if (!workflow) return [missingTarget("workflow", target.name)];
  const version = await runnableVersion(db, workflow.id);
  if (!version) return [missingTarget("workflow", target.name, "has no approved version")];
  const names = await db.select({ name: agents.name }).from(agents).where(inTenant(agents, tenant));
  const known = new Set(names.map((row) => row.name));
  return workflowReadiness(target.name, version.stages, (name) => known.has(name));
}

/**
 * The run's input from a trigger's body. A JSON object (application/json or +json) is the inputs;
 * any other body is the text input `message`: a JSON string as its value, anything else (text of
 * another content type, a JSON array or number, JSON that does not parse, an object nested too deep
 * to store) as the text received. Every body thus starts the run, as the spec answers every trigger
 * of a ready target with 202; only the target's own input rules (required inputs, patterns) keep the
 * run from starting, and the trigger is still answered 202 with its run record failed.
 */
export function bodyToInput(body: string, contentType: string | undefined): unknown {
  const mediaType = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const isJson = mediaType === "application/json" || mediaType.endsWith("+json");
  // The run's input is stored: text PostgreSQL cannot hold (U+0000, lone surrogates) becomes U+FFFD,
  // as it does for alert ingest.
  const asText = (text: string) => (text === "" ? undefined : { [TEXT_INPUT]: storableText(text) });
  if (!isJson) return asText(body);
  if (body.trim() === "") return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return asText(body);
  }
  if (typeof parsed === "string") return asText(parsed);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return asText(body);
  if (tooDeepAt(parsed)) return asText(body);
  return storableValue(parsed);
}

/** The longest first prompt a webhook's session keeps of its body (Ask's messages are as long). */
const PROMPT_MAX_CHARS = 10_000;

/**
 * What the session of a webhook run shows, and finds by `q`, as its first prompt: the message a text
 * body carried, or the inputs of a JSON one as their JSON text. Without a body, the title stands in.
 */
function promptOf(input: unknown): string | undefined {
  if (input === undefined) return undefined;
  // A text body is the input { message }; a JSON body with more keys is shown whole, so that its
  // other inputs (the service, the host) are in the session's prompt and found by its search.
  const record = input as Record<string, unknown>;
  const message = record[TEXT_INPUT];
  const textOnly = typeof message === "string" && Object.keys(record).length === 1;
  const text = textOnly ? message : JSON.stringify(input);
  return storableText(text.slice(0, PROMPT_MAX_CHARS));
}

function refused(reason: { errCode: ErrorCode; msg: string; extras: Record<string, unknown> }): TargetResult {
  return {
    status: "rejected",
    message: reason.msg,
    errCode: reason.errCode,
    httpStatus: 423,
    extras: reason.extras,
  };
}

function automationTarget(type: TargetType): WebhookTarget {
  const trigger = async ({ tx, webhook, invocationId, body, headers, services, log }: TargetInput) => {
    const tenant = { orgId: webhook.orgId, ownerId: webhook.ownerId };
    const target = { type, name: webhook.targetName };
    const [reason] = await targetReadiness(tx, tenant, target);
    if (reason) return refused(reason);
    const input = bodyToInput(body, headers["content-type"]);
    try {
      // A savepoint: a refusal from startExecution leaves nothing of the run behind, and the
      // trigger's transaction still records the invocation.
      const started = await tx.transaction((savepoint) =>
        startExecution({
          ctx: { ...workContext(services, log), db: savepoint },
          tenant,
          input: {
            target,
            input,
            title: `webhook ${webhook.name}`,
            firstPrompt: promptOf(input),
            initiator: `webhook:${webhook.id}`,
            sourceMetadata: { webhook_id: webhook.id, invocation_id: invocationId },
          },
        }),
      );
      return {
        status: "accepted",
        response: { run_id: started.runId, workflow_version: started.workflowVersion },
        sessionId: started.sessionId,
        traceId: started.traceId,
        runId: started.runId,
      } satisfies TargetResult;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Readiness changed between the check and the start (a concurrent delete): still a 423.
      if (READINESS_CODES.has(err.code))
        return refused({ errCode: err.code, msg: err.message, extras: err.details });
      // Missing or malformed inputs: the sender's payload is at fault. The trigger is still
      // answered 202 (the spec answers every trigger of a named webhook so); its run record says
      // why no run started.
      if (err.code === "VALIDATION_FAILED")
        return { status: "failed", message: err.message } satisfies TargetResult;
      throw err;
    }
  };
  return Object.assign(trigger, {
    readiness: ({ db, tenant, targetName }: { db: Executor; tenant: Tenant; targetName: string }) =>
      targetReadiness(db, tenant, { type, name: targetName }),
  });
}

/** Registered in app.ts next to alert ingest: `{ ...AUTOMATION_WEBHOOK_TARGETS }`. */
export const AUTOMATION_WEBHOOK_TARGETS: WebhookTargets = {
  agent: automationTarget("agent"),
  workflow: automationTarget("workflow"),
};
