import { type Static, Type } from "@sinclair/typebox";
import { describedPattern } from "../core/http/pattern-words.ts";
import { AnyKeyRecord, DateTime, KeyedRecord, Nullable, Uuid } from "../core/http/schemas.ts";

export const IntegrationName = Type.String({
  pattern: describedPattern(
    "^[a-z0-9][a-z0-9._-]{0,62}$",
    "lower-case letters, digits, '.', '_' and '-', starting with a letter or digit, at most 63 characters",
  ),
  description: "Unique per tenant; lower-case letters, digits, '.', '_' and '-'",
});

export const IntegrationWrite = Type.Object(
  {
    name: IntegrationName,
    type: Type.String({
      pattern: describedPattern(
        "^[a-z][a-z0-9-]{0,39}$",
        "lower-case letters, digits and '-', starting with a letter, at most 40 characters",
      ),
      description:
        "Kind of system, for example alertmanager (pull sync; silences read by investigations), prometheus (queried by investigations: url is the server's base URL), git (a repository investigations may propose changes to: url is its remote), grafana, github",
    }),
    url: Type.Optional(
      Nullable(
        Type.String({
          format: "uri",
          pattern: describedPattern(
            "^(https?|ssh|file)://",
            "an http:// or https:// URL (for git also ssh:// or file://)",
          ),
          maxLength: 2048,
          description:
            "What Vigil reads from (an Alertmanager's base URL for pull sync): http(s), and for type git also ssh:// or file:// (a repository on Vigil's own machine, only with localhost on INTEGRATION_ALLOWED_HOSTS). With INTEGRATION_ALLOWED_HOSTS set, its host must be on that list: 400 otherwise",
        }),
      ),
    ),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    settings: Type.Optional(
      KeyedRecord(128, Type.String({ maxLength: 1024 }), {
        maxProperties: 50,
        description:
          "Options of the type that are not secret (each key holds 1 to 128 characters); omitted: none on create, unchanged on update. git: base_branch (the branch proposed changes start from, default main)",
      }),
    ),
    credentials: Type.Optional(
      Nullable(
        KeyedRecord(128, Type.String({ maxLength: 8192 }), {
          description:
            "Write-only; kept encrypted at rest and never returned; each key holds 1 to 128 characters. git: token (for an https remote)",
        }),
      ),
    ),
  },
  { $id: "IntegrationWrite", additionalProperties: false },
);
export type IntegrationWrite = Static<typeof IntegrationWrite>;

export const Integration = Type.Object(
  {
    id: Uuid(),
    name: Type.String(),
    type: Type.String(),
    url: Nullable(Type.String()),
    description: Type.String(),
    settings: AnyKeyRecord(Type.String()),
    has_credentials: Type.Boolean(),
    org_id: Nullable(Uuid()),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: "Integration" },
);
export type Integration = Static<typeof Integration>;
