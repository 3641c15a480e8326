// GET /api/v1/me: who the console is signed in as. The key's scopes say which actions to offer, its
// orgs fill the org switcher, and `features` says which optional capabilities this Vigil serves, so
// the console shows a page or a button only when its API exists.
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { eq, inArray } from "drizzle-orm";
import type { FastifyInstance } from "fastify";
import { actorOf } from "../core/auth/authenticate.ts";
import { apiKeys, orgs } from "../core/auth/tables.ts";
import { AppError } from "../core/errors.ts";
import { Uuid } from "../core/http/schemas.ts";

/** A capability and the operation whose presence in the API means this Vigil has it. */
const FEATURE_OPERATIONS = {
  investigate: "investigateAlert",
  investigations: "listInvestigations",
  ask: "startAskPlatform",
  sessions: "listSessions",
} as const;
type Feature = keyof typeof FEATURE_OPERATIONS;

const Caller = Type.Object(
  {
    key_id: Uuid(),
    key_name: Type.String(),
    key_prefix: Type.String({ description: "First characters of the key, to recognise it" }),
    scopes: Type.Array(Type.String()),
    orgs: Type.Array(Type.Object({ id: Uuid(), name: Type.String() }), {
      description: "Orgs the key may act in (`orgId`), by name; the personal namespace is always open",
    }),
    features: Type.Object(
      Object.fromEntries(Object.keys(FEATURE_OPERATIONS).map((name) => [name, Type.Boolean()])) as Record<
        Feature,
        ReturnType<typeof Type.Boolean>
      >,
      { description: "Optional capabilities this Vigil serves" },
    ),
  },
  { $id: "Caller" },
);

export async function callerRoutes(instance: FastifyInstance): Promise<void> {
  const app = instance.withTypeProvider<TypeBoxTypeProvider>();
  let features: Record<Feature, boolean> | null = null;
  // The API is complete once the app is ready; read it once, on the first call.
  const featuresOf = (): Record<Feature, boolean> => {
    if (features) return features;
    const operations = new Set<string>();
    const paths = (app.swagger() as { paths?: Record<string, Record<string, { operationId?: string }>> })
      .paths;
    for (const methods of Object.values(paths ?? {}))
      for (const operation of Object.values(methods))
        if (operation.operationId) operations.add(operation.operationId);
    features = Object.fromEntries(
      Object.entries(FEATURE_OPERATIONS).map(([name, operationId]) => [name, operations.has(operationId)]),
    ) as Record<Feature, boolean>;
    return features;
  };

  app.get(
    "/api/v1/me",
    {
      schema: {
        operationId: "getCaller",
        summary: "The calling API key: its scopes, the orgs it may act in, and what this Vigil serves",
        description:
          "Any active key may call it, whatever its scopes. `orgId` is accepted like everywhere, and " +
          "checked: an org the key may not act in is 404.",
        tags: ["keys"],
        querystring: Type.Object({ orgId: Type.Optional(Uuid()) }),
        response: { 200: Caller },
      },
    },
    async (request) => {
      const actor = actorOf(request);
      const { db } = app.services.database;
      const [key] = await db
        .select({ name: apiKeys.name, prefix: apiKeys.prefix, orgIds: apiKeys.orgIds })
        .from(apiKeys)
        .where(eq(apiKeys.id, actor.keyId));
      if (!key) throw new AppError("UNAUTHENTICATED", "unknown or revoked API key");
      const named =
        key.orgIds.length === 0
          ? []
          : await db
              .select({ id: orgs.id, name: orgs.name })
              .from(orgs)
              .where(inArray(orgs.id, key.orgIds))
              .orderBy(orgs.name, orgs.id);
      return {
        key_id: actor.keyId,
        key_name: key.name,
        key_prefix: key.prefix,
        scopes: actor.scopes,
        orgs: named,
        features: featuresOf(),
      };
    },
  );
}
