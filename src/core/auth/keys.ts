// API keys: random, shown once, stored as a SHA-256 hash. A key belongs to a user, names the orgs it
// may act in and its scopes.
import { createHash, randomBytes } from "node:crypto";
import { and, eq, isNull, sql } from "drizzle-orm";
import type { Executor } from "../db/database.ts";
import { SCOPES, type Scope } from "./scopes.ts";
import { apiKeys, orgs, users } from "./tables.ts";

export const DEFAULT_USER = "default";
const KEY_PREFIX = "vgl_";

/** Printable, no spaces, 16..256 characters: anything else in a Bearer header is malformed. */
export const KEY_SHAPE = /^[\x21-\x7e]{16,256}$/;

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString("base64url");
}

const GENERATED_KEY = /^vgl_[A-Za-z0-9_-]{43}$/;

/**
 * The start of a key that listings show, so an operator can tell keys apart. A generated key shows its
 * public `vgl_` marker and 4 of its 43 random characters (24 of 256 bits). A key an operator chose may
 * be short and guessable, so it shows 1 character in 8, never more than 4: 2 of a 16-character key.
 */
export function keyPrefix(key: string): string {
  if (GENERATED_KEY.test(key)) return key.slice(0, KEY_PREFIX.length + 4);
  return key.slice(0, Math.min(4, Math.floor(key.length / 8)));
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

export async function ensureUser(db: Executor, name: string): Promise<string> {
  await db.insert(users).values({ name }).onConflictDoNothing();
  const [row] = await db.select({ id: users.id }).from(users).where(eq(users.name, name));
  if (!row) throw new Error(`user ${name} could not be created`);
  return row.id;
}

export async function createOrg(db: Executor, name: string): Promise<string> {
  const [row] = await db.insert(orgs).values({ name }).returning({ id: orgs.id });
  if (!row) throw new Error("org could not be created");
  return row.id;
}

export interface NewApiKey {
  /** The owner by id (the API: the caller's user); else by name, created when new. */
  userId?: string;
  userName?: string;
  name?: string;
  orgIds?: string[];
  /** Whether the key may act without `orgId`, in its user's personal namespace (default true). */
  personalNamespace?: boolean;
  scopes?: readonly Scope[];
  /** A key chosen by the operator (BOOTSTRAP_API_KEY); generated when absent. */
  key?: string;
}

export async function createApiKey(
  db: Executor,
  input: NewApiKey,
): Promise<{ id: string; key: string; record: typeof apiKeys.$inferSelect }> {
  const key = input.key ?? generateApiKey();
  if (!KEY_SHAPE.test(key))
    throw new Error("an API key must be 16 to 256 printable characters without spaces");
  const userId = input.userId ?? (await ensureUser(db, input.userName ?? DEFAULT_USER));
  const [row] = await db
    .insert(apiKeys)
    .values({
      userId,
      name: input.name ?? "",
      keyHash: hashSecret(key),
      prefix: keyPrefix(key),
      orgIds: input.orgIds ?? [],
      personalNamespace: input.personalNamespace ?? true,
      scopes: [...(input.scopes ?? SCOPES)],
    })
    .returning();
  if (!row) throw new Error("API key could not be created");
  return { id: row.id, key, record: row };
}

/**
 * Makes sure BOOTSTRAP_API_KEY exists and carries every scope, for the default user. A key revoked
 * through the API stays revoked: a restart with the same environment must not bring back a key an
 * operator revoked (leaked, say). Answers whether the key is usable.
 */
export async function ensureBootstrapKey(db: Executor, key: string): Promise<{ revoked: boolean }> {
  if (!KEY_SHAPE.test(key)) {
    throw new Error("BOOTSTRAP_API_KEY must be 16 to 256 printable characters without spaces");
  }
  const userId = await ensureUser(db, DEFAULT_USER);
  const [row] = await db
    .insert(apiKeys)
    .values({
      userId,
      name: "bootstrap",
      keyHash: hashSecret(key),
      prefix: keyPrefix(key),
      scopes: [...SCOPES],
    })
    .onConflictDoUpdate({
      target: apiKeys.keyHash,
      // The prefix too: older versions stored 8 characters of it, half of a 16-character key.
      set: { scopes: [...SCOPES], userId, prefix: keyPrefix(key) },
    })
    .returning({ revokedAt: apiKeys.revokedAt });
  return { revoked: row?.revokedAt != null };
}

export async function revokeApiKey(db: Executor, id: string): Promise<boolean> {
  const rows = await db
    .update(apiKeys)
    .set({ revokedAt: sql`now()` })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}

/** A key as listings show it: never the key, nor its hash. */
export function presentKey(row: typeof apiKeys.$inferSelect) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    org_ids: row.orgIds,
    created_at: row.createdAt.toISOString(),
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** Every user's keys, oldest first, each with its user's name (the command line's listing). */
export async function listApiKeys(db: Executor) {
  const rows = await db
    .select({ key: apiKeys, user: users.name })
    .from(apiKeys)
    .innerJoin(users, eq(users.id, apiKeys.userId))
    .orderBy(apiKeys.createdAt, apiKeys.id);
  return rows.map(({ key, user }) => ({ ...presentKey(key), user }));
}

/** The name an installed app's token carries among the keys: `app token: <app>`. */
export const appTokenName = (appName: string) => `app token: ${appName}`;

/**
 * The app whose token a key is, or null for a person's key. Both marks count: anyone may name a
 * key `app token: ...`, but only Vigil issues keys that begin `vga_`.
 */
export function appOfKey(key: { name: string; prefix: string }): string | null {
  const app = key.name.startsWith("app token: ") ? key.name.slice("app token: ".length) : null;
  return app && key.prefix.startsWith("vga_") ? app : null;
}

export interface KeyOwner {
  keyId: string;
  userId: string;
  name: string;
  prefix: string;
  orgIds: string[];
  personalNamespace: boolean;
  scopes: string[];
}

export async function findActiveKey(db: Executor, key: string): Promise<KeyOwner | null> {
  const [row] = await db
    .select({
      keyId: apiKeys.id,
      userId: apiKeys.userId,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      orgIds: apiKeys.orgIds,
      personalNamespace: apiKeys.personalNamespace,
      scopes: apiKeys.scopes,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.keyHash, hashSecret(key)), isNull(apiKeys.revokedAt)));
  return row ?? null;
}
