import { type SQL, sql } from "drizzle-orm";

/** From this many bytes of JSON on, the array is bound as bytes (why: below). */
const AS_BYTES_FROM = 64 * 1024;

/**
 * An array of rows sent as one `json` parameter, for `json_to_recordset` and the like: the statement's
 * text stays fixed however many rows it carries.
 *
 * A large array is bound as its UTF-8 bytes (binary format, which `json` reads as its text) instead
 * of as one string. V8 allocates a string of more than 128 KiB in fresh memory of its own, and the
 * first read of JSON.stringify's result copies it there: on a virtual machine that faults each new
 * page in from its host, that copy ran at about 250 MB/s (1.4 ms for 140,000 characters), and made
 * a fifth of the API's CPU on 50-alert deliveries. Each row's JSON stays small and is written into
 * one buffer instead.
 */
export function boundJsonArray(rows: readonly unknown[]): SQL {
  return boundJsonTexts(
    // As in an array: what JSON cannot hold (undefined, a function) is null.
    rows.map((row) => JSON.stringify(row) ?? "null"),
  );
}

/** boundJsonArray of rows already written as JSON, one text each. */
export function boundJsonTexts(items: readonly string[]): SQL {
  return sql`${sql.param(jsonArrayOf(items))}::json`;
}

/** The JSON array of these JSON texts: a string, or its UTF-8 bytes when large. */
export function jsonArrayOf(items: readonly string[]): string | Buffer {
  let bytes = items.length === 0 ? 2 : items.length + 1;
  for (const item of items) bytes += Buffer.byteLength(item);
  if (bytes < AS_BYTES_FROM) return `[${items.join(",")}]`;
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  out[at++] = 0x5b;
  for (let n = 0; n < items.length; n++) {
    if (n > 0) out[at++] = 0x2c;
    at += out.write(items[n] as string, at);
  }
  out[at] = 0x5d;
  return out;
}
