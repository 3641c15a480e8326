import { type Static, Type } from "@sinclair/typebox";
import { DateTime, Nullable, Uuid } from "../http/schemas.ts";
import { SCOPES, type Scope } from "./scopes.ts";

// An enum rather than a union of literals, so that a wrong scope is reported as not one of the list.
export const ScopeName = Type.Unsafe<Scope>({
  type: "string",
  enum: [...SCOPES],
  description: "An API key scope",
});

export const ApiKeyWrite = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200, description: "Label shown in listings" })),
    scopes: Type.Optional(
      Type.Array(ScopeName, {
        minItems: 1,
        maxItems: SCOPES.length,
        description: "Scopes to grant, each one the calling key holds; the calling key's scopes when omitted",
      }),
    ),
    org_ids: Type.Optional(
      Type.Array(Uuid(), {
        maxItems: 1000,
        description: "Orgs the new key may act in, each one the calling key may act in; none when omitted",
      }),
    ),
  },
  { $id: "ApiKeyWrite", additionalProperties: false },
);
export type ApiKeyWrite = Static<typeof ApiKeyWrite>;

const apiKeyFields = {
  id: Uuid(),
  name: Type.String(),
  prefix: Type.String({
    description:
      "The first characters of the key, to tell keys apart: `vgl_` and 4 more of a generated key, at most 4 of a key chosen by an operator",
  }),
  scopes: Type.Array(Type.String()),
  org_ids: Type.Array(Uuid()),
  created_at: DateTime(),
  revoked_at: Nullable(DateTime()),
};

export const ApiKey = Type.Object(apiKeyFields, {
  $id: "ApiKey",
  description: "An API key as listings show it: never the key itself",
});
export type ApiKey = Static<typeof ApiKey>;

export const CreatedApiKey = Type.Object(
  {
    ...apiKeyFields,
    key: Type.String({ description: "The key itself: shown in this answer only, never again" }),
  },
  { $id: "CreatedApiKey" },
);

export const OrgWrite = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { $id: "OrgWrite", additionalProperties: false },
);
export type OrgWrite = Static<typeof OrgWrite>;

export const Org = Type.Object({ id: Uuid(), name: Type.String(), created_at: DateTime() }, { $id: "Org" });
export type Org = Static<typeof Org>;
