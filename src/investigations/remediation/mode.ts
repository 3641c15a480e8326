// Whether an investigation may propose a change. The tenant's SRE app config says so (remediation:
// off, the default, or on_request); the apps domain plugs in the reader (setRemediationModeReader),
// since it sits above investigations. A request counts when the caller sets remediation_requested
// or writes an operator_message that explicitly asks for a fix.
import type { Tenant } from "../../core/auth/tenancy.ts";
import type { Executor } from "../../core/db/database.ts";

export const REMEDIATION_MODES = ["off", "on_request"] as const;
export type RemediationMode = (typeof REMEDIATION_MODES)[number];

type RemediationModeReader = (db: Executor, tenant: Tenant) => Promise<RemediationMode>;

let reader: RemediationModeReader | null = null;

/** The port for the apps domain; the returned function removes the reader again. */
export function setRemediationModeReader(next: RemediationModeReader): () => void {
  reader = next;
  return () => {
    if (reader === next) reader = null;
  };
}

export async function remediationModeOf(db: Executor, tenant: Tenant): Promise<RemediationMode> {
  return reader ? reader(db, tenant) : "off";
}

// An explicit ask: a verb of fixing aimed at the problem, or a request for a pull request or patch.
const ASKS =
  /\b(?:please\s+)?(?:fix|remediate|patch|correct)\b(?:\s+(?:it|this|that|the|them|our|its|rule|alert|threshold))|\b(?:open|create|raise|propose|submit|send|prepare|make)\s+(?:a\s+|an\s+)?(?:fix|remediation|patch|pull\s+request|pr|merge\s+request|change)\b|\bremediat(?:e|ion)\s+(?:please|it|this|now)\b/i;

// A negation of such an ask voids it ("don't fix it", "Do not, under any circumstances, fix this",
// "no need to open a PR"). Only negations that address the reader count: "it isn't working, fix it"
// is still an ask. Between the negation and the verb: a parenthetical set off by commas, then up to
// four plain words, none of them one that starts a new request ("Don't worry, just fix it" asks).
const NEGATION =
  "(?:(?:do|should|must|need|will|would|rather|please)\\s+not|not\\s+to|(?:do|should|must|need|wo|would)n'?t|(?:does\\s+not|doesn'?t)\\s+need|never|no\\s+need\\s+to|no\\s+reason\\s+to|without|avoid|refrain\\s+from)";
const PARENTHETICAL = "(?:\\s*,[^,.;:!?]*,)?";
const GAP = "(?:\\s+(?!(?:please|just|but|so|instead|rather|then)\\b)[\\w']+(?:-\\w+)*){0,4}";
const FIX_VERB =
  "(?:fix\\w*|remediat\\w*|patch\\w*|correct(?:ing)?|changes?|pull\\s+requests?|prs?|merge\\s+requests?)";
const NEGATED = new RegExp(
  `\\b${NEGATION}${PARENTHETICAL}${GAP}\\s+${FIX_VERB}\\b|\\bno\\s+${FIX_VERB}\\b`,
  "i",
);
// Typographic apostrophes (U+2019, U+2018, U+02BC, ...) read as the ASCII one.
const APOSTROPHES = /[\u2018\u2019\u02bc\u02b9\u2032\u00b4\u0060\uff07]/g;

export function asksForRemediation(message: string | null | undefined): boolean {
  if (!message) return false;
  const text = message.replace(APOSTROPHES, "'");
  return ASKS.test(text) && !NEGATED.test(text);
}
