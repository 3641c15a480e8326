// Storms: co-firing alerts of one tenant and one scope, grouped under one storm_id, with the likely
// cause marked. Pure functions; storms.ts loads the alerts, calls planStorms and writes the result.
// The rules, in short (README.md, "Storms", has them in full):
//   * scope: the broadest of cluster > namespace > service > host the labels name (namespace and
//     service qualified by the environment). No scope label: never in a storm.
//   * window: every member triggered within STORM_WINDOW_MS of every other (span <= 10 minutes).
//   * at least 2 distinct active, non-test alerts; at most STORM_MAX_MEMBERS.
//   * membership is sticky: a member stays until it resolves, is ignored, becomes a test or changes
//     scope; a storm that falls below two members dissolves.
//   * roles: the cause is the member lowest in the layers (infrastructure < data < unknown <
//     application), then earliest, unless a dependency label says it depends on another member.
//     likely_upstream names the upstream by its title, and by a label too when the title is shared.
import { randomUUID } from "node:crypto";
import { computeImpact, type ImpactOptions } from "./impact.ts";
import { firstLabelOf, type LabelKind, labelKindOf } from "./label-vocabulary.ts";

export const STORM_WINDOW_MS = 10 * 60_000;
export const STORM_MAX_MEMBERS = 50;

export type AlertRole = "cause" | "symptom" | "unknown";

// ---- scope ----

// Broadest first. A region or a data store is not a storm scope: the alerts of one AWS region or
// one Kafka topic are not one incident.
const SCOPE_DIMENSIONS: { dimension: string; kinds: LabelKind[]; byEnvironment: boolean }[] = [
  { dimension: "cluster", kinds: ["cluster"], byEnvironment: false },
  { dimension: "namespace", kinds: ["namespace"], byEnvironment: true },
  { dimension: "service", kinds: ["service"], byEnvironment: true },
  { dimension: "host", kinds: ["host", "database_instance"], byEnvironment: false },
];

/** `10.42.3.17:8080` -> `10.42.3.17`: a Prometheus instance names its host with the scrape port. */
function hostOf(value: string): string {
  return value.replace(/:\d+$/, "");
}

/**
 * The storm scope of an alert's labels, such as `cluster:prod-eu-west-1`,
 * `service:checkout@production` or `host:db-primary-01`; null when no scope label is present.
 */
export function stormScopeOf(labels: Record<string, string>, sourceType: string): string | null {
  const environment = firstLabelOf(labels, sourceType, ["environment"])?.value.trim().toLowerCase();
  for (const { dimension, kinds, byEnvironment } of SCOPE_DIMENSIONS) {
    const found = firstLabelOf(labels, sourceType, kinds);
    if (!found) continue;
    const value = found.value.trim().toLowerCase();
    const name = dimension === "host" ? hostOf(value) : value;
    return `${dimension}:${name}${byEnvironment && environment ? `@${environment}` : ""}`;
  }
  return null;
}

export interface EligibilityInput {
  status: string;
  isTest: boolean;
  stormScope: string | null;
}

/** Only active, non-test alerts with a scope take part in storms. */
export function isStormEligible(alert: EligibilityInput): boolean {
  return alert.status === "active" && !alert.isTest && alert.stormScope !== null;
}

// ---- layers ----

export type AlertLayer = "infrastructure" | "data" | "unknown" | "application";

const LAYER_RANK: Record<AlertLayer, number> = { infrastructure: 0, data: 1, unknown: 2, application: 3 };

const INFRASTRUCTURE_WORDS = new Set([
  "node",
  "host",
  "disk",
  "df",
  "filesystem",
  "fs",
  "inode",
  "inodes",
  "volume",
  "cpu",
  "memory",
  "swap",
  "load",
  "network",
  "dns",
  "packet",
  "nic",
  "kernel",
  "ntp",
  "clock",
  "unreachable",
  "hardware",
  "temperature",
  "power",
  "ec2",
  "vm",
]);

const DATA_WORDS = new Set([
  "database",
  "db",
  "sql",
  "postgres",
  "postgresql",
  "pg",
  "mysql",
  "mariadb",
  "rds",
  "redis",
  "memcached",
  "mongo",
  "mongodb",
  "cassandra",
  "kafka",
  "rabbitmq",
  "queue",
  "replication",
  "replica",
  "elasticsearch",
  "etcd",
  "zookeeper",
  "cache",
]);

const APPLICATION_WORDS = new Set([
  "latency",
  "error",
  "errors",
  "5xx",
  "4xx",
  "http",
  "request",
  "requests",
  "response",
  "timeout",
  "timeouts",
  "slo",
  "apdex",
  "exception",
  "exceptions",
  "failure",
  "failures",
  "throughput",
  "p99",
  "p95",
  "api",
  "endpoint",
  "crash",
  "crashlooping",
]);

/** Kinds of label (label-vocabulary.ts) that by themselves say infrastructure or data. */
const LAYER_OF_KIND = new Map<LabelKind, AlertLayer>([
  ["hardware", "infrastructure"],
  ["database_instance", "data"],
  ["data_store", "data"],
]);

/** Kinds of label whose values are read for layer words, besides the title. */
const LAYER_TEXT_KINDS = new Set<LabelKind>(["alert_name", "signal"]);

function layerWords(text: string): string[] {
  const split = text.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2");
  return [...split.toLowerCase().split(/[^a-z0-9]+/), ...text.toLowerCase().split(/[^a-z0-9]+/)];
}

/**
 * The layer an alert watches, from its title, alertname, metric and check names and its label
 * keys. The lowest layer any word names wins: "Postgres disk full" is infrastructure.
 */
export function alertLayer(title: string, labels: Record<string, string>): AlertLayer {
  const words = layerWords(title);
  let keyLayer: AlertLayer | null = null;
  for (const [key, value] of Object.entries(labels)) {
    const kind = labelKindOf(key);
    if (kind === null) continue;
    if (LAYER_TEXT_KINDS.has(kind)) words.push(...layerWords(value));
    const layer = LAYER_OF_KIND.get(kind);
    if (layer === "infrastructure") keyLayer = "infrastructure";
    else if (layer === "data" && keyLayer === null) keyLayer = "data";
  }
  if (keyLayer === "infrastructure" || words.some((word) => INFRASTRUCTURE_WORDS.has(word))) {
    return "infrastructure";
  }
  if (keyLayer === "data" || words.some((word) => DATA_WORDS.has(word))) return "data";
  if (words.some((word) => APPLICATION_WORDS.has(word))) return "application";
  return "unknown";
}

// ---- roles ----

export interface RoleInput {
  id: string;
  title: string;
  labels: Record<string, string>;
  triggeredAt: Date;
  /** 1..5, Critical..info; absent counts as actionable. */
  displayPriority?: number;
}

/** The display priority of the info bucket: informational alerts, nobody's first look. */
const INFO_PRIORITY = 5;

export interface RoleResult {
  role: AlertRole;
  likelyUpstream: string | null;
}

/** Kinds of label a dependency label may name another member by (besides its title). */
const IDENTITY_KINDS = new Set<LabelKind>([
  "alert_name",
  "service",
  "host",
  "database_instance",
  "data_store",
]);

function dependencyHints(labels: Record<string, string>): Set<string> {
  const hints = new Set<string>();
  for (const [key, value] of Object.entries(labels)) {
    if (labelKindOf(key) !== "dependency") continue;
    for (const name of value.split(",")) if (name.trim()) hints.add(name.trim().toLowerCase());
  }
  return hints;
}

function identities(alert: RoleInput): Set<string> {
  const names = new Set([alert.title.trim().toLowerCase()]);
  for (const [key, value] of Object.entries(alert.labels)) {
    const kind = labelKindOf(key);
    if (kind !== null && IDENTITY_KINDS.has(kind) && value.trim()) {
      names.add(value.trim().toLowerCase());
      names.add(hostOf(value.trim().toLowerCase()));
    }
  }
  return names;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The label keys that say which thing an alert fires on, most telling first. */
const NAMING_KEYS = [
  "instance",
  "host",
  "hostname",
  "node",
  "pod",
  "container",
  "service",
  "job",
  "namespace",
  "cluster",
];

function namingRank(key: string): number {
  const rank = NAMING_KEYS.indexOf(key);
  return rank === -1 ? NAMING_KEYS.length : rank;
}

function labelOf(labels: Record<string, string>, key: string): string | undefined {
  return Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/**
 * How likely_upstream names `upstream` among the storm's `members`: its title when no other member
 * has that title. Otherwise the title and, in parentheses, the first label (instance, host,
 * hostname, node, pod, container, service, job, namespace, cluster, then the other keys in
 * code-unit order) whose value differs on every other member of that title, such as
 * `NodeDown (instance=node-1:9100)`; when no single label does, the labels needed, in that order;
 * when the labels cannot, its id.
 */
export function upstreamHintOf(upstream: RoleInput, members: RoleInput[]): string {
  const { title, labels } = upstream;
  const namesakes = members.filter((other) => other.id !== upstream.id && other.title === title);
  if (namesakes.length === 0) return title;
  const keys = Object.keys(labels)
    .filter((key) => labels[key] !== "")
    .sort((a, b) => namingRank(a) - namingRank(b) || compareIds(a, b));
  const tellsApart = (key: string, other: RoleInput) => labelOf(other.labels, key) !== labels[key];
  const named = (chosen: string[]) => `${title} (${chosen.map((key) => `${key}=${labels[key]}`).join(", ")})`;
  const single = keys.find((key) => namesakes.every((other) => tellsApart(key, other)));
  if (single !== undefined) return named([single]);
  const chosen: string[] = [];
  let alike = namesakes;
  for (const key of keys) {
    const still = alike.filter((other) => !tellsApart(key, other));
    if (still.length === alike.length) continue;
    chosen.push(key);
    alike = still;
    if (alike.length === 0) return named(chosen);
  }
  return `${title} (id=${upstream.id})`;
}

/**
 * Roles within one storm. The cause is, among the members no dependency label puts downstream of
 * another member (in a cycle of labels, among those another member depends on; and not of the info
 * bucket, unless all are), the one lowest in the layers, then
 * the earliest, then the smallest id. Another
 * member is a symptom when there is evidence: its dependency label names a member (likely_upstream
 * names that one), or the cause is in a lower layer, or the cause triggered earlier. A member with
 * no such evidence (same layer, same trigger time) is `unknown`, and so is the cause when no
 * member is its symptom: a tie is not a diagnosis. likely_upstream is upstreamHintOf the upstream.
 */
export function assignRoles(members: RoleInput[]): Map<string, RoleResult> {
  const roles = new Map<string, RoleResult>();
  if (members.length < 2) {
    for (const member of members) roles.set(member.id, { role: "unknown", likelyUpstream: null });
    return roles;
  }
  const layer = new Map(
    members.map((member) => [member.id, LAYER_RANK[alertLayer(member.title, member.labels)]]),
  );
  const names = new Map(members.map((member) => [member.id, identities(member)]));
  const order = (a: RoleInput, b: RoleInput) =>
    (layer.get(a.id) ?? 0) - (layer.get(b.id) ?? 0) ||
    a.triggeredAt.getTime() - b.triggeredAt.getTime() ||
    compareIds(a.id, b.id);
  const upstreamOf = new Map<string, RoleInput>();
  for (const member of members) {
    const hints = dependencyHints(member.labels);
    if (hints.size === 0) continue;
    const named = members
      .filter((other) => other.id !== member.id && [...hints].some((hint) => names.get(other.id)?.has(hint)))
      .sort(order);
    if (named[0]) upstreamOf.set(member.id, named[0]);
  }
  const roots = members.filter((member) => !upstreamOf.has(member.id));
  // When the labels name each other in a cycle, the cause is among the members some other member
  // depends on: one that only depends on others is downstream whatever its time.
  const dependedOn = new Set([...upstreamOf.values()].map((upstream) => upstream.id));
  const candidates = roots.length > 0 ? roots : members.filter((member) => dependedOn.has(member.id));
  // An informational alert is not the cause to look at first while an actionable one fires beside
  // it (an info rule on the same expression fired before the critical one's `for:` ran out).
  const actionable = candidates.filter((member) => (member.displayPriority ?? 1) < INFO_PRIORITY);
  const cause = [...(actionable.length > 0 ? actionable : candidates)].sort(order)[0] as RoleInput;
  let symptoms = 0;
  for (const member of members) {
    if (member.id === cause.id) continue;
    const hinted = upstreamOf.get(member.id);
    const evidence =
      hinted !== undefined ||
      (layer.get(cause.id) ?? 0) < (layer.get(member.id) ?? 0) ||
      cause.triggeredAt < member.triggeredAt;
    if (evidence) {
      symptoms += 1;
      roles.set(member.id, { role: "symptom", likelyUpstream: upstreamHintOf(hinted ?? cause, members) });
    } else {
      roles.set(member.id, { role: "unknown", likelyUpstream: null });
    }
  }
  roles.set(cause.id, { role: symptoms > 0 ? "cause" : "unknown", likelyUpstream: null });
  return roles;
}

// ---- storms ----

/** An active, non-test alert of a scope being correlated, as stored. */
export interface StormAlert extends RoleInput {
  sourceType: string;
  stormScope: string;
  stormId: string | null;
  alertRole: string;
  likelyUpstream: string | null;
  impactScore: number;
  impactExplanation: string | null;
}

export interface StormFields {
  id: string;
  stormId: string | null;
  alertRole: AlertRole;
  likelyUpstream: string | null;
  impactScore: number;
  impactExplanation: string;
}

/**
 * A storm near the alerts being correlated whose members were not read: what placing a joiner
 * needs (its size and the trigger times of its first and last member).
 */
export interface StormSummary {
  id: string;
  scope: string;
  size: number;
  first: Date;
  last: Date;
}

export interface StormPlanInput {
  /**
   * Every active, non-test alert of the scopes being correlated that can matter: all members of
   * the storms near the joiners or touched by the delivery (or their summaries), and the unstormed
   * alerts of the joiners' scopes within the window.
   */
  alerts: StormAlert[];
  /** Storms given by their summary instead of their members; see stormsToLoad. */
  summaries?: StormSummary[];
  windowMs?: number;
  maxMembers?: number;
  impact?: ImpactOptions;
  newStormId?: () => string;
  /**
   * The alerts whose stored fields may be out of date (the pending ones) and the storms they were
   * in. When given, a storm that takes no joiner, holds none of these alerts and lost none is left
   * as stored: its roles and impacts were computed from the same members. Absent: every storm given
   * is recomputed.
   */
  changed?: { alerts: ReadonlySet<string>; storms: ReadonlySet<string> };
}

interface Storm {
  id: string;
  scope: string;
  /** The members given (none for a summary), joiners included. */
  members: StormAlert[];
  size: number;
  first: number;
  last: number;
  /** Whether every member is in `members`. */
  whole: boolean;
}

const byTime = (a: StormAlert, b: StormAlert) =>
  a.triggeredAt.getTime() - b.triggeredAt.getTime() || compareIds(a.id, b.id);

function join(storm: Storm, alert: StormAlert): void {
  const t = alert.triggeredAt.getTime();
  storm.members.push(alert);
  storm.size += 1;
  storm.first = Math.min(storm.first, t);
  storm.last = Math.max(storm.last, t);
}

/**
 * Places every loose alert given (in trigger order) into a storm of its scope when one fits, or
 * forms a storm with other loose alerts of its window. Returns the storms, which of them took a
 * joiner or formed, and the alerts given, deduplicated and in trigger order.
 */
function place(input: StormPlanInput) {
  const windowMs = input.windowMs ?? STORM_WINDOW_MS;
  const maxMembers = input.maxMembers ?? STORM_MAX_MEMBERS;
  const newStormId = input.newStormId ?? randomUUID;
  const alerts = [...new Map(input.alerts.map((alert) => [alert.id, alert])).values()].sort(byTime);
  const stormOf = new Map<string, Storm>();
  const storms = new Map<string, Storm>();
  for (const alert of alerts) {
    if (alert.stormId === null) continue;
    const t = alert.triggeredAt.getTime();
    let storm = storms.get(alert.stormId);
    if (!storm) {
      storm = {
        id: alert.stormId,
        scope: alert.stormScope,
        members: [],
        size: 0,
        first: t,
        last: t,
        whole: true,
      };
      storms.set(storm.id, storm);
    }
    join(storm, alert);
    stormOf.set(alert.id, storm);
  }
  for (const summary of input.summaries ?? []) {
    if (storms.has(summary.id)) continue;
    storms.set(summary.id, {
      id: summary.id,
      scope: summary.scope,
      members: [],
      size: summary.size,
      first: summary.first.getTime(),
      last: summary.last.getTime(),
      whole: false,
    });
  }

  const byScope = new Map<string, StormAlert[]>();
  for (const alert of alerts) {
    const list = byScope.get(alert.stormScope);
    if (list) list.push(alert);
    else byScope.set(alert.stormScope, [alert]);
  }
  const stormsByScope = new Map<string, Storm[]>();
  for (const storm of storms.values()) {
    const list = stormsByScope.get(storm.scope);
    if (list) list.push(storm);
    else stormsByScope.set(storm.scope, [storm]);
  }

  const grown = new Set<string>();
  for (const [scope, scoped] of byScope) {
    const scopeStorms = stormsByScope.get(scope) ?? [];
    for (const joiner of scoped) {
      if (stormOf.has(joiner.id)) continue;
      const t = joiner.triggeredAt.getTime();
      // Near: within the window of the storm's first to last member. A storm left with one member
      // (the others just left) can still take the joiner.
      const near = scopeStorms.filter((storm) => t >= storm.first - windowMs && t <= storm.last + windowMs);
      const fitting = near.find(
        (storm) => storm.size < maxMembers && Math.max(storm.last, t) - Math.min(storm.first, t) <= windowMs,
      );
      if (fitting) {
        grown.add(fitting.id);
        join(fitting, joiner);
        stormOf.set(joiner.id, fitting);
        continue;
      }
      // A full storm of the scope within the window: the alert stays out (the bound).
      if (near.some((storm) => storm.size >= maxMembers)) continue;
      const loose = scoped.filter(
        (other) =>
          other.id !== joiner.id &&
          !stormOf.has(other.id) &&
          Math.abs(other.triggeredAt.getTime() - t) <= windowMs,
      );
      if (loose.length === 0) continue;
      // The window holding the joiner that starts at the earliest loose alert it can reach.
      const start = Math.min(
        t,
        ...loose.map((other) => other.triggeredAt.getTime()).filter((time) => time >= t - windowMs),
      );
      const members = [
        joiner,
        ...loose.filter((other) => other.triggeredAt.getTime() <= start + windowMs).slice(0, maxMembers - 1),
      ].sort(byTime);
      const storm: Storm = { id: newStormId(), scope, members: [], size: 0, first: t, last: t, whole: true };
      for (const member of members) join(storm, member);
      grown.add(storm.id);
      storms.set(storm.id, storm);
      scopeStorms.push(storm);
      stormsByScope.set(scope, scopeStorms);
      for (const member of members) stormOf.set(member.id, storm);
    }
  }
  return { alerts, storms, grown };
}

/** The storms given by summary that take a joiner: their members must be given for planStorms. */
export function stormsToLoad(input: StormPlanInput): string[] {
  const { storms, grown } = place(input);
  return [...grown].filter((id) => storms.get(id)?.whole === false);
}

/**
 * Places the loose alerts (see place); dissolves storms below two members; and recomputes roles
 * and impact of the alerts given. Returns the fields of the alerts whose storm fields or impact
 * differ from what is stored. A storm given by summary must take no joiner (stormsToLoad).
 */
export function planStorms(input: StormPlanInput): StormFields[] {
  const { alerts, storms, grown } = place(input);
  const { changed } = input;
  const settledMembers = new Set<string>();
  const next = new Map<string, Omit<StormFields, "impactScore" | "impactExplanation"> & { size: number }>();
  for (const storm of storms.values()) {
    if (!storm.whole) {
      if (grown.has(storm.id))
        throw new Error(`storm ${storm.id} takes a joiner but its members were not given`);
      continue;
    }
    if (
      changed &&
      !grown.has(storm.id) &&
      !changed.storms.has(storm.id) &&
      !storm.members.some((member) => changed.alerts.has(member.id))
    ) {
      for (const member of storm.members) settledMembers.add(member.id);
      continue;
    }
    const alive = storm.members.length >= 2;
    const roles = alive ? assignRoles(storm.members) : new Map<string, RoleResult>();
    for (const member of storm.members) {
      const role = roles.get(member.id) ?? { role: "unknown" as const, likelyUpstream: null };
      next.set(member.id, {
        id: member.id,
        stormId: alive ? storm.id : null,
        alertRole: role.role,
        likelyUpstream: role.likelyUpstream,
        size: alive ? storm.members.length : 0,
      });
    }
  }

  const changes: StormFields[] = [];
  for (const alert of alerts) {
    if (settledMembers.has(alert.id)) continue;
    const fields = next.get(alert.id) ?? {
      id: alert.id,
      stormId: null,
      alertRole: "unknown" as const,
      likelyUpstream: null,
      size: 0,
    };
    // A loose alert that stays loose keeps the impact it was written with.
    if (fields.stormId === null && alert.stormId === null && alert.impactExplanation !== null) continue;
    const impact = computeImpact(
      { labels: alert.labels, sourceType: alert.sourceType, stormSize: fields.size },
      input.impact,
    );
    if (
      fields.stormId !== alert.stormId ||
      fields.alertRole !== alert.alertRole ||
      fields.likelyUpstream !== alert.likelyUpstream ||
      impact.score !== alert.impactScore ||
      impact.explanation !== alert.impactExplanation
    ) {
      changes.push({
        id: fields.id,
        stormId: fields.stormId,
        alertRole: fields.alertRole,
        likelyUpstream: fields.likelyUpstream,
        impactScore: impact.score,
        impactExplanation: impact.explanation,
      });
    }
  }
  return changes;
}
