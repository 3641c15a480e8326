// A job is declared once: name (`domain.verb`), payload schema, handler and retry policy.
// Domains export their definitions; the queue registers whatever the app hands it.
import type { Static, TSchema } from "@sinclair/typebox";
import type { Logger } from "pino";
import type { Config } from "../../config.ts";
import type { Db } from "../db/database.ts";

export interface JobContext {
  db: Db;
  log: Logger;
  config: Config;
  now: () => Date;
}

export interface JobDefinition<S extends TSchema = TSchema> {
  name: string;
  schema: S;
  // Method syntax keeps a catalog of differently typed jobs assignable to JobDefinition[].
  handler(args: { ctx: JobContext; data: Static<S>; attempt: number }): Promise<void>;
  /** Retries after the first attempt. */
  retryLimit: number;
  retryDelaySeconds: number;
  retryBackoff: boolean;
  expireInSeconds: number;
}

export function defineJob<S extends TSchema>(
  definition: Omit<
    JobDefinition<S>,
    "retryLimit" | "retryDelaySeconds" | "retryBackoff" | "expireInSeconds"
  > &
    Partial<JobDefinition<S>>,
): JobDefinition<S> {
  return { retryLimit: 3, retryDelaySeconds: 5, retryBackoff: true, expireInSeconds: 15 * 60, ...definition };
}
