// Impact score: how much of the estate an alert touches, 0..100, with a one-line reason. Pure, and
// never read from severity (the spec: a Low alert on a production cluster can outrank a Critical
// one on a developer's pod).
//
//   impact = environment + scope + fan-out                                  (capped at 100)
//
//   environment  (0..50)  criticality of the alert's environment, read from the labels
//                          env / environment / deployment_environment / stage / tier (and the
//                          same keys with kube_, k8s_, aws_, gcp_, azure_ prefixes and camelCase):
//                          high 50 (production, prod, prd, live), medium 25 (staging, stage,
//                          preprod, uat), low 5 (dev, development, test, qa, sandbox, local),
//                          unknown 20. A value is matched whole, then word by word
//                          ("prod-eu" is prod). Without such a label: a bare tag named like an
//                          environment (Datadog/Dynatrace `production`), then a word of the
//                          cluster, namespace or host name (`prod-us-east-1`, `web-03.prod`).
//                          The map is configurable (ImpactOptions.environmentCriticality).
//   scope        (0..30)  label scope breadth, decided by the narrowest scope label present:
//                          cluster/region/zone 30 > namespace/service/deployment/job/app 20 >
//                          host/node/instance/resource 10 > pod/container/process/disk 5;
//                          no scope label at all 10.
//   fan-out      (0..20)  members of the alert's storm (correlate.ts): 0 outside a storm,
//                          else 5 per other member, at most 20 (a storm of 5 or more).
//
// Examples: a production service-wide alert alone = 50 + 20 + 0 = 70; a dev pod alert = 5 + 5 = 10;
// a production cluster-wide alert in a storm of 6 = 50 + 30 + 20 = 100.

export type EnvironmentLevel = "high" | "medium" | "low";
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

export const DEFAULT_ENVIRONMENT_CRITICALITY: Readonly<Record<string, EnvironmentLevel>> = {
  production: "high",
  prod: "high",
  prd: "high",
  live: "high",
  staging: "medium",
  stage: "medium",
  stg: "medium",
  preprod: "medium",
  "pre-prod": "medium",
  uat: "medium",
  dev: "low",
  development: "low",
  test: "low",
  testing: "low",
  qa: "low",
  sandbox: "low",
  local: "low",
};

export interface ImpactOptions {
  /** Environment name (lower case) -> criticality; replaces the default map. */
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

/**
 * A label key in one spelling: camelCase split, lower case, `_` between words, one vendor prefix
 * (kube_, k8s_, kubernetes_, aws_, gcp_, azure_, dd_) and one `_name`/`_id`/`_identifier` suffix
 * dropped. `kube_cluster_name`, `k8s-cluster` and `cluster_name` are all `cluster`; CloudWatch's
 * `InstanceId` is `instance`, `DBInstanceIdentifier` is `db_instance`.
 */
export function normalizeLabelKey(key: string): string {
  let normalized = NORMALIZED.get(key);
  if (normalized === undefined) {
    // Label keys repeat across alerts: a small cache spares the regexes on the ingest path.
    if (NORMALIZED.size >= 10_000) NORMALIZED.clear();
    normalized = normalizeUncached(key);
    NORMALIZED.set(key, normalized);
  }
  return normalized;
}

const NORMALIZED = new Map<string, string>();

function normalizeUncached(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  const unprefixed = words.replace(/^(kube|k8s|kubernetes|aws|gcp|azure|dd)_(?=.)/, "");
  return unprefixed.replace(/(?<=.)_(name|id|identifier)$/, "");
}

/** Lower-case words of a value: `prod-us-east-1` -> prod, us, east, 1. */
function wordsOf(value: string): string[] {
  return value
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0);
}

const ENVIRONMENT_KEYS = [
  "deployment_environment",
  "environment",
  "env",
  "deploy_env",
  "app_env",
  "stage",
  "tier",
];

// Within a level, the first key listed names the scope in the explanation.
const SCOPE_LEVEL_OF_KEY: Record<string, ScopeLevel> = {
  cluster: "cluster",
  region: "cluster",
  zone: "cluster",
  availability_zone: "cluster",
  location: "cluster",
  datacenter: "cluster",
  service: "service",
  app: "service",
  application: "service",
  deployment: "service",
  statefulset: "service",
  daemonset: "service",
  workload: "service",
  namespace: "service",
  job: "service",
  host: "host",
  hostname: "host",
  node: "host",
  nodename: "host",
  instance: "host",
  machine: "host",
  vm: "host",
  server: "host",
  resource: "host",
  entity: "host",
  db_instance: "host",
  database: "host",
  bucket: "host",
  topic: "host",
  queue: "host",
  pod: "component",
  container: "component",
  process: "component",
  device: "component",
  mountpoint: "component",
  filesystem: "component",
  disk: "component",
  volume: "component",
  interface: "component",
};

const KEY_RANK = new Map(Object.keys(SCOPE_LEVEL_OF_KEY).map((key, index) => [key, index]));

const SCOPE_ORDER: ScopeLevel[] = ["component", "host", "service", "cluster"];

/**
 * What a label key means for scope, given the source: CloudWatch's `namespace` is a metric
 * namespace (`AWS/RDS`), not a Kubernetes one; Checkmk's `service` is one check of a host.
 */
export function scopeLevelOf(key: string, sourceType: string): ScopeLevel | null {
  const normalized = normalizeLabelKey(key);
  if (sourceType === "cloudwatch" && normalized === "namespace") return null;
  if (sourceType === "checkmk" && normalized === "service") return "component";
  return SCOPE_LEVEL_OF_KEY[normalized] ?? null;
}

function levelOfValue(
  value: string,
  map: Readonly<Record<string, EnvironmentLevel>>,
): { level: EnvironmentLevel; name: string } | null {
  const whole = value.trim().toLowerCase();
  if (map[whole]) return { level: map[whole], name: whole };
  for (const word of wordsOf(value)) {
    if (map[word]) return { level: map[word], name: word };
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
  map: Readonly<Record<string, EnvironmentLevel>>,
): EnvironmentReading {
  const entries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // 1. An environment label, in the order of ENVIRONMENT_KEYS.
  let unmatched: [string, string] | null = null;
  for (const wanted of ENVIRONMENT_KEYS) {
    for (const [key, value] of entries) {
      if (normalizeLabelKey(key) !== wanted || value.trim() === "") continue;
      const found = levelOfValue(value, map);
      if (found) return { level: found.level, reason: `${found.name} environment (${key}=${value})` };
      unmatched ??= [key, value];
    }
  }
  if (unmatched) {
    return {
      level: "unknown",
      reason: `environment "${unmatched[1]}" is not in the criticality map (${unmatched[0]}=${unmatched[1]})`,
    };
  }
  // 2. A bare tag named like an environment (`production` with an empty value).
  for (const [key, value] of entries) {
    const name = key.trim().toLowerCase();
    if (value === "" && map[name]) return { level: map[name], reason: `${name} environment (tag ${key})` };
  }
  // 3. A word of the cluster, namespace or host name.
  for (const [key, value] of entries) {
    const level = scopeLevelOf(key, sourceType);
    if (level !== "cluster" && level !== "service" && level !== "host") continue;
    if (normalizeLabelKey(key) === "job") continue;
    for (const word of wordsOf(value)) {
      if (map[word]) {
        return { level: map[word], reason: `${word} environment, inferred from ${key}=${value}` };
      }
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
  for (const key of Object.keys(labels).sort()) {
    const level = scopeLevelOf(key, sourceType);
    if (!level) continue;
    const rank = KEY_RANK.get(normalizeLabelKey(key)) ?? KEY_RANK.size;
    const order = SCOPE_ORDER.indexOf(level) - (narrowest ? SCOPE_ORDER.indexOf(narrowest.level) : 99);
    if (!narrowest || order < 0 || (order === 0 && rank < narrowest.rank)) {
      narrowest = { level, key, value: labels[key] ?? "", rank };
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

/** The impact score and its plain-English explanation (formula at the top of this file). */
export function computeImpact(input: ImpactInput, options: ImpactOptions = {}): Impact {
  const map = options.environmentCriticality ?? DEFAULT_ENVIRONMENT_CRITICALITY;
  const environment = readEnvironment(input.labels, input.sourceType, map);
  const scope = readScope(input.labels, input.sourceType);
  const environmentPoints = ENVIRONMENT_POINTS[environment.level];
  const scopePoints = SCOPE_POINTS[scope.level];
  const fanOut = fanOutPoints(input.stormSize);
  const storm = input.stormSize < 2 ? "not in a storm" : `storm of ${input.stormSize} co-firing alerts`;
  const score = Math.min(100, environmentPoints + scopePoints + fanOut);
  return {
    score,
    explanation: `${environment.reason} +${environmentPoints}; ${scope.reason} +${scopePoints}; ${storm} +${fanOut}.`,
  };
}
