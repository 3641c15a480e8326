import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, publicUrlWarning } from "./config.ts";

describe("loadConfig", () => {
  it("fills the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      operationsPort: null,
      host: "127.0.0.1",
      dataDir: resolve("./data"),
      databaseUrl: null,
      pgliteCacheMb: 16,
      databasePoolSize: 20,
      bootstrapApiKey: null,
      secretKey: null,
      publicUrl: "http://127.0.0.1:8080",
      logLevel: "info",
      bodyLimitBytes: 1048576,
      webhookBodyLimitBytes: 5242880,
      role: "all",
      llm: null,
      searchCountLimit: 1000,
      listCountLimit: 10000,
      automationHttpAllowedHosts: ["127.0.0.1", "localhost"],
      integrationAllowedHosts: [],
    });
  });

  it("names this machine in trigger URLs when HOST listens on every address, and says so", () => {
    for (const host of ["0.0.0.0", "::"]) {
      const env = { HOST: host };
      const config = loadConfig(env);
      expect(config.publicUrl).toBe("http://127.0.0.1:8080");
      expect(publicUrlWarning(config, env)).toBe(
        `HOST ${host} listens on every address, but trigger URLs name http://127.0.0.1:8080, which only this machine reaches: set PUBLIC_URL to the URL senders use`,
      );
    }
    const given = { HOST: "0.0.0.0", PUBLIC_URL: "https://vigil.example.com" };
    expect(publicUrlWarning(loadConfig(given), given)).toBeNull();
    const local = { HOST: "::1" };
    expect(loadConfig(local).publicUrl).toBe("http://[::1]:8080");
    expect(publicUrlWarning(loadConfig(local), local)).toBeNull();
  });

  it("reads every setting", () => {
    const config = loadConfig({
      PORT: "9000",
      OPERATIONS_PORT: "9100",
      HOST: "0.0.0.0",
      DATA_DIR: "/var/lib/vigil",
      DATABASE_URL: "postgres://vigil@db:5432/vigil",
      BOOTSTRAP_API_KEY: "bootstrap-key-0123456789",
      SECRET_KEY: "k",
      PUBLIC_URL: "https://vigil.example.com/",
      LOG_LEVEL: "debug",
      WEBHOOK_BODY_LIMIT_BYTES: "1048576",
      SEARCH_COUNT_LIMIT: "10000",
      LIST_COUNT_LIMIT: "250000",
      PGLITE_CACHE_MB: "64",
      DATABASE_POOL_SIZE: "8",
      LLM_BASE_URL: "http://127.0.0.1:11434/v1",
      LLM_MODEL: "llama3",
      AUTOMATION_HTTP_ALLOWED_HOSTS: "hooks.example.com, Chat.Example.com:8443, [::1]:9000",
      INTEGRATION_ALLOWED_HOSTS: " AM.internal:9093,,10.0.0.5 ",
    });
    expect(config).toMatchObject({
      port: 9000,
      operationsPort: 9100,
      host: "0.0.0.0",
      dataDir: "/var/lib/vigil",
      databaseUrl: "postgres://vigil@db:5432/vigil",
      publicUrl: "https://vigil.example.com",
      logLevel: "debug",
      webhookBodyLimitBytes: 1048576,
      searchCountLimit: 10000,
      listCountLimit: 250000,
      pgliteCacheMb: 64,
      databasePoolSize: 8,
      automationHttpAllowedHosts: ["hooks.example.com", "chat.example.com:8443", "[::1]:9000"],
      integrationAllowedHosts: ["am.internal:9093", "10.0.0.5"],
      llm: { baseUrl: "http://127.0.0.1:11434/v1", model: "llama3", apiKey: null },
    });
  });

  it.each([
    [{ PORT: "http" }, "PORT must be an integer from 0 to 65535"],
    [{ PORT: "70000" }, "PORT must be an integer from 0 to 65535"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL must start with postgres://"],
    [{ DATABASE_URL: "postgres://db/vigil" }, "SECRET_KEY is required with DATABASE_URL"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL must be one of"],
    [{ PUBLIC_URL: "vigil.example.com" }, "PUBLIC_URL must be an http(s) URL"],
    [{ LLM_BASE_URL: "http://x" }, "LLM_BASE_URL and LLM_MODEL must be set together"],
    [{ VIGIL_ROLE: "both" }, "VIGIL_ROLE must be all, api or worker"],
    [{ SEARCH_COUNT_LIMIT: "0" }, "SEARCH_COUNT_LIMIT must be an integer from 1 to 1000000"],
    [{ LIST_COUNT_LIMIT: "many" }, "LIST_COUNT_LIMIT must be an integer from 1 to 1000000000"],
    [{ PGLITE_CACHE_MB: "2048" }, "PGLITE_CACHE_MB must be an integer from 1 to 1024"],
    [{ DATABASE_POOL_SIZE: "1" }, "DATABASE_POOL_SIZE must be an integer from 2 to 1000"],
    [{ HOST: "not_a_host" }, 'HOST must be a host name or an IP address, got "not_a_host"'],
    [{ PORT: "0" }, "PORT 0 (any free port) needs PUBLIC_URL"],
    [{ OPERATIONS_PORT: "0" }, "OPERATIONS_PORT must be an integer from 1 to 65535"],
    [{ OPERATIONS_PORT: "9100", PORT: "9100" }, "OPERATIONS_PORT must differ from PORT"],
    [{ LLM_BASE_URL: "notaurl", LLM_MODEL: "x" }, "LLM_BASE_URL must be an http(s) URL"],
    [{ LLM_BASE_URL: "ftp://models", LLM_MODEL: "x" }, "LLM_BASE_URL must be an http(s) URL"],
    [{ LLM_API_KEY: "sk-1" }, "LLM_API_KEY is set without LLM_BASE_URL and LLM_MODEL"],
    ...["http://foo/", "host:99999", "a b", "::", "hooks.example.com/path", "user@host"].map(
      (entry) =>
        [
          { AUTOMATION_HTTP_ALLOWED_HOSTS: `127.0.0.1,${entry}` },
          `AUTOMATION_HTTP_ALLOWED_HOSTS must be a comma-separated list of host or host:port (an IPv6 address in brackets), got "${entry}"`,
        ] as [Record<string, string>, string],
    ),
    [
      { INTEGRATION_ALLOWED_HOSTS: "am:9093,http://am" },
      "INTEGRATION_ALLOWED_HOSTS must be a comma-separated list",
    ],
  ])("rejects %j", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  describe("ENVIRONMENT_CRITICALITY", () => {
    // Only the entries set: the alerts add them to their default map (impact.test.ts).
    it("has no entries when unset or blank", () => {
      expect(loadConfig({}).environmentCriticality).toEqual({});
      expect(loadConfig({ ENVIRONMENT_CRITICALITY: "  " }).environmentCriticality).toEqual({});
      expect(loadConfig({ ENVIRONMENT_CRITICALITY: " , ," }).environmentCriticality).toEqual({});
    });

    it("reads each entry in lower case, trimmed; a later entry of a name wins", () => {
      expect(
        loadConfig({ ENVIRONMENT_CRITICALITY: "canary=high, perf=Medium ,PROD = low" })
          .environmentCriticality,
      ).toEqual({ canary: "high", perf: "medium", prod: "low" });
      expect(
        loadConfig({ ENVIRONMENT_CRITICALITY: "canary=high,canary=low" }).environmentCriticality,
      ).toEqual({
        canary: "low",
      });
    });

    it("keeps a name such as __proto__ or constructor as an ordinary entry", () => {
      const entries = loadConfig({
        ENVIRONMENT_CRITICALITY: "__proto__=high,constructor=low",
      }).environmentCriticality;
      expect(Object.entries(entries)).toEqual([
        ["__proto__", "high"],
        ["constructor", "low"],
      ]);
      expect(Object.getPrototypeOf(entries)).toBe(Object.prototype);
    });

    it.each(["canary", "canary=urgent", "a=b=c", "=high"])("rejects %j", (value) => {
      const env = { ENVIRONMENT_CRITICALITY: value };
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(
        `ENVIRONMENT_CRITICALITY must be a comma-separated list of name=high|medium|low, got "${value}"`,
      );
    });

    it("names the bad entry of a longer list", () => {
      expect(() => loadConfig({ ENVIRONMENT_CRITICALITY: "canary=high, perf=urgent" })).toThrow(
        'ENVIRONMENT_CRITICALITY must be a comma-separated list of name=high|medium|low, got "perf=urgent"',
      );
    });
  });
});
