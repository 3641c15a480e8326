// The label vocabulary: which label keys name an alert's environment, cluster, service, host and so
// on. Impact (impact.ts), storms (correlate.ts) and triage buckets (triage/triage.ts) read labels
// only through it, so a key means the same to all three. Keys are compared in one spelling
// (normalizeLabelKey); label keys and values are data, so lookups go through Maps, never through
// plain objects where a label named `constructor` or `__proto__` would find Object.prototype.

export type LabelKind =
  | "environment"
  | "cluster"
  | "region"
  | "service"
  | "workload"
  | "namespace"
  | "job"
  | "host"
  | "database_instance"
  | "data_store"
  | "process"
  | "hardware"
  | "subsystem"
  | "check"
  | "dependency"
  | "alert_name"
  | "signal";

/**
 * Each kind's keys, in their normalized spelling. The order is the precedence: among labels of one
 * kind (or one impact scope level), the key listed first wins; keys that are not listed tie and
 * then sort by their own name.
 */
const VOCABULARY: readonly (readonly [LabelKind, readonly string[]])[] = [
  // GitLab's deployment tier (production, staging, ...) is an environment too.
  ["environment", ["deployment_environment", "environment", "env", "deploy_env", "app_env", "stage", "tier"]],
  ["cluster", ["cluster"]],
  ["region", ["region", "zone", "availability_zone", "location", "datacenter"]],
  ["service", ["service", "app", "application"]],
  ["workload", ["deployment", "statefulset", "daemonset", "workload"]],
  ["namespace", ["namespace"]],
  // A Prometheus scrape job or a batch job: service-wide, but not a service's name.
  ["job", ["job"]],
  [
    "host",
    ["host", "hostname", "node", "nodename", "instance", "machine", "vm", "server", "resource", "entity"],
  ],
  // CloudWatch's DBInstanceIdentifier: a host that is a database.
  ["database_instance", ["db_instance"]],
  ["data_store", ["database", "db", "bucket", "topic", "queue"]],
  ["process", ["pod", "container", "process"]],
  ["hardware", ["device", "mountpoint", "filesystem", "fstype", "disk", "volume", "interface"]],
  // Zabbix's `component` tag (cpu, memory, storage) and Kubernetes' app component.
  ["subsystem", ["component"]],
  [
    "dependency",
    ["depends_on", "dependson", "upstream", "upstream_service", "dependency", "dependencies", "caused_by"],
  ],
  ["alert_name", ["alertname"]],
  // Names of what the rule watches: their words say the layer.
  ["signal", ["metric", "condition", "check_command"]],
];

const KIND_OF_KEY = new Map<string, LabelKind>();
const RANK_OF_KEY = new Map<string, number>();
for (const [kind, keys] of VOCABULARY) {
  for (const key of keys) {
    KIND_OF_KEY.set(key, kind);
    RANK_OF_KEY.set(key, RANK_OF_KEY.size);
  }
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

/**
 * What a label key names, given the source; null for a key outside the vocabulary. CloudWatch's
 * `namespace` is a metric namespace (`AWS/RDS`), not a Kubernetes one; Checkmk's `service` is one
 * check of a host, not a service; Splunk's `app` is the Splunk app a saved search lives in (most
 * often `search`), which would put unrelated searches in one storm. Without a source, a key means
 * what it means to most sources.
 */
export function labelKindOf(key: string, sourceType = ""): LabelKind | null {
  const normalized = normalizeLabelKey(key);
  if (sourceType === "cloudwatch" && normalized === "namespace") return null;
  if (sourceType === "splunk" && normalized === "app") return null;
  if (sourceType === "checkmk" && normalized === "service") return "check";
  return KIND_OF_KEY.get(normalized) ?? null;
}

/** A key's place in the vocabulary's precedence (lower first); keys outside it come last. */
export function keyRank(key: string): number {
  return RANK_OF_KEY.get(normalizeLabelKey(key)) ?? RANK_OF_KEY.size;
}

export interface VocabularyLabel {
  key: string;
  value: string;
}

function byPrecedence(a: VocabularyLabel, b: VocabularyLabel): number {
  return keyRank(a.key) - keyRank(b.key) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** The labels of one kind whose value is not blank, in precedence order (then by key). */
export function labelsOfKind(
  labels: Readonly<Record<string, string>>,
  sourceType: string,
  kind: LabelKind,
): readonly VocabularyLabel[] {
  return labelsByKind(labels, sourceType).get(kind) ?? NONE;
}

/** The first label of the first of `kinds` the labels have (blank values do not count). */
export function firstLabelOf(
  labels: Readonly<Record<string, string>>,
  sourceType: string,
  kinds: readonly LabelKind[],
): (VocabularyLabel & { kind: LabelKind }) | null {
  const byKind = labelsByKind(labels, sourceType);
  for (const kind of kinds) {
    const first = byKind.get(kind)?.[0];
    if (first) return { ...first, kind };
  }
  return null;
}

const NONE: readonly VocabularyLabel[] = Object.freeze([]);

/**
 * One alert's labels sorted by kind, made once per labels object: storm scope, impact and the
 * triage bucket each look up several kinds of the same labels, and each lookup went through every
 * label again (about fifteen passes an alert, 5% of the process's time on 50-alert deliveries).
 * Labels are not changed once parsed.
 */
function labelsByKind(
  labels: Readonly<Record<string, string>>,
  sourceType: string,
): ReadonlyMap<LabelKind, readonly VocabularyLabel[]> {
  const cached = BY_KIND.get(labels);
  if (cached?.sourceType === sourceType) return cached.byKind;
  const byKind = new Map<LabelKind, VocabularyLabel[]>();
  for (const [key, value] of Object.entries(labels)) {
    if (value.trim() === "") continue;
    const kind = labelKindOf(key, sourceType);
    if (kind === null) continue;
    const found = byKind.get(kind);
    if (found) found.push({ key, value });
    else byKind.set(kind, [{ key, value }]);
  }
  for (const found of byKind.values()) found.sort(byPrecedence);
  BY_KIND.set(labels, { sourceType, byKind });
  return byKind;
}

const BY_KIND = new WeakMap<
  object,
  { sourceType: string; byKind: ReadonlyMap<LabelKind, readonly VocabularyLabel[]> }
>();
