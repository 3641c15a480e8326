// Host allow-lists for the URLs Vigil calls on a user's behalf (AUTOMATION_HTTP_ALLOWED_HOSTS,
// INTEGRATION_ALLOWED_HOSTS): an entry is a host name or IP (any port) or `host:port`, lower-case.
// An entry is matched against the URL's host as written (after URL parsing, so `127.1` is
// `127.0.0.1`); the addresses it resolves to are judged by the outbound rules (outbound.ts), which
// no entry can lift for a metadata address, Vigil's own port or the database's.

/** A comma-separated list from the environment, trimmed and lower-cased; empty items dropped. */
export function parseHostList(text: string): string[] {
  return text
    .split(",")
    .map((host) => host.trim().toLowerCase())
    .filter(Boolean);
}

/** True when the URL's host, with or without its port, is on the list. */
export function hostAllowed(url: URL, allowed: readonly string[]): boolean {
  const hostname = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const host = url.host.toLowerCase();
  return allowed.some((entry) => entry === hostname || entry === host || entry === `[${hostname}]`);
}
