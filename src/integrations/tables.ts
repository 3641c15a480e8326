import { jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { uniquePerTenant } from "../core/db/owned.ts";

export const integrations = pgTable(
  "integrations",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    orgId: uuid("org_id"),
    ownerId: uuid("owner_id").notNull(),
    name: text("name").notNull(),
    type: text("type").notNull(),
    url: text("url"),
    description: text("description").notNull().default(""),
    /** Options of the type that are not secret (git: base_branch). */
    settings: jsonb("settings").$type<Record<string, string>>().notNull().default({}),
    /** Credentials as JSON, sealed with the secret key; never returned by the API. */
    credentialsSealed: text("credentials_sealed"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (table) => [
    // Names are unique per tenant: per org, or per user in the personal namespace.
    ...uniquePerTenant(
      table,
      { org: "integrations_org_name", personal: "integrations_personal_name" },
      table.name,
    ),
  ],
);
