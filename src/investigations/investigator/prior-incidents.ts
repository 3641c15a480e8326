// Step 3: earlier incidents of the same tenant like this one: the same series first (the alert's
// own earlier episodes, the same alert identity, or the same alert name on the same service and
// host), then the same service, then text alike once volatile tokens (numbers, ids, addresses,
// times) are masked. Each says why it matched and how it ended. Reads go through the alerts domain,
// which limits them to the tenant.
import {
  type InvestigatedAlert,
  readAlertsTriggeredBetween,
  readInvestigatedEpisodes,
} from "../../alerts/index.ts";
import type { Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";
import type { InvestigationPriorIncident } from "../schemas.ts";

const LOOKBACK_MS = 30 * 24 * 3_600_000;
const CANDIDATES = 500;
const KEEP = 10;
/** Of the alert's own earlier episodes, the newest this many (the rest show in its re-fire count). */
const OWN_EPISODES = 3;
const TEXT_SIMILARITY_MIN = 0.5;

/** Words of a text with what varies between occurrences of one problem masked. */
export function maskedTokens(text: string): Set<string> {
  const masked = text
    .toLowerCase()
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g, " <id> ")
    .replace(/\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/g, " <ip> ")
    .replace(/\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?z?\b/g, " <time> ")
    .replace(/\b[0-9a-f]{12,}\b/g, " <hex> ")
    .replace(/\b[a-z]+-[a-z0-9]{5,10}-[a-z0-9]{5}\b/g, " <pod> ")
    .replace(/\d+(\.\d+)?/g, " <n> ");
  return new Set(masked.split(/[^a-z0-9<>_]+/).filter((word) => word.length > 1));
}

export function textSimilarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let shared = 0;
  for (const word of a) if (b.has(word)) shared += 1;
  return shared / (a.size + b.size - shared);
}

function minutes(ms: number): string {
  const total = Math.max(1, Math.round(ms / 60_000));
  return total < 120 ? `${total} min` : `${Math.round(total / 60)} h`;
}

function resolutionOf(alert: InvestigatedAlert): string {
  const parts: string[] = [];
  if (alert.status === "ignored") {
    parts.push(
      `ignored by ${alert.ignoredBy ?? "the operator"}${alert.ignoreReason ? `: ${alert.ignoreReason}` : ""}`,
    );
  } else if (alert.resolvedAt) {
    parts.push(
      `resolved by the source after ${minutes(alert.resolvedAt.getTime() - alert.triggeredAt.getTime())}`,
    );
  } else parts.push("still active");
  if (alert.refireCount > 0) parts.push(`re-fired ${alert.refireCount} times`);
  const investigation = alert.investigation;
  if (investigation?.verdict) {
    parts.push(
      `investigated: ${investigation.verdict}${investigation.result_summary ? ` (${investigation.result_summary.slice(0, 200)})` : ""}`,
    );
  }
  return parts.join("; ");
}

/** The alert's own episodes that ended before the one investigated began, newest first. */
async function earlierEpisodes(
  db: Executor,
  tenant: Tenant,
  alert: InvestigatedAlert,
): Promise<InvestigationPriorIncident[]> {
  const incidents: InvestigationPriorIncident[] = [];
  let start: Date | null = null;
  for (const episode of await readInvestigatedEpisodes(db, tenant, alert.id)) {
    if (episode.kind !== "resolved") start = episode.at;
    else if (
      start &&
      episode.at <= alert.triggeredAt &&
      alert.triggeredAt.getTime() - start.getTime() <= LOOKBACK_MS
    ) {
      incidents.push({
        alert_id: alert.id,
        title: alert.title,
        source_type: alert.sourceType,
        triggered_at: start.toISOString(),
        resolved_at: episode.at.toISOString(),
        match: "same_series",
        similarity: 1,
        why_matched: "an earlier episode of this alert",
        resolution: `resolved by the source after ${minutes(episode.at.getTime() - start.getTime())}`,
        investigation_id: null,
      });
      start = null;
    }
  }
  return incidents.reverse().slice(0, OWN_EPISODES);
}

export async function findPriorIncidents(
  db: Executor,
  tenant: Tenant,
  alert: InvestigatedAlert,
): Promise<InvestigationPriorIncident[]> {
  const candidates = await readAlertsTriggeredBetween(db, tenant, {
    from: new Date(alert.triggeredAt.getTime() - LOOKBACK_MS),
    to: alert.triggeredAt,
    exceptId: alert.id,
    limit: CANDIDATES,
  });
  const text = maskedTokens(`${alert.title} ${alert.description}`);
  const matched: (InvestigationPriorIncident & { order: number })[] = [];
  for (const other of candidates) {
    let match: InvestigationPriorIncident["match"] | null = null;
    let similarity = 0;
    let why = "";
    const sameName =
      alert.labels.alertname !== undefined && other.labels.alertname === alert.labels.alertname;
    if (other.sourceType === alert.sourceType && other.externalUid === alert.externalUid) {
      match = "same_series";
      similarity = 1;
      why = `the same alert (${alert.sourceType} ${alert.externalUid})`;
    } else if (
      sameName &&
      other.scope.service === alert.scope.service &&
      other.scope.host === alert.scope.host
    ) {
      match = "same_series";
      similarity = 0.95;
      why = `the same alert name ${alert.labels.alertname}${alert.scope.service ? ` on service ${alert.scope.service}` : ""}${alert.scope.host ? ` and host ${alert.scope.host}` : ""}`;
    } else if (alert.scope.service !== undefined && other.scope.service === alert.scope.service) {
      match = "same_service";
      similarity = 0.7;
      why = `the same service ${alert.scope.service}`;
    } else {
      const score = textSimilarity(text, maskedTokens(`${other.title} ${other.description}`));
      if (score >= TEXT_SIMILARITY_MIN) {
        match = "similar_text";
        similarity = Math.round(score * 100) / 100;
        why = `a title and description alike (${Math.round(score * 100)}% of words shared, numbers and ids masked)`;
      }
    }
    if (!match) continue;
    matched.push({
      order: { same_series: 0, same_service: 1, similar_text: 2 }[match],
      alert_id: other.id,
      title: other.title,
      source_type: other.sourceType,
      triggered_at: other.triggeredAt.toISOString(),
      resolved_at: other.resolvedAt?.toISOString() ?? null,
      match,
      similarity,
      why_matched: why,
      resolution: resolutionOf(other),
      investigation_id: other.investigation?.id ?? null,
    });
  }
  matched.sort(
    (a, b) =>
      a.order - b.order || b.similarity - a.similarity || b.triggered_at.localeCompare(a.triggered_at),
  );
  const own = await earlierEpisodes(db, tenant, alert);
  return [...own, ...matched.slice(0, KEEP - own.length).map(({ order: _order, ...incident }) => incident)];
}
