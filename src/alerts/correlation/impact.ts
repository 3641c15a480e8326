// Impact score: how much of the estate an alert touches, 0..100, with a one-line reason. Pure, and
// never read from severity (the spec: a Low alert on a production cluster can outrank a Critical
// one on a developer's pod).
//
//   impact = environment + scope + fan-out                                  (capped at 100)
//
//   environment  (0..50)  criticality of the alert's environment, read from its environment label
//                          (label-vocabulary.ts: env, environment, deployment_environment, stage,
//                          tier... in any spelling): high 50 (production, prod, prd, live), medium 25
//                          (staging, stage, preprod, uat), low 5 (dev, development, test, qa,
//                          sandbox, local), unknown 20. A value is matched whole, then word by word
//                          ("prod-eu" is prod). Without such a label: a bare tag named like an
//                          environment (Datadog/Dynatrace `production`), then a word of the
//                          cluster, namespace or host name (`prod-us-east-1`, `web-03.prod`).
//                          Configured entries add to the map (ImpactOptions.environmentCriticality).
//   scope        (0..30)  label scope breadth, decided by the narrowest scope label present:
//                          cluster/region/zone 30 > namespace/service/deployment/job/app 20 >
//                          host/node/instance/resource/database 10 > pod/container/process/disk 5;
//                          no scope label at all 10.
//   fan-out      (0..20)  members of the alert's storm (correlate.ts): 0 outside a storm,
//                          else 5 per other member, at most 20 (a storm of 5 or more).
//
// Examples: a production service-wide alert alone = 50 + 20 + 0 = 70; a dev pod alert = 5 + 5 = 10;
// a production cluster-wide alert in a storm of 6 = 50 + 30 + 20 = 100.

import type { Criticality } from "../../config.ts";
import { keyRank, type LabelKind, labelKindOf, labelsOfKind } from "./label-vocabulary.ts";

export type EnvironmentLevel = Criticality;
export type ScopeLevel = "cluster" | "service" | "host" | "component";

export const ENVIRONMENT_POINTS: Record<EnvironmentLevel | "unknown", number> = {
  high: 50,
  medium: 25,
  low: 5,
  unknown: 20,
};

export const SCOPE_POINTS: Record<ScopeLevel | "unknown", number> = {
  cluster: 30,
  service: 20,
  host: 10,
  component: 5,
  unknown: 10,
};

/** Points per other storm member, and the most fan-out can add. */
export const FAN_OUT_POINTS_PER_MEMBER = 5;
export const FAN_OUT_MAX_POINTS = 20;

export type EnvironmentCriticality = ReadonlyMap<string, EnvironmentLevel>;

export const DEFAULT_ENVIRONMENT_CRITICALITY: EnvironmentCriticality = new Map<string, EnvironmentLevel>([
  ["production", "high"],
  ["prod", "high"],
  ["prd", "high"],
  ["live", "high"],
  ["staging", "medium"],
  ["stage", "medium"],
  ["stg", "medium"],
  ["preprod", "medium"],
  ["pre-prod", "medium"],
  ["uat", "medium"],
  ["dev", "low"],
  ["development", "low"],
  ["test", "low"],
  ["testing", "low"],
  ["qa", "low"],
  ["sandbox", "low"],
  ["local", "low"],
]);

const MERGED = new WeakMap<object, EnvironmentCriticality>();

/**
 * The default map with the configured entries (ENVIRONMENT_CRITICALITY, Config.environmentCriticality)
 * added to it or replacing a default entry of the same name. Built once per entries object: the
 * configuration does not change while Vigil runs.
 */
export function environmentCriticality(
  entries?: Readonly<Record<string, EnvironmentLevel>>,
): EnvironmentCriticality {
  if (!entries) return DEFAULT_ENVIRONMENT_CRITICALITY;
  const cached = MERGED.get(entries);
  if (cached) return cached;
  const merged = new Map(DEFAULT_ENVIRONMENT_CRITICALITY);
  for (const [name, level] of Object.entries(entries)) merged.set(name.trim().toLowerCase(), level);
  MERGED.set(entries, merged);
  return merged;
}

export interface ImpactOptions {
  /** Environment name -> criticality, added to the default map (replacing a default entry). */
  environmentCriticality?: Readonly<Record<string, EnvironmentLevel>>;
}

export interface ImpactInput {
  labels: Record<string, string>;
  sourceType: string;
  /** Members of the alert's storm, itself included; 0 or 1 when it is in none. */
  stormSize: number;
}

export interface Impact {
  score: number;
  explanation: string;
}

/** Lower-case words of a value: `prod-us-east-1` -> prod, us, east, 1. */
function wordsOf(value: string): string[] {
  return value
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

const SCOPE_LEVEL_OF_KIND = new Map<LabelKind, ScopeLevel>([
  ["cluster", "cluster"],
  ["region", "cluster"],
  ["service", "service"],
  ["workload", "service"],
  ["namespace", "service"],
  ["job", "service"],
  ["host", "host"],
  ["database_instance", "host"],
  ["data_store", "host"],
  ["process", "component"],
  ["hardware", "component"],
  ["check", "component"],
]);

/** Labels whose value may name the environment (`prod-us-east-1`): every scope but a job's. */
const ENVIRONMENT_HINT_KINDS = new Set<LabelKind>([
  "cluster",
  "region",
  "service",
  "workload",
  "namespace",
  "host",
  "database_instance",
  "data_store",
]);

const SCOPE_ORDER: ScopeLevel[] = ["component", "host", "service", "cluster"];

/** What a label key means for scope, given the source (label-vocabulary.ts); null: no scope. */
export function scopeLevelOf(key: string, sourceType: string): ScopeLevel | null {
  const kind = labelKindOf(key, sourceType);
  return (kind && SCOPE_LEVEL_OF_KIND.get(kind)) ?? null;
}

function levelOfValue(
  value: string,
  map: EnvironmentCriticality,
): { level: EnvironmentLevel; name: string } | null {
  const whole = value.trim().toLowerCase();
  const wholeLevel = map.get(whole);
  if (wholeLevel) return { level: wholeLevel, name: whole };
  for (const word of wordsOf(value)) {
    const level = map.get(word);
    if (level) return { level, name: word };
  }
  return null;
}

export interface EnvironmentReading {
  level: EnvironmentLevel | "unknown";
  reason: string;
}

export function readEnvironment(
  labels: Record<string, string>,
  sourceType: string,
  map: EnvironmentCriticality,
): EnvironmentReading {
  // 1. An environment label, in the vocabulary's order of environment keys.
  const named = labelsOfKind(labels, sourceType, "environment");
  for (const { key, value } of named) {
    const found = levelOfValue(value, map);
    if (found) return { level: found.level, reason: `${found.name} environment (${key}=${value})` };
  }
  const [unmatched] = named;
  if (unmatched) {
    return {
      level: "unknown",
      reason: `environment "${unmatched.value}" is not in the criticality map (${unmatched.key}=${unmatched.value})`,
    };
  }
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // 2. A bare tag named like an environment (`production` with an empty value).
  for (const [key, value] of entries) {
    const name = key.trim().toLowerCase();
    const level = value === "" ? map.get(name) : undefined;
    if (level) return { level, reason: `${name} environment (tag ${key})` };
  }
  // 3. A word of the cluster, namespace or host name.
  for (const [key, value] of entries) {
    const kind = labelKindOf(key, sourceType);
    if (!kind || !ENVIRONMENT_HINT_KINDS.has(kind)) continue;
    for (const word of wordsOf(value)) {
      const level = map.get(word);
      if (level) return { level, reason: `${word} environment, inferred from ${key}=${value}` };
    }
  }
  return { level: "unknown", reason: "environment unknown (no environment label)" };
}

const SCOPE_WORDS: Record<ScopeLevel, string> = {
  cluster: "cluster- or region-wide scope",
  service: "service-wide scope",
  host: "one host or resource",
  component: "one pod, container or disk",
};

function readScope(
  labels: Record<string, string>,
  sourceType: string,
): { level: ScopeLevel | "unknown"; reason: string } {
  let narrowest: { level: ScopeLevel; key: string; value: string; rank: number } | null = null;
  for (const [key, value] of Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const level = scopeLevelOf(key, sourceType);
    if (!level) continue;
    const rank = keyRank(key);
    const order = SCOPE_ORDER.indexOf(level) - (narrowest ? SCOPE_ORDER.indexOf(narrowest.level) : 99);
    if (!narrowest || order < 0 || (order === 0 && rank < narrowest.rank)) {
      narrowest = { level, key, value, rank };
    }
  }
  if (!narrowest) return { level: "unknown", reason: "scope unknown (no scope label)" };
  return {
    level: narrowest.level,
    reason: `${SCOPE_WORDS[narrowest.level]} (${narrowest.key}=${narrowest.value})`,
  };
}

export function fanOutPoints(stormSize: number): number {
  if (stormSize < 2) return 0;
  return Math.min(FAN_OUT_MAX_POINTS, FAN_OUT_POINTS_PER_MEMBER * (stormSize - 1));
}

/** The smallest storm that earns the most fan-out points (5). */
const FAN_OUT_FULL_SIZE = FAN_OUT_MAX_POINTS / FAN_OUT_POINTS_PER_MEMBER + 1;

/**
 * The storm part of the explanation. Past the size that earns the most points it names that size,
 * not the storm's: the score no longer changes as the storm grows, and neither does any member's
 * row (a count in the text rewrote every member of a growing storm at each joiner, with all its
 * index entries). The storm itself says how many members it has.
 */
function stormWords(stormSize: number): string {
  if (stormSize < 2) return "not in a storm";
  if (stormSize >= FAN_OUT_FULL_SIZE) return `storm of ${FAN_OUT_FULL_SIZE} or more co-firing alerts`;
  return `storm of ${stormSize} co-firing alerts`;
}

/** The impact score and its plain-English explanation (formula at the top of this file). */
export function computeImpact(input: ImpactInput, options: ImpactOptions = {}): Impact {
  const map = environmentCriticality(options.environmentCriticality);
  const environment = readEnvironment(input.labels, input.sourceType, map);
  const scope = readScope(input.labels, input.sourceType);
  const environmentPoints = ENVIRONMENT_POINTS[environment.level];
  const scopePoints = SCOPE_POINTS[scope.level];
  const fanOut = fanOutPoints(input.stormSize);
  const storm = stormWords(input.stormSize);
  const score = Math.min(100, environmentPoints + scopePoints + fanOut);
  return {
    score,
    explanation: `${environment.reason} +${environmentPoints}; ${scope.reason} +${scopePoints}; ${storm} +${fanOut}.`,
  };
}
