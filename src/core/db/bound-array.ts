import { type SQL, sql } from "drizzle-orm";

/**
 * An array sent as one bound parameter, for `= any(...)` and `unnest(...)`: the driver escapes each
 * element, so any text (quotes, backslashes, braces, commas) is safe. Drizzle would otherwise expand
 * a JavaScript array into a list of parameters.
 */
export function boundArray(
  values: readonly (string | number | bigint)[],
  type: "text" | "uuid" | "bigint",
): SQL {
  return sql`${sql.param(values.map((value) => (typeof value === "string" ? value : String(value))))}::${sql.raw(type)}[]`;
}
