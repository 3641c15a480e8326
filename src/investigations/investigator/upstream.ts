// Is the storm's likely upstream this alert's cause? The correlator names one from layers and trigger
// order alone; here the claim is weighed against what else is known: when the upstream fired, where
// both alerts run, and when this alert's own series began to cross its threshold. A cause that
// fired after its symptom, or after the series was already failing, is rejected with why; one that
// shares nothing narrower than the cluster is left open and low: storms of a cluster hold
// coincidences.
import type { Gathered } from "./gather.ts";
import type { PrometheusFinding } from "./query-integrations.ts";

/** An upstream alert fires after its own `for:`: a symptom's series may cross this much earlier. */
const LEAD_SECONDS = 5 * 60;
const BASE = 0.6;

export interface UpstreamWeight {
  title: string;
  confidence: number;
  status: "open" | "confirmed" | "rejected";
  rationale: string;
}

const minutes = (ms: number) => `${Math.round(ms / 60_000)} min`;

/** Where the two alerts meet, strongest first: what the confidence adds for it, and how it reads. */
function placementOf(
  alert: Gathered["alert"],
  peer: NonNullable<NonNullable<Gathered["storm"]>["upstream"]>,
) {
  const { scope } = alert;
  if (scope.host !== undefined && scope.host === peer.scope.host)
    return { bonus: 0.2, why: `both run on host ${scope.host}` };
  // A dependency label, or any label of this alert whose value is the upstream's service, host or name.
  const names = new Set(
    [peer.scope.service, peer.scope.host, peer.alertname].filter((name): name is string => Boolean(name)),
  );
  const naming = Object.entries(alert.labels).find(
    ([key, value]) => key !== "alertname" && peer.labels[key] !== value && names.has(value),
  );
  if (naming) return { bonus: 0.2, why: `its label ${naming[0]}=${naming[1]} names it` };
  for (const key of ["namespace", "region"] as const) {
    if (scope[key] !== undefined && scope[key] === peer.scope[key])
      return { bonus: 0.15, why: `both are in ${key === "region" ? "zone" : key} ${scope[key]}` };
  }
  // Two alerts of one service are as likely two faces of one fault as a cause and its symptom.
  if (scope.service !== undefined && scope.service === peer.scope.service)
    return { bonus: 0.05, why: `both are on service ${scope.service}` };
  return null;
}

export function weighUpstream(gathered: Gathered, prom: PrometheusFinding | null): UpstreamWeight | null {
  const { alert, storm } = gathered;
  const peer = storm?.upstream ?? null;
  const title = alert.likely_upstream ?? peer?.title;
  if (!title) return null;
  const size = `part of a storm of ${storm?.size ?? 1} alerts`;
  if (!peer) {
    return {
      title,
      confidence: 0.4,
      status: "open",
      rationale: `${size}; the correlator named it, but it is no longer in the storm`,
    };
  }
  const firedAt = new Date(peer.triggered_at).getTime();
  const triggeredAt = new Date(alert.triggered_at).getTime();
  const rejected = (why: string): UpstreamWeight => ({
    title,
    confidence: 0.05,
    status: "rejected",
    rationale: `${size}, but ${why}`,
  });
  if (firedAt > triggeredAt) {
    return rejected(
      `it fired ${minutes(firedAt - triggeredAt)} after this alert: a cause does not follow its symptom`,
    );
  }
  const crossed = prom?.series_found ? (prom.held_since ?? prom.first_crossed_at) : null;
  const began = crossed ? new Date(crossed).getTime() : null;
  if (began !== null && began < firedAt - LEAD_SECONDS * 1000) {
    return rejected(
      `this alert's series already crossed its threshold at ${crossed}, ${minutes(firedAt - began)} before it fired`,
    );
  }
  const reasons = [
    alert.role === "symptom"
      ? `the storm correlator marks this alert its symptom`
      : `the storm correlator did not mark this alert a symptom (role ${alert.role})`,
    `it fired ${firedAt === triggeredAt ? "at the same time" : `${minutes(triggeredAt - firedAt)} earlier`}`,
  ];
  const placement = placementOf(alert, peer);
  if (!placement) {
    const cluster = alert.scope.cluster ?? peer.scope.cluster;
    return {
      title,
      confidence: 0.3,
      status: "open",
      rationale: `${size}; ${reasons.join(", ")}, but it shares nothing narrower than ${cluster ? `the cluster ${cluster}` : "the storm"} with this alert: nothing places it upstream`,
    };
  }
  reasons.push(placement.why);
  let confidence = BASE + placement.bonus;
  if (began !== null) {
    confidence += 0.1;
    reasons.push(`this alert's series began to cross its threshold at ${crossed}, as it fired`);
  }
  if (alert.role !== "symptom") confidence -= 0.2;
  confidence = Math.min(0.95, Number(confidence.toFixed(2)));
  return {
    title,
    confidence,
    status: confidence >= 0.8 ? "confirmed" : "open",
    rationale: `${size}; ${reasons.join(", ")} (alert ${peer.id})`,
  };
}
