import { sql } from "drizzle-orm";
import { boolean, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";

export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull().unique(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const orgs = pgTable("orgs", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

export const apiKeys = pgTable("api_keys", {
  id: uuid("id").primaryKey().defaultRandom(),
  userId: uuid("user_id")
    .notNull()
    .references(() => users.id),
  name: text("name").notNull().default(""),
  /** SHA-256 of the whole key: keys are looked up by hash and never stored in clear. */
  keyHash: text("key_hash").notNull().unique(),
  /** The first characters of the key, so an operator can tell keys apart in a listing. */
  prefix: text("prefix").notNull(),
  orgIds: uuid("org_ids").array().notNull().default(sql`'{}'::uuid[]`),
  scopes: text("scopes").array().notNull().default(sql`'{}'::text[]`),
  /**
   * Whether the key may act in its user's personal namespace (a request without `orgId`). An org
   * app's token may not: it is limited to the app's workspace.
   */
  personalNamespace: boolean("personal_namespace").notNull().default(true),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  revokedAt: timestamp("revoked_at", { withTimezone: true }),
});
