// Prometheus model.LabelSet.Fingerprint (prometheus/common model/signature.go), used as the uid of an
// Alertmanager or Grafana alert that arrives without its `fingerprint` (alert-sources.md 1.2).

const FNV_OFFSET_BASIS = 14695981039346656037n;
const FNV_PRIME = 1099511628211n;
const MASK_64 = 0xffffffffffffffffn;
const SEPARATOR_BYTE = 0xff;

function feedBytes(hash: bigint, bytes: Iterable<number>): bigint {
  let next = hash;
  for (const byte of bytes) {
    next = ((next ^ BigInt(byte)) * FNV_PRIME) & MASK_64;
  }
  return next;
}

// Go decodes a JSON null into a label value as ""; other non-strings cannot come from Alertmanager,
// but a replaying sender might send them, so they hash as their JSON text rather than failing.
function labelValueBytes(value: unknown): Buffer {
  if (typeof value === "string") return Buffer.from(value, "utf8");
  if (value === null || value === undefined) return Buffer.alloc(0);
  return Buffer.from(JSON.stringify(value) ?? "", "utf8");
}

/**
 * The Alertmanager fingerprint of a label set, as 16 lowercase hex digits: FNV-1a 64 over the names
 * in UTF-8 byte order, each name and value followed by a 0xFF byte. Pass the labels exactly as
 * received (before any stripping). `{}` gives `cbf29ce484222325`.
 */
export function labelFingerprint(labels: Readonly<Record<string, unknown>>): string {
  const names = Object.keys(labels)
    .map((name) => ({ name, bytes: Buffer.from(name, "utf8") }))
    .sort((left, right) => Buffer.compare(left.bytes, right.bytes));
  let hash = FNV_OFFSET_BASIS;
  for (const { name, bytes } of names) {
    hash = feedBytes(hash, bytes);
    hash = feedBytes(hash, [SEPARATOR_BYTE]);
    hash = feedBytes(hash, labelValueBytes(labels[name]));
    hash = feedBytes(hash, [SEPARATOR_BYTE]);
  }
  return hash.toString(16).padStart(16, "0");
}
