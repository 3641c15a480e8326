// `vigil keys` and `vigil orgs` against a running Vigil, over its HTTP API: the embedded database
// takes one process at a time, so while a server runs on it the command line must ask the server.
// Talking to the database directly stays for bootstrapping, when no key exists yet.
import { ConfigError } from "../../config.ts";
import { DataDirInUseError } from "../db/data-dir-lock.ts";
import type { ApiKey, ApiKeyWrite, Org } from "./keys-schemas.ts";
import type { Scope } from "./scopes.ts";

export interface Server {
  url: string;
  apiKey: string;
}

export interface ServerOptions {
  url?: string;
  apiKey?: string;
}

/** The server named by --url or VIGIL_URL, with the key of --api-key or VIGIL_API_KEY; null if none. */
export function serverFrom(options: ServerOptions, env: NodeJS.ProcessEnv): Server | null {
  const url = (options.url ?? env.VIGIL_URL ?? "").trim();
  if (!url) {
    if (options.apiKey) throw new ConfigError("--api-key needs a server: pass --url or set VIGIL_URL");
    return null;
  }
  if (!/^https?:\/\/[^/]/.test(url)) {
    throw new ConfigError(`--url (or VIGIL_URL) must be an http(s) URL, got "${url}"`);
  }
  const apiKey = (options.apiKey ?? env.VIGIL_API_KEY ?? "").trim();
  if (!apiKey) {
    throw new ConfigError(`an API key is needed to ask ${url}: set VIGIL_API_KEY or pass --api-key`);
  }
  return { url: url.replace(/\/+$/, ""), apiKey };
}

async function request<T>(server: Server, method: "GET" | "POST", path: string, body?: object): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${server.apiKey}`,
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch (err) {
    const cause = (err as { cause?: Error }).cause ?? (err as Error);
    throw new Error(`cannot reach Vigil at ${server.url}: ${cause.message}`);
  }
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: reported as text below.
  }
  if (!response.ok) {
    const error = (parsed ?? {}) as { error?: string; code?: string };
    const code = error.code ? ` ${error.code}` : "";
    throw new Error(`${server.url} answered ${response.status}${code}: ${error.error ?? text.slice(0, 300)}`);
  }
  return parsed as T;
}

export const createKeyOverHttp = (server: Server, input: ApiKeyWrite) =>
  request<ApiKey & { key: string }>(server, "POST", "/api/v1/keys", input);

export const listKeysOverHttp = (server: Server) => request<ApiKey[]>(server, "GET", "/api/v1/keys");

export const revokeKeyOverHttp = (server: Server, id: string) =>
  request<ApiKey>(server, "POST", `/api/v1/keys/${encodeURIComponent(id)}/revoke`);

export const createOrgOverHttp = (server: Server, name: string) =>
  request<Org>(server, "POST", "/api/v1/orgs", { name });

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A DATA_DIR held by a running Vigil, explained with the way to do the same over HTTP; any other
 * error as it is.
 */
export function explainDataDirInUse(
  err: unknown,
  how: { args: string[]; scope: Scope; url: string },
): unknown {
  if (!(err instanceof DataDirInUseError)) return err;
  // Over HTTP a key belongs to the calling key's user: --user has no say there.
  const args = how.args.filter((arg, i) => !arg.startsWith("--user") && how.args[i - 1] !== "--user");
  const userNote =
    args.length < how.args.length
      ? "\n--user is left out: over HTTP a key belongs to the calling key's user."
      : "";
  return new Error(
    `DATA_DIR ${err.dataDir} is in use by a running Vigil (process ${err.holder}), and its embedded ` +
      "database admits one process at a time. Ask that Vigil over HTTP instead, with an API key " +
      `that has the scope ${how.scope}:\n` +
      `  VIGIL_URL=${err.url ?? how.url} VIGIL_API_KEY=<key> node bin/vigil.js ${args.map(shellWord).join(" ")}\n` +
      `(or pass --url and --api-key)${userNote}\n` +
      "Without such a key yet: stop that Vigil and run this command again, or restart it with " +
      "BOOTSTRAP_API_KEY=<a key you choose> and use that key.",
  );
}
