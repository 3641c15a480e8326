// The closed list of API key scopes. `aios_automation_read` is the spec's; the others follow its pattern.
export const SCOPES = [
  "sre_alerts_read",
  "sre_alerts_write",
  "sre_investigations_read",
  "sre_investigations_write",
  "aios_automation_read",
  "aios_automation_write",
  "integrations_read",
  "integrations_write",
  "apps_read",
  "apps_write",
  // Managing the caller's own keys and creating orgs (/api/v1/keys, /api/v1/orgs). Keys made before
  // these scopes existed do not carry them; BOOTSTRAP_API_KEY gains them at the next start.
  "api_keys_read",
  "api_keys_write",
  "orgs_write",
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
