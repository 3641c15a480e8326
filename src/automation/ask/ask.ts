// startAskPlatform: route a message to an agent or workflow of the caller's, read its inputs out of
// the message, and start the run, all in the caller's session. Nothing runs on a weak or ambiguous
// match (a weak one goes to the fallback agent when one is configured), nor while a required input
// is missing: the session then waits, and the caller answers in it.
import { and, desc, eq, gte, ne, type SQL, sql } from "drizzle-orm";
import { initiatorOf, inTenant, type Tenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { type Tx, withTransaction } from "../../core/db/database.ts";
import { AppError, badRequest } from "../../core/errors.ts";
import { integrationNamesOf } from "../../integrations/index.ts";
import { startExecution } from "../executions/executions.ts";
import { matchesPattern } from "../input-pattern.ts";
import type { PendingAsk } from "../schemas.ts";
import { addMessage, createSession, normalizePrompt, touchSession } from "../sessions/session-rows.ts";
import { sessionSummary } from "../sessions/sessions.ts";
import { agents, sessions, workflows, workflowVersions } from "../tables.ts";
import { agentReadiness } from "../workflows/readiness.ts";
import type { CandidateType, Routable } from "./rank.ts";
import { inputsFromMessage, routeMessage } from "./route.ts";
import type { AskPlatformRequest, AskStartResponse } from "./schemas.ts";

type Decision = AskStartResponse["decision"];
type PriorSessionPolicy = NonNullable<AskPlatformRequest["prior_session"]>;

/**
 * A waiting Ask as this file keeps it: besides the target and the inputs, the message that asked for
 * the run and its prior_session policy, so that the answer finds the prior session that message
 * would have found. Rows written before these fields existed lack them.
 */
interface WaitingAsk extends PendingAsk {
  prompt?: string;
  priorSession?: PriorSessionPolicy | null;
}

interface Catalog {
  /** Approved, routing-active workflows and ready agents: what a message may be routed to. */
  routable: Routable[];
  /** Every agent and approved workflow, routable or not: what entity_refs may pin. */
  all: Routable[];
  /** Integrations each candidate uses (its agents'), only those that still exist. */
  integrationsOf: Map<string, string[]>;
  /** The tenant's integrations: an agent keeps the names of deleted ones, which no longer count. */
  integrations: ReadonlySet<string>;
}

const keyOf = (candidate: { type: string; name: string }) => `${candidate.type}:${candidate.name}`;

async function loadCatalog(tx: Tx, tenant: Tenant): Promise<Catalog> {
  const agentRows = await tx.select().from(agents).where(inTenant(agents, tenant));
  const versionRows = await tx
    .select({ workflow: workflows, version: workflowVersions })
    .from(workflowVersions)
    .innerJoin(workflows, eq(workflows.id, workflowVersions.workflowId))
    .where(and(inTenant(workflows, tenant), eq(workflowVersions.status, "approved")))
    .orderBy(desc(workflowVersions.version));
  // One read for every agent: readiness is the webhooks' check (agentReadiness), not a query per agent.
  const existing = await integrationNamesOf(tx, tenant);
  const integrationsByAgent = new Map(
    agentRows.map((agent) => [agent.name, agent.integrations.filter((name) => existing.has(name))]),
  );
  const routable: Routable[] = [];
  const all: Routable[] = [];
  const integrationsOf = new Map<string, string[]>();
  for (const agent of agentRows) {
    const candidate: Routable = {
      type: "agent",
      name: agent.name,
      description: agent.description,
      examples: [],
      inputs: agent.inputs,
    };
    all.push(candidate);
    integrationsOf.set(keyOf(candidate), integrationsByAgent.get(agent.name) ?? []);
    if (agentReadiness(agent, existing).length === 0) routable.push(candidate);
  }
  const seen = new Set<string>();
  for (const { workflow, version } of versionRows) {
    if (seen.has(workflow.id)) continue;
    seen.add(workflow.id);
    const candidate: Routable = {
      type: "workflow",
      name: workflow.name,
      description: version.description,
      examples: version.routingExamples,
      inputs: version.inputs,
    };
    all.push(candidate);
    const used = version.stages.flatMap((stage) =>
      [stage.agent_ref, ...(stage.parallel_agents ?? [])].flatMap((name) =>
        name ? (integrationsByAgent.get(name) ?? []) : [],
      ),
    );
    integrationsOf.set(keyOf(candidate), [...new Set(used)]);
    if (workflow.routingStatus === "active") routable.push(candidate);
  }
  return { routable, all, integrationsOf, integrations: existing };
}

interface Choice {
  decision: Decision;
  target: Routable | null;
  candidates: AskStartResponse["candidates"];
  fallbackAgent: string;
  /** The candidate_type asked for when it names nothing runnable (integration, knowledge). */
  unrunnableType?: string;
}

/** A ref of type any names the tenant's one agent or workflow of that name (400 when none or both). */
function anyRef(catalog: Catalog, ref: { name: string }, i: number): { name: string; type: CandidateType } {
  const types = [...new Set(catalog.all.filter((item) => item.name === ref.name).map((item) => item.type))];
  if (types.length === 1) return { name: ref.name, type: types[0] as CandidateType };
  const why =
    types.length === 0
      ? `no agent or workflow ${ref.name}`
      : `both an agent and a workflow are named ${ref.name}: give the ref's type`;
  throw new AppError("VALIDATION_FAILED", `entity_refs.${i}.name: ${why}`, {
    field: `entity_refs.${i}.name`,
  });
}

function choose(
  ctx: CallerCtx,
  catalog: Catalog,
  request: AskPlatformRequest,
  pending: PendingAsk | null,
): Choice {
  const kind = request.candidate_type ?? "any";
  const find = (type: string, name: string) =>
    catalog.all.find((item) => item.type === type && item.name === name);
  const refs = (request.entity_refs ?? []).map((ref, i) =>
    ref.type === "any" ? anyRef(catalog, ref, i) : ref,
  );
  const pinned = refs.filter((ref) => ref.type === "agent" || ref.type === "workflow");
  for (const ref of pinned) {
    if (!find(ref.type, ref.name)) {
      throw new AppError(
        "VALIDATION_FAILED",
        `entity_refs.${refs.indexOf(ref)}.name: no ${ref.type} ${ref.name}${ref.type === "workflow" ? " with an approved version" : ""}`,
        { field: `entity_refs.${refs.indexOf(ref)}.name` },
      );
    }
  }
  const integrationRefs = refs.filter((ref) => ref.type === "integration").map((ref) => ref.name);
  const missing = integrationRefs.find((name) => !catalog.integrations.has(name));
  if (missing !== undefined) {
    const position = refs.findIndex((ref) => ref.type === "integration" && ref.name === missing);
    throw badRequest(`entity_refs.${position}.name`, `no integration ${missing}`);
  }
  if (pinned.length === 1) {
    const target = find(pinned[0]?.type ?? "", pinned[0]?.name ?? "") as Routable;
    return { decision: "pinned", target, candidates: [shown(target, 1)], fallbackAgent: "" };
  }
  let pool = pinned.length > 1 ? pinned.map((ref) => find(ref.type, ref.name) as Routable) : catalog.routable;
  if (kind !== "any") pool = pool.filter((item) => item.type === kind);
  if (integrationRefs.length > 0) {
    pool = pool.filter((item) =>
      integrationRefs.every((name) => (catalog.integrationsOf.get(keyOf(item)) ?? []).includes(name)),
    );
  }
  const fallbackName = ctx.config.askFallbackAgent;
  const fallback =
    fallbackName && (kind === "any" || kind === "agent") && pinned.length === 0
      ? find("agent", fallbackName)
      : undefined;
  const routing = routeMessage(pool, request.message, fallback ? fallback.name : null);
  const outcome = routing.outcome;
  // A session waiting for inputs takes the message as its answer, unless it clearly asks for
  // another agent or workflow.
  const waitingFor =
    pending && pinned.length === 0 ? find(pending.target.type, pending.target.name) : undefined;
  if (waitingFor && !(outcome.kind === "routed" && keyOf(outcome.target) !== keyOf(waitingFor))) {
    return {
      decision: "continued",
      target: waitingFor,
      candidates: [shown(waitingFor, 1)],
      fallbackAgent: "",
    };
  }
  if (outcome.kind === "routed") {
    return { decision: "routed", target: outcome.target, candidates: routing.candidates, fallbackAgent: "" };
  }
  if (outcome.kind === "fallback" && fallback) {
    return {
      decision: "fallback",
      target: fallback,
      candidates: routing.candidates,
      fallbackAgent: fallback.name,
    };
  }
  return {
    decision: outcome.kind === "ambiguous" ? "ambiguous" : "no_match",
    target: null,
    candidates: routing.candidates,
    fallbackAgent: "",
    ...((kind === "integration" || kind === "knowledge") && { unrunnableType: kind }),
  };
}

const shown = (target: Routable, confidence: number) => ({
  name: target.name,
  confidence,
  candidate_type: target.type,
});

/** The caller's earlier session whose first prompt is `prompt`, within the policy; its summary cut. */
async function priorSession(
  tx: Tx,
  tenant: Tenant,
  policy: PriorSessionPolicy,
  prompt: string,
  exclude: string,
  target: Routable,
  now: Date,
): Promise<{ id: string; summary: string } | null> {
  const since = new Date(now.getTime() - (policy.max_age_hours ?? 24) * 3_600_000);
  const key = normalizePrompt(prompt);
  const conditions: SQL[] = [
    inTenant(sessions, tenant),
    eq(sessions.ownerId, tenant.ownerId),
    // The hash finds the candidates through sessions_prompt_key; the text decides.
    sql`md5(${sessions.promptKey}) = md5(${key})`,
    eq(sessions.promptKey, key),
    ne(sessions.id, exclude),
    gte(sessions.updatedAt, since),
  ];
  if (policy.same_agent_only) {
    conditions.push(eq(sessions.responderType, target.type), eq(sessions.responderName, target.name));
  }
  const [row] = await tx
    .select()
    .from(sessions)
    .where(and(...conditions))
    .orderBy(desc(sessions.updatedAt))
    .limit(1);
  if (!row) return null;
  const summary = await sessionSummary(tx, row);
  return { id: row.id, summary: summary.slice(0, policy.max_summary_chars ?? 2000) };
}

/** A value given in `inputs` must match the input's pattern: 400 naming inputs.<name>. */
function checkGivenInputs(target: Routable, given: Record<string, string>): void {
  for (const input of target.inputs) {
    const value = given[input.name];
    if (value === undefined || !input.pattern) continue;
    if (!matchesPattern(input.pattern, value))
      throw badRequest(`inputs.${input.name}`, `does not match ${input.pattern}`);
  }
}

function describe(choice: Choice, missing: string[], prior: string | null): string {
  const target = choice.target ? `${choice.target.type} ${choice.target.name}` : "";
  const names = choice.candidates.map((item) => item.name).join(", ");
  switch (true) {
    case missing.length > 0:
      return `To run ${target} I need: ${missing.join(", ")}. Answer in this session (name=value).`;
    case choice.decision === "ambiguous":
      return `The request matches several equally well (${names}); say which one, or pin it with entity_refs.`;
    case choice.unrunnableType !== undefined:
      return `candidate_type ${choice.unrunnableType} names nothing runnable (only agents and workflows run); nothing was started. Ask with candidate_type any, agent or workflow.`;
    case choice.decision === "no_match":
      return names
        ? `No agent or workflow matches well enough (closest: ${names}); nothing was started.`
        : "No agent or workflow matches; nothing was started.";
    case choice.decision === "fallback":
      return `No agent or workflow matches well enough; the fallback agent ${choice.fallbackAgent} answers.`;
    default:
      return `Started ${target}${prior ? `, with the summary of session ${prior}` : ""}.`;
  }
}

export async function startAsk({
  ctx,
  input: request,
}: {
  ctx: CallerCtx;
  input: AskPlatformRequest;
}): Promise<AskStartResponse> {
  const message = request.message.trim();
  if (!message) throw badRequest("message", "must not be empty");
  const tenant = tenantOf(ctx.actor);
  const now = ctx.now();
  return withTransaction(ctx.db, async (tx) => {
    const txCtx = { ...ctx, db: tx };
    const existing = request.session_id ? await touchSession(tx, tenant, request.session_id, now) : null;
    const sessionId =
      existing?.id ??
      (await createSession(
        tx,
        tenant,
        {
          firstPrompt: message,
          initiator: initiatorOf(ctx.actor),
          sourceApp: request.source_app ?? null,
          sourceMetadata: request.source_metadata ?? {},
        },
        now,
      ));
    await addMessage(tx, { sessionId, role: "user", content: message }, now);
    const catalog = await loadCatalog(tx, tenant);
    const pending: WaitingAsk | null = existing?.pending ?? null;
    const choice = choose(txCtx, catalog, request, pending);
    const answer = (fields: Partial<AskStartResponse> & { message: string }): AskStartResponse => ({
      trace_id: "",
      run_id: "",
      session_id: sessionId,
      decision: choice.decision,
      candidates: choice.candidates,
      inputs_required: [],
      extracted: {},
      fallback_agent: choice.fallbackAgent,
      plan: choice.target?.name ?? "",
      prior_session_id: null,
      ...fields,
    });
    const record = async (reply: AskStartResponse, nextPending: WaitingAsk | null) => {
      await tx.update(sessions).set({ pending: nextPending }).where(eq(sessions.id, sessionId));
      const { message: content, session_id: _session, ...data } = reply;
      await addMessage(
        tx,
        { sessionId, role: "assistant", content, traceId: reply.trace_id || null, data },
        now,
      );
      return reply;
    };
    const target = choice.target;
    if (!target) return record(answer({ message: describe(choice, [], null) }), pending);

    const given = request.inputs ?? {};
    checkGivenInputs(target, given);
    const continued = choice.decision === "continued" && pending !== null;
    // An answer completes the request that made the session wait: the prior session is the one that
    // request's message finds, under its policy unless the answer gives one.
    const asked = continued
      ? {
          prompt: pending.prompt ?? existing?.firstPrompt ?? message,
          policy: request.prior_session ?? pending.priorSession ?? null,
        }
      : { prompt: message, policy: request.prior_session ?? null };
    const carried = continued ? pending.inputs : {};
    const known = { ...carried, ...given };
    // What a caller passes in `inputs`, in this request or an earlier one of the session, stands;
    // what an earlier answer's message gave, `name=value` corrects.
    const givenNames = new Set([...(continued ? (pending.given ?? []) : []), ...Object.keys(given)]);
    const integrations = [...new Set([...catalog.integrationsOf.values()].flat())];
    const extracted = inputsFromMessage(target, message, {
      integrations,
      skip: new Set(Object.keys(known)),
      correctable: new Set(Object.keys(carried).filter((name) => !givenNames.has(name))),
    });
    const values: Record<string, string> = { ...known, ...extracted };
    const stillMissing = () =>
      target.inputs
        .filter((item) => item.required && item.default === undefined && !values[item.name])
        .map((item) => item.name);
    // An answer in the session that names nothing: the whole message is the one missing value.
    const waiting = stillMissing();
    if (choice.decision === "continued" && waiting.length === 1 && Object.keys(extracted).length === 0) {
      const only = target.inputs.find((item) => item.name === waiting[0]);
      const named = /^[A-Za-z_][A-Za-z0-9_-]*\s*[=:]/.test(message);
      if (only && !named && !/\s/.test(message) && (!only.pattern || matchesPattern(only.pattern, message))) {
        values[only.name] = message;
        extracted[only.name] = message;
      }
    }
    const missing = stillMissing();
    if (missing.length > 0) {
      const reply = answer({
        decision: "inputs_required",
        inputs_required: missing,
        extracted,
        message: describe(choice, missing, null),
      });
      return record(reply, {
        target: { type: target.type, name: target.name },
        inputs: values,
        given: [...givenNames],
        missing,
        prompt: asked.prompt,
        priorSession: asked.policy,
      });
    }
    const prior =
      asked.policy?.enabled === true
        ? await priorSession(tx, tenant, asked.policy, asked.prompt, sessionId, target, now)
        : null;
    const started = await startExecution({
      ctx: txCtx,
      tenant,
      input: {
        target: { type: target.type, name: target.name },
        input: {
          // The request, not the answer that completed it: "restart the foo deployment", with
          // `answer` "prod-eu" beside it.
          message: continued ? asked.prompt : message,
          ...(continued && { answer: message }),
          ...values,
          ...(prior ? { prior_session: { session_id: prior.id, summary: prior.summary } } : {}),
        },
        sessionId,
      },
    });
    return record(
      answer({
        trace_id: started.traceId,
        run_id: started.runId,
        extracted,
        prior_session_id: prior?.id ?? null,
        message: describe(choice, [], prior?.id ?? null),
      }),
      null,
    );
  });
}
