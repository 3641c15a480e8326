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
// "do not fix" and the like are not a request.
const ASKS =
  /\b(?:please\s+)?(?:fix|remediate|patch|correct)\b(?:\s+(?:it|this|that|the|them|our|its|rule|alert|threshold))|\b(?:open|create|raise|propose|submit|send|prepare|make)\s+(?:a\s+|an\s+)?(?:fix|remediation|patch|pull\s+request|pr|merge\s+request|change)\b|\bremediat(?:e|ion)\s+(?:please|it|this|now)\b/i;
const NEGATED =
  /\b(?:do\s+not|don'?t|never|no\s+need\s+to|without)\s+(?:\w+\s+){0,2}(?:fix|remediat\w*|patch|pull\s+request|pr|change)\b/i;

export function asksForRemediation(message: string | null | undefined): boolean {
  if (!message) return false;
  return ASKS.test(message) && !NEGATED.test(message);
}
