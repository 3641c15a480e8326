// Is a target safe to run unattended? Checked when a webhook or schedule is saved (400) and again
// when it fires (423), since a target that was ready can become unready.
import type { Stage } from "../schemas.ts";

export type ReadinessCode =
  | "TARGET_NOT_FOUND"
  | "NO_INTEGRATIONS"
  | "WORKFLOW_HAS_NO_STAGES"
  | "WORKFLOW_HAS_UNBOUND_STAGE";

export interface NotReady {
  errCode: ReadinessCode;
  msg: string;
  extras: {
    target_type: "agent" | "workflow";
    target_name: string;
    /** Every reason carries all five (the spec's extras): null and 0 where they do not apply. */
    unbound_stage_id: string | null;
    total_stages: number;
    resolution_hint: string;
  };
}

export function missingTarget(
  targetType: "agent" | "workflow",
  name: string,
  why = "does not exist",
): NotReady {
  return {
    errCode: "TARGET_NOT_FOUND",
    msg: `${targetType} ${name} ${why}`,
    extras: {
      target_type: targetType,
      target_name: name,
      unbound_stage_id: null,
      total_stages: 0,
      resolution_hint:
        targetType === "workflow" && why !== "does not exist"
          ? `approve a version: POST /platform/api/v1/workflows/${name}/versions/{version}/approve`
          : `create the ${targetType} or point the webhook at an existing one`,
    },
  };
}

/**
 * An agent is ready with at least one attached integration that exists: one deleted
 * since the agent was saved no longer counts.
 */
export function agentReadiness(
  agent: { name: string; integrations: string[] },
  existing: ReadonlySet<string>,
): NotReady[] {
  if (agent.integrations.some((name) => existing.has(name))) return [];
  return [
    {
      errCode: "NO_INTEGRATIONS",
      msg:
        agent.integrations.length === 0
          ? `agent ${agent.name} has no integrations attached`
          : `agent ${agent.name} has no integrations attached that exist (${agent.integrations.join(", ")} deleted)`,
      extras: {
        target_type: "agent",
        target_name: agent.name,
        unbound_stage_id: null,
        total_stages: 0,
        resolution_hint: `attach at least one integration: PUT /platform/api/v1/agents/${agent.name} with integrations`,
      },
    },
  ];
}

/** A stage is bound when it names an existing agent, a non-empty list of existing agents, or an action. */
export function unboundStage(stage: Stage, agentExists: (name: string) => boolean): boolean {
  if (stage.action_type) return false;
  if (stage.agent_ref) return !agentExists(stage.agent_ref);
  if (stage.parallel_agents && stage.parallel_agents.length > 0)
    return !stage.parallel_agents.every(agentExists);
  return true;
}

export function workflowReadiness(
  name: string,
  stages: Stage[],
  agentExists: (name: string) => boolean,
): NotReady[] {
  if (stages.length === 0) {
    return [
      {
        errCode: "WORKFLOW_HAS_NO_STAGES",
        msg: `workflow ${name} has no stages`,
        extras: {
          target_type: "workflow",
          target_name: name,
          unbound_stage_id: null,
          total_stages: 0,
          resolution_hint: "add stages in a new version and approve it",
        },
      },
    ];
  }
  return stages
    .filter((stage) => unboundStage(stage, agentExists))
    .map((stage) => ({
      errCode: "WORKFLOW_HAS_UNBOUND_STAGE" as const,
      msg: `stage ${stage.id} of workflow ${name} has no agent_ref, parallel_agents or action_type bound to an existing agent or action`,
      extras: {
        target_type: "workflow" as const,
        target_name: name,
        unbound_stage_id: stage.id,
        total_stages: stages.length,
        resolution_hint: `bind stage ${stage.id} to an agent or an action in a new version and approve it`,
      },
    }));
}

export function presentReasons(reasons: NotReady[]) {
  return reasons.map((reason) => ({
    errCode: reason.errCode,
    msg: reason.msg,
    resolution_hint: reason.extras.resolution_hint,
  }));
}
