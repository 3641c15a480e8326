// Every setting Vigil reads from the environment, parsed and validated once at start.
// Nothing else reads process.env: the parsed Config is passed in.
import { resolve } from "node:path";
import { DEFAULT_POOL_SIZE, PGLITE_CACHE_MB } from "./core/db/database.ts";
import { parseHostList } from "./core/http/allowed-hosts.ts";

/** How much an environment matters to impact scores and triage. */
export type Criticality = "high" | "medium" | "low";
export type LogLevel = "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
export type Role = "all" | "api" | "worker";

export interface Config {
  port: number;
  /** OPERATIONS_PORT: /healthz, /readyz and /metrics alone on this port too; null: not served apart. */
  operationsPort: number | null;
  host: string;
  dataDir: string;
  /** postgres://... for PostgreSQL; null means the embedded PGlite database under dataDir. */
  databaseUrl: string | null;
  /** PGLITE_CACHE_MB: the embedded database's page cache (shared_buffers), in MB. */
  pgliteCacheMb: number;
  /** DATABASE_POOL_SIZE: the main pool's connections to PostgreSQL, per instance. */
  databasePoolSize: number;
  bootstrapApiKey: string | null;
  /** Key material for secrets kept encrypted at rest; null means generate one into dataDir. */
  secretKey: string | null;
  publicUrl: string;
  logLevel: LogLevel;
  bodyLimitBytes: number;
  webhookBodyLimitBytes: number;
  shutdownTimeoutMs: number;
  /** A request's headers and body must arrive within this (408 otherwise). */
  requestTimeoutMs: number;
  role: Role;
  llm: { baseUrl: string; model: string; apiKey: string | null } | null;
  /** Hosts (`name` or `name:port`, lower-case) the http_request action may call. */
  automationHttpAllowedHosts: string[];
  /**
   * Hosts an integration's url may name (`name` or `name:port`, lower-case); empty: any host whose
   * addresses are public. An internal address is called only for a host named here
   * (core/http/outbound.ts).
   */
  integrationAllowedHosts: string[];
  /**
   * ENVIRONMENT_CRITICALITY: environment name (lower case) -> criticality. Only the entries set; the
   * alerts add them to their default map, replacing a default entry of the same name.
   */
  environmentCriticality: Readonly<Record<string, Criticality>>;
  /** listAlerts with `q` counts its matches exactly up to this many, then says "at least". */
  searchCountLimit: number;
  /** Any other listAlerts total is counted exactly up to this many, then says "at least". */
  listCountLimit: number;
  /** ASK_FALLBACK_AGENT: the agent Ask runs when no agent or workflow matches well enough; null: none. */
  askFallbackAgent: string | null;
}

export class ConfigError extends Error {}

const LOG_LEVELS: LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function text(env: NodeJS.ProcessEnv, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

const CRITICALITIES: Criticality[] = ["high", "medium", "low"];

/** `canary=high,perf=medium`: the named entries, lower case; a later entry of a name wins. */
function environmentCriticality(env: NodeJS.ProcessEnv): Record<string, Criticality> {
  const entries: [string, Criticality][] = [];
  for (const entry of (text(env, "ENVIRONMENT_CRITICALITY") ?? "").split(",")) {
    if (entry.trim() === "") continue;
    const [name, level, ...rest] = entry.split("=").map((part) => part.trim().toLowerCase());
    if (!name || rest.length > 0 || !CRITICALITIES.includes(level as Criticality)) {
      throw new ConfigError(
        `ENVIRONMENT_CRITICALITY must be a comma-separated list of name=high|medium|low, got "${entry.trim()}"`,
      );
    }
    entries.push([name, level as Criticality]);
  }
  // From entries, not by assignment: a name such as `__proto__` stays an ordinary entry.
  return Object.fromEntries(entries);
}

/** Addresses that listen on every interface: no sender reaches Vigil under them. */
const isWildcardHost = (host: string) => ["0.0.0.0", "::", "[::]"].includes(host);

/**
 * What start-up warns of when HOST listens on every address and PUBLIC_URL is not set: trigger URLs
 * then name this machine's loopback, which senders elsewhere cannot reach. Null otherwise.
 */
export function publicUrlWarning(config: Config, env: NodeJS.ProcessEnv = process.env): string | null {
  if (!isWildcardHost(config.host) || text(env, "PUBLIC_URL")) return null;
  return `HOST ${config.host} listens on every address, but trigger URLs name ${config.publicUrl}, which only this machine reaches: set PUBLIC_URL to the URL senders use`;
}

/** HOST as a URL names it: this machine for a wildcard address, an IPv6 address in brackets. */
function urlHostOf(host: string): string {
  if (isWildcardHost(host)) return "127.0.0.1";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

/**
 * A comma-separated list of `host` or `host:port` (an IPv6 address in brackets). A URL, a path or a
 * port out of range names nothing a request goes to, so the list would silently allow nothing.
 */
function hostList(env: NodeJS.ProcessEnv, name: string, fallback: string): string[] {
  const hosts = parseHostList(text(env, name) ?? fallback);
  for (const entry of hosts) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(`http://${entry}`);
    } catch {}
    if (!parsed || parsed.host !== entry || parsed.pathname !== "/" || parsed.search || parsed.username) {
      throw new ConfigError(
        `${name} must be a comma-separated list of host or host:port (an IPv6 address in brackets), got "${entry}"`,
      );
    }
  }
  return hosts;
}

// A host name or an IP address to listen on: one that cannot be either failed only once the database
// was migrated and the job queue started, without naming HOST.
const LISTEN_HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|[0-9a-f:.]*:[0-9a-f:.]*)$/i;

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const port = integer(env, "PORT", 8080, 0, 65535);
  const host = text(env, "HOST") ?? "127.0.0.1";
  if (!LISTEN_HOST.test(host))
    throw new ConfigError(`HOST must be a host name or an IP address, got "${host}"`);
  const databaseUrl = text(env, "DATABASE_URL");
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError("DATABASE_URL must start with postgres:// or postgresql://");
  }
  const logLevel = (text(env, "LOG_LEVEL") ?? "info") as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  }
  // Port 0 listens on a free port, which the trigger URLs built from it could not name.
  if (port === 0 && !text(env, "PUBLIC_URL")) {
    throw new ConfigError(
      "PORT 0 (any free port) needs PUBLIC_URL: trigger URLs must name the port senders use",
    );
  }
  const operationsPort = text(env, "OPERATIONS_PORT") ? integer(env, "OPERATIONS_PORT", 0, 1, 65535) : null;
  const role = (text(env, "VIGIL_ROLE") ?? "all") as Role;
  if (!["all", "api", "worker"].includes(role))
    throw new ConfigError("VIGIL_ROLE must be all, api or worker");
  if (operationsPort !== null && operationsPort === port && role !== "worker") {
    throw new ConfigError("OPERATIONS_PORT must differ from PORT (the worker role alone listens on no PORT)");
  }
  const publicUrl = (text(env, "PUBLIC_URL") ?? `http://${urlHostOf(host)}:${port}`).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]/.test(publicUrl)) throw new ConfigError("PUBLIC_URL must be an http(s) URL");
  const llmBaseUrl = text(env, "LLM_BASE_URL");
  const llmModel = text(env, "LLM_MODEL");
  if (Boolean(llmBaseUrl) !== Boolean(llmModel)) {
    throw new ConfigError("LLM_BASE_URL and LLM_MODEL must be set together");
  }
  if (llmBaseUrl && !/^https?:$/.test(URL.parse(llmBaseUrl)?.protocol ?? "")) {
    throw new ConfigError("LLM_BASE_URL must be an http(s) URL");
  }
  if (!llmBaseUrl && text(env, "LLM_API_KEY")) {
    throw new ConfigError("LLM_API_KEY is set without LLM_BASE_URL and LLM_MODEL: set them too, or unset it");
  }
  // Replicas on PostgreSQL must agree on the key that seals secrets; a generated file cannot do that.
  if (databaseUrl && !text(env, "SECRET_KEY")) {
    throw new ConfigError("SECRET_KEY is required with DATABASE_URL (every instance must use the same one)");
  }
  return {
    port,
    operationsPort,
    host,
    dataDir: resolve(text(env, "DATA_DIR") ?? "./data"),
    databaseUrl,
    pgliteCacheMb: integer(env, "PGLITE_CACHE_MB", PGLITE_CACHE_MB, 1, 1024),
    databasePoolSize: integer(env, "DATABASE_POOL_SIZE", DEFAULT_POOL_SIZE, 2, 1000),
    bootstrapApiKey: text(env, "BOOTSTRAP_API_KEY"),
    secretKey: text(env, "SECRET_KEY"),
    publicUrl,
    logLevel,
    bodyLimitBytes: integer(env, "BODY_LIMIT_BYTES", 1024 * 1024, 1024, 1024 ** 3),
    webhookBodyLimitBytes: integer(env, "WEBHOOK_BODY_LIMIT_BYTES", 5 * 1024 * 1024, 1024, 1024 ** 3),
    shutdownTimeoutMs: integer(env, "SHUTDOWN_TIMEOUT_MS", 25_000, 0, 600_000),
    requestTimeoutMs: integer(env, "REQUEST_TIMEOUT_MS", 120_000, 1000, 3_600_000),
    role,
    automationHttpAllowedHosts: hostList(env, "AUTOMATION_HTTP_ALLOWED_HOSTS", "127.0.0.1,localhost"),
    integrationAllowedHosts: hostList(env, "INTEGRATION_ALLOWED_HOSTS", ""),
    environmentCriticality: environmentCriticality(env),
    searchCountLimit: integer(env, "SEARCH_COUNT_LIMIT", 1000, 1, 1_000_000),
    listCountLimit: integer(env, "LIST_COUNT_LIMIT", 10_000, 1, 1_000_000_000),
    askFallbackAgent: text(env, "ASK_FALLBACK_AGENT") ?? null,
    llm:
      llmBaseUrl && llmModel
        ? { baseUrl: llmBaseUrl, model: llmModel, apiKey: text(env, "LLM_API_KEY") }
        : null,
    ...overrides,
  };
}
