import { boolean, index, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core";
import { ownedColumns, uniquePerTenant } from "../core/db/owned.ts";

export interface StoredAssignment {
  purpose: string;
  workflow_name: string;
  is_default: boolean;
}

/**
 * A catalog app's installation in one tenant (its "config row"). No row: the app is not configured,
 * and alert ingest of that tenant is refused (ingest-guard.ts).
 */
export const appInstallations = pgTable(
  "app_installations",
  {
    ...ownedColumns(),
    appName: text("app_name").notNull(),
    enabled: boolean("enabled").notNull(),
    integrations: jsonb("integrations").$type<string[]>().notNull(),
    attachedWorkflows: jsonb("attached_workflows").$type<string[]>().notNull(),
    workflowAssignments: jsonb("workflow_assignments").$type<StoredAssignment[]>().notNull(),
    config: jsonb("config").$type<Record<string, string>>().notNull(),
    /** The app token, sealed with the secret key (shown again to apps_write callers). */
    appTokenSealed: text("app_token_sealed"),
    /** The API key row the app token authenticates as: revoked on rotation and on uninstall. */
    appTokenKeyId: uuid("app_token_key_id"),
    installedAt: timestamp("installed_at", { withTimezone: true }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull(),
  },
  (table) => [
    ...uniquePerTenant(
      table,
      { org: "app_installations_org_app", personal: "app_installations_personal_app" },
      table.appName,
    ),
  ],
);

export interface DiscoveredService {
  name: string;
  environments: string[];
  clusters: string[];
  namespaces: string[];
  /** The integrations it was seen in. */
  seen_in: string[];
}

export interface DiscoveryResult {
  services: DiscoveredService[];
  environments: string[];
  clusters: string[];
  calls: { from: string; to: string }[];
  integrations: {
    name: string;
    type: string;
    ok: boolean;
    error: string | null;
    counts: Record<string, number>;
  }[];
}

export const discoveryRuns = pgTable(
  "discovery_runs",
  {
    ...ownedColumns(),
    appName: text("app_name").notNull(),
    status: text("status").notNull(),
    error: text("error"),
    result: jsonb("result").$type<DiscoveryResult | Record<string, never>>().notNull(),
    startedAt: timestamp("started_at", { withTimezone: true }).notNull(),
    finishedAt: timestamp("finished_at", { withTimezone: true }),
  },
  (table) => [index("discovery_runs_tenant_started").on(table.orgId, table.ownerId, table.startedAt)],
);
