// What the PostgreSQL outage tests share: a Vigil's pools, an alert trigger to deliver to, and the
// answer a delivery gets while the database is out of reach.
import type { LightMyRequestResponse } from "fastify";
import type pg from "pg";
import { expect } from "vitest";
import type { Database } from "../src/core/db/database.ts";
import type { Vigil } from "../src/start.ts";
import type { Auth } from "./harness.ts";

/** The connection pools under a database on PostgreSQL: the main one and the read one. */
export const poolsOf = (database: Database) =>
  [database.db, database.readDb].map((db) => (db as unknown as { $client: pg.Pool }).$client);

/** Registers an Alertmanager source of `integration`; answers its trigger path. */
export async function registerAlertTrigger(vigil: Vigil, auth: Auth, integration: string): Promise<string> {
  const registered = await vigil.app.inject({
    method: "POST",
    url: "/app/sre/api/v1/alerts/webhook",
    headers: auth,
    payload: { source: "alertmanager", integration },
  });
  expect(registered.statusCode, registered.body).toBe(201);
  return `/platform${registered.json().platform_webhook_url}`;
}

/** A delivery answered as the database being out of reach: 503, Retry-After, the trigger's JsonError. */
export function expectDeliveryUnavailable(delivery: LightMyRequestResponse): void {
  expect(delivery.statusCode, delivery.body).toBe(503);
  expect(delivery.headers["retry-after"]).toBe("5");
  expect(delivery.json()).toEqual({
    msg: "the database cannot be reached, refuses Vigil's connections or is at its connection limit: send the request again",
    errCode: "UNAVAILABLE",
    extras: [],
  });
}
