// Time-ordered ids (UUIDv7, RFC 9562) for rows written at ingest rates: a new id lands at the end of
// its primary key index instead of on a random page, which keeps inserts in cached pages and writes
// far fewer full-page images to the WAL. A 12-bit sequence orders ids made in the same millisecond.
import { randomFillSync } from "node:crypto";

/**
 * Ids drawn from one fill of the random pool. Asking the operating system for 16 bytes per id cost a
 * system call per row on the ingest path; one fill serves this many ids, from the same CSPRNG.
 */
export const IDS_PER_RANDOM_FILL = 256;

const pool = Buffer.alloc(16 * IDS_PER_RANDOM_FILL);
let offset = pool.length;

/** 16 random bytes nobody else is given: a slice of the pool, refilled when used up. */
function randomSixteen(): Buffer {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  return bytes;
}

let lastMs = 0;
let sequence = 0;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether the text is a uuid (any version, either case). */
export const isUuid = (value: string): boolean => UUID.test(value);

export function uuidv7(): string {
  const nowMs = Date.now();
  if (nowMs > lastMs) {
    lastMs = nowMs;
    sequence = 0;
  } else if (++sequence > 0xfff) {
    lastMs += 1;
    sequence = 0;
  }
  const bytes = randomSixteen();
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes.writeUInt16BE(0x7000 | sequence, 6);
  bytes.writeUInt8(0x80 | (bytes.readUInt8(8) & 0x3f), 8);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
