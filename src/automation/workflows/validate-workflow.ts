// Checks a workflow's content beyond its JSON schema: unique ids and names, valid patterns,
// one binding per stage, dependencies that exist and form no cycle, agents that exist.
import { AppError } from "../../core/errors.ts";
import { registeredAction } from "../executions/extensions.ts";
import { matchesPattern, patternError } from "../input-pattern.ts";
import { ACTION_TYPES, type Stage, type WorkflowInput } from "../schemas.ts";

function invalid(field: string, message: string): AppError {
  return new AppError("VALIDATION_FAILED", `${field}: ${message}`, { field });
}

export function validateInputs(inputs: WorkflowInput[]): void {
  const seen = new Set<string>();
  inputs.forEach((input, index) => {
    if (seen.has(input.name)) throw invalid(`inputs.${index}.name`, `duplicate input ${input.name}`);
    seen.add(input.name);
    if (input.pattern === undefined) return;
    const error = patternError(input.pattern);
    if (error) {
      throw invalid(
        `inputs.${index}.pattern`,
        `is not a valid regular expression in RE2 syntax (no look-around or back-references): ${error}`,
      );
    }
    if (input.default !== undefined && !matchesPattern(input.pattern, input.default)) {
      throw invalid(`inputs.${index}.default`, "does not match the input's pattern");
    }
  });
}

export function validateStages(stages: Stage[], agentExists: (name: string) => boolean): void {
  const ids = new Map<string, number>();
  stages.forEach((stage, index) => {
    if (ids.has(stage.id)) throw invalid(`stages.${index}.id`, `duplicate stage id ${stage.id}`);
    ids.set(stage.id, index);
    const bindings = [
      stage.agent_ref,
      stage.parallel_agents?.length ? stage.parallel_agents : undefined,
      stage.action_type,
    ];
    if (bindings.filter((binding) => binding !== undefined).length > 1) {
      throw invalid(`stages.${index}`, "binds more than one of agent_ref, parallel_agents and action_type");
    }
    if (
      stage.action_type &&
      !(ACTION_TYPES as readonly string[]).includes(stage.action_type) &&
      !registeredAction(stage.action_type)
    ) {
      throw invalid(`stages.${index}.action_type`, `unknown action type ${stage.action_type}`);
    }
    if (stage.agent_ref && !agentExists(stage.agent_ref)) {
      throw invalid(`stages.${index}.agent_ref`, `agent ${stage.agent_ref} not found`);
    }
    for (const agent of stage.parallel_agents ?? []) {
      if (!agentExists(agent)) throw invalid(`stages.${index}.parallel_agents`, `agent ${agent} not found`);
    }
  });
  stages.forEach((stage, index) => {
    for (const dependency of stage.depends_on ?? []) {
      if (!ids.has(dependency)) throw invalid(`stages.${index}.depends_on`, `unknown stage ${dependency}`);
      if (dependency === stage.id)
        throw invalid(`stages.${index}.depends_on`, "a stage cannot depend on itself");
    }
  });
  const cycle = findCycle(stages);
  if (cycle) throw invalid("stages", `dependency cycle: ${cycle.join(" -> ")}`);
}

/** Depth-first search over depends_on; returns one cycle's stage ids, or null. */
function findCycle(stages: Stage[]): string[] | null {
  const dependencies = new Map(stages.map((stage) => [stage.id, stage.depends_on ?? []]));
  const state = new Map<string, "visiting" | "done">();
  const path: string[] = [];
  const visit = (id: string): string[] | null => {
    if (state.get(id) === "done") return null;
    if (state.get(id) === "visiting") return [...path.slice(path.indexOf(id)), id];
    state.set(id, "visiting");
    path.push(id);
    for (const next of dependencies.get(id) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    state.set(id, "done");
    return null;
  };
  for (const stage of stages) {
    const cycle = visit(stage.id);
    if (cycle) return cycle;
  }
  return null;
}
