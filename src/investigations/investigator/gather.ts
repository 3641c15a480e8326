// Step 1: what Vigil itself knows about the alert: the alert, its history (refires, flapping, quick
// auto-resolves), its storm, the alerts around it on the same service, host or cluster, and the
// links its source sent (kept as evidence).
import {
  type InvestigatedAlert,
  readAlertsTriggeredBetween,
  readInvestigatedEpisodes,
  readStormMembers,
} from "../../alerts/index.ts";
import type { Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import type { EvidenceDraft } from "../evidence.ts";

/** A resolve this soon after the firing it ends is a quick auto-resolve. */
const QUICK_RESOLVE_MS = 5 * 60_000;
const NEIGHBOUR_WINDOW_MS = 2 * 3_600_000;

export interface AlertExpression {
  expr: string;
  /** The compared side, and the comparison, when the expression is `<lhs> <op> <number>`. */
  lhs: string | null;
  op: string | null;
  threshold: number | null;
}

/** Another alert of the storm, with what tells whether it can be this alert's cause. */
export interface StormPeer {
  id: string;
  title: string;
  alertname: string | null;
  role: string;
  status: string;
  triggered_at: string;
  labels: Record<string, string>;
  scope: InvestigatedAlert["scope"];
}

export interface Gathered {
  alert: {
    id: string;
    title: string;
    description: string;
    source_type: string;
    severity: string;
    status: string;
    is_test: boolean;
    alertname: string | null;
    triggered_at: string;
    labels: Record<string, string>;
    scope: InvestigatedAlert["scope"];
    role: string;
    likely_upstream: string | null;
    storm_id: string | null;
    impact_score: number;
  };
  history: { refires: number; resolves: number; quick_auto_resolves: number; flapping: boolean };
  storm: {
    size: number;
    causes: { title: string; id: string }[];
    symptoms: number;
    /** The member the correlator names as this alert's likely upstream, else the storm's cause. */
    upstream: StormPeer | null;
  } | null;
  neighbours: { id: string; title: string; status: string; triggered_at: string; shared: string }[];
  expression: AlertExpression | null;
  links: { kind: string; url: string }[];
}

const COMPARISON = /^([\s\S]*?)\s*(>=|<=|==|!=|>|<)\s*(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\s*$/i;

/** The rule's expression from a Prometheus generatorURL (`/graph?g0.expr=...`). */
export function expressionOf(links: { kind: string; url: string }[]): AlertExpression | null {
  for (const link of links) {
    if (!URL.canParse(link.url)) continue;
    const expr = new URL(link.url).searchParams.get("g0.expr")?.trim();
    if (!expr) continue;
    const match = COMPARISON.exec(expr);
    if (!match?.[1]) return { expr, lhs: null, op: null, threshold: null };
    return { expr, lhs: match[1].trim(), op: match[2] ?? null, threshold: Number(match[3]) };
  }
  return null;
}

/**
 * Whether a likely_upstream hint names this storm member. The correlator writes the upstream's title,
 * and when another member shares the title, adds what tells it apart in parentheses: labels of its
 * own (`NodeDown (instance=node-1:9100)`, several joined by ", "), else its id
 * (src/alerts/README.md, "Roles"). Those labels name only it among the members of that title.
 */
function hintNames(hint: string, member: InvestigatedAlert): boolean {
  if (hint === member.title) return true;
  const prefix = `${member.title} (`;
  if (!hint.startsWith(prefix) || !hint.endsWith(")")) return false;
  let rest = hint.slice(prefix.length, -1);
  if (rest === "") return false;
  if (rest === `id=${member.id}`) return true;
  const pairs = Object.entries(member.labels).map(([key, value]) => `${key}=${value}`);
  // Each `key=value` is one of the member's labels; a value may itself hold ", ", so match whole pairs.
  while (rest !== "") {
    const pair = pairs.find((item) => rest === item || rest.startsWith(`${item}, `));
    if (pair === undefined) return false;
    rest = rest.slice(pair.length + 2);
  }
  return true;
}

export async function gather(db: Executor, tenant: Tenant, alert: InvestigatedAlert) {
  // By the source's times: episodes delivered together are not quick flaps for arriving seconds apart.
  const episodes = await readInvestigatedEpisodes(db, tenant, alert.id);
  let refires = 0;
  let resolves = 0;
  let quick = 0;
  let firedAt: Date | null = null;
  for (const episode of episodes) {
    if (episode.kind === "resolved") {
      resolves += 1;
      if (firedAt && episode.at.getTime() - firedAt.getTime() <= QUICK_RESOLVE_MS) quick += 1;
    } else {
      if (episode.kind === "refired") refires += 1;
      firedAt = episode.at;
    }
  }
  refires = Math.max(refires, alert.refireCount);
  const flapping = refires >= 3 || quick >= 3;

  let storm: Gathered["storm"] = null;
  let upstream: InvestigatedAlert | null = null;
  if (alert.stormId) {
    const members = await readStormMembers(db, tenant, {
      stormId: alert.stormId,
      exceptId: alert.id,
      limit: 50,
    });
    const causes = members.filter((member) => member.alertRole === "cause");
    // Causes first: a bare title shared by several members, written before the correlator told
    // namesakes apart, resolves as it did then.
    const hint = alert.likelyUpstream;
    upstream =
      (hint === null ? causes[0] : [...causes, ...members].find((member) => hintNames(hint, member))) ?? null;
    storm = {
      size: members.length + 1,
      causes: members
        .filter((member) => member.alertRole === "cause")
        .map((m) => ({ id: m.id, title: m.title })),
      symptoms: members.filter((member) => member.alertRole === "symptom").length,
      upstream: upstream && {
        id: upstream.id,
        title: upstream.title,
        alertname: upstream.labels.alertname ?? null,
        role: upstream.alertRole,
        status: upstream.status,
        triggered_at: upstream.triggeredAt.toISOString(),
        labels: upstream.labels,
        scope: upstream.scope,
      },
    };
  }

  const around = await readAlertsTriggeredBetween(db, tenant, {
    from: new Date(alert.triggeredAt.getTime() - NEIGHBOUR_WINDOW_MS),
    to: new Date(alert.triggeredAt.getTime() + NEIGHBOUR_WINDOW_MS),
    exceptId: alert.id,
    limit: 200,
  });
  const neighbours: Gathered["neighbours"] = [];
  for (const other of around) {
    const shared = (["service", "host", "cluster"] as const).find(
      (key) => alert.scope[key] !== undefined && other.scope[key] === alert.scope[key],
    );
    if (!shared) continue;
    neighbours.push({
      id: other.id,
      title: other.title,
      status: other.status,
      triggered_at: other.triggeredAt.toISOString(),
      shared: `${shared}=${alert.scope[shared]}`,
    });
    if (neighbours.length >= 20) break;
  }

  const gathered: Gathered = {
    alert: {
      id: alert.id,
      title: alert.title,
      description: alert.description.slice(0, 2000),
      source_type: alert.sourceType,
      severity: alert.sourceSeverity,
      status: alert.status,
      is_test: alert.isTest,
      alertname: alert.labels.alertname ?? null,
      triggered_at: alert.triggeredAt.toISOString(),
      labels: alert.labels,
      scope: alert.scope,
      role: alert.alertRole,
      likely_upstream: alert.likelyUpstream,
      storm_id: alert.stormId,
      impact_score: alert.impactScore,
    },
    history: { refires, resolves, quick_auto_resolves: quick, flapping },
    storm,
    neighbours,
    expression: expressionOf(alert.links),
    links: alert.links,
  };
  // The storm's upstream is cited by its own links, so the page shows where the cause can be seen.
  return {
    gathered,
    evidence: [
      ...linkEvidence(alert),
      ...(upstream ? linkEvidence(upstream, "alert_storm") : []).filter(
        (item) => !alert.links.some((link) => link.url === item.url),
      ),
    ],
  };
}

/**
 * The links an alert's source sent: runbooks as runbook citations, the others as the trace of the
 * tool that found them (the alert's source, or the storm for its upstream alert).
 */
function linkEvidence(alert: InvestigatedAlert, tool: "alert_source" | "alert_storm" = "alert_source") {
  const of = tool === "alert_storm" ? ` of the storm's upstream alert "${alert.title}"` : "";
  return alert.links.flatMap((link): EvidenceDraft[] => {
    if (link.kind === "runbook")
      return [{ kind: "runbook", title: `Runbook${of}`, url: link.url, source: "runbook" }];
    if (link.kind === "dashboard")
      return [
        {
          kind: "dashboard",
          title: `Dashboard${of}`,
          url: link.url,
          source: "tool_trace",
          tool_name: tool,
        },
      ];
    if (link.kind === "source")
      return [
        {
          kind: "alert_rule",
          title: of
            ? `The storm's upstream alert "${alert.title}" in ${alert.sourceType}`
            : `The alert in ${alert.sourceType}`,
          url: link.url,
          source: "tool_trace",
          tool_name: tool,
        },
      ];
    return [];
  });
}
