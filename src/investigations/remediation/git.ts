// The git CLI, run without a shell (execFile: arguments are never parsed by one), each command with a
// timeout, isolated from the machine's git configuration, never prompting, and limited to the
// file, http(s) and ssh transports (a remote such as ext:: would run a command). A token travels
// in the environment as an HTTP header, never in the command line or the URL.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Config } from "../../config.ts";
import { OutboundError, vetOutboundHost } from "../../core/http/outbound.ts";
import type { IntegrationConnection } from "../../integrations/index.ts";

const run = promisify(execFile);

/** No git command of a remediation takes longer (a clone of a large repository is refused by it). */
const GIT_TIMEOUT_MS = 60_000;
const OUTPUT_MAX_BYTES = 16 * 1024 * 1024;
export const DEFAULT_BASE_BRANCH = "main";

export class GitError extends Error {
  constructor(
    readonly command: string,
    message: string,
  ) {
    super(`git ${command}: ${message}`);
    this.name = "GitError";
  }
}

function environment(connection: IntegrationConnection): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: "C",
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ALLOW_PROTOCOL: "file:http:https:ssh",
    GIT_AUTHOR_NAME: "Vigil",
    GIT_AUTHOR_EMAIL: "vigil@localhost",
    GIT_COMMITTER_NAME: "Vigil",
    GIT_COMMITTER_EMAIL: "vigil@localhost",
  };
  const token = connection.credentials?.token;
  if (token) {
    const user = connection.credentials?.username ?? "x-access-token";
    env.GIT_CONFIG_COUNT = "1";
    env.GIT_CONFIG_KEY_0 = "http.extraHeader";
    env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${Buffer.from(`${user}:${token}`).toString("base64")}`;
  }
  return env;
}

/** A git command's trimmed stdout; a failure or timeout is a GitError with git's own message. */
export async function git(
  connection: IntegrationConnection,
  args: string[],
  options: { cwd?: string; signal?: AbortSignal } = {},
): Promise<string> {
  try {
    const { stdout } = await run("git", args, {
      cwd: options.cwd,
      env: environment(connection),
      timeout: GIT_TIMEOUT_MS,
      killSignal: "SIGKILL",
      maxBuffer: OUTPUT_MAX_BYTES,
      signal: options.signal,
      encoding: "utf8",
    });
    return stdout.trimEnd();
  } catch (err) {
    const failure = err as { stderr?: string; killed?: boolean; message?: string };
    const why = failure.killed
      ? `took longer than ${GIT_TIMEOUT_MS / 1000} s`
      : (failure.stderr?.trim() || failure.message || "failed").split("\n").slice(-3).join(" ");
    throw new GitError(args[0] ?? "", redact(why, connection));
  }
}

/** Git's messages may echo the remote; never the token. */
function redact(text: string, connection: IntegrationConnection): string {
  const token = connection.credentials?.token;
  return token ? text.split(token).join("***") : text;
}

export const baseBranchOf = (connection: IntegrationConnection) =>
  connection.settings.base_branch ?? DEFAULT_BASE_BRANCH;

export type RemoteConfig = Pick<Config, "host" | "port" | "databaseUrl" | "integrationAllowedHosts">;

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443, "ssh:": 22 };

/**
 * A remote follows the outbound rules of every integration call: a network remote's host on
 * INTEGRATION_ALLOWED_HOSTS when it is set, never an internal address unless named there. A file://
 * remote is on Vigil's own machine: it needs `localhost` on the list.
 */
async function vetRemote(connection: IntegrationConnection, config: RemoteConfig): Promise<void> {
  const url = new URL(connection.url ?? "");
  try {
    if (url.protocol === "file:") {
      if (!config.integrationAllowedHosts.includes("localhost")) {
        throw new OutboundError("refused", "a file:// remote needs localhost on INTEGRATION_ALLOWED_HOSTS");
      }
      return;
    }
    const port = DEFAULT_PORTS[url.protocol];
    if (port === undefined) throw new OutboundError("invalid", `a ${url.protocol} remote is not supported`);
    await vetOutboundHost(
      {
        allowedHosts: config.integrationAllowedHosts.length > 0 ? config.integrationAllowedHosts : null,
        allowedHostsSetting: "INTEGRATION_ALLOWED_HOSTS",
        config,
      },
      url,
      port,
    );
  } catch (err) {
    if (err instanceof OutboundError) throw new GitError("clone", err.message);
    throw err;
  }
}

/**
 * Clones the base branch of the integration's remote into a fresh temporary directory, runs `work`
 * in it and removes the directory whatever happens.
 */
export async function withClone<T>(
  connection: IntegrationConnection,
  config: RemoteConfig,
  work: (dir: string) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (!connection.url) throw new GitError("clone", `integration ${connection.name} has no url`);
  await vetRemote(connection, config);
  const root = await mkdtemp(join(tmpdir(), "vigil-remediation-"));
  try {
    const dir = join(root, "repo");
    await git(
      connection,
      [
        "clone",
        "--quiet",
        "--depth=1",
        "--single-branch",
        `--branch=${baseBranchOf(connection)}`,
        "--",
        connection.url,
        dir,
      ],
      { signal },
    );
    return await work(dir);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
