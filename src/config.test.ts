import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

describe("loadConfig", () => {
  it("fills the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: "127.0.0.1",
      dataDir: resolve("./data"),
      databaseUrl: null,
      bootstrapApiKey: null,
      secretKey: null,
      publicUrl: "http://127.0.0.1:8080",
      logLevel: "info",
      bodyLimitBytes: 1048576,
      webhookBodyLimitBytes: 5242880,
      role: "all",
      llm: null,
    });
  });

  it("reads every setting", () => {
    const config = loadConfig({
      PORT: "9000",
      HOST: "0.0.0.0",
      DATA_DIR: "/var/lib/vigil",
      DATABASE_URL: "postgres://vigil@db:5432/vigil",
      BOOTSTRAP_API_KEY: "bootstrap-key-0123456789",
      SECRET_KEY: "k",
      PUBLIC_URL: "https://vigil.example.com/",
      LOG_LEVEL: "debug",
      WEBHOOK_BODY_LIMIT_BYTES: "1048576",
      LLM_BASE_URL: "http://127.0.0.1:11434/v1",
      LLM_MODEL: "llama3",
    });
    expect(config).toMatchObject({
      port: 9000,
      host: "0.0.0.0",
      dataDir: "/var/lib/vigil",
      databaseUrl: "postgres://vigil@db:5432/vigil",
      publicUrl: "https://vigil.example.com",
      logLevel: "debug",
      webhookBodyLimitBytes: 1048576,
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
  ])("rejects %j", (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });
});
