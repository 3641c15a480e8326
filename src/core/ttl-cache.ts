// A small in-process cache for rows read on every webhook delivery (the webhook of a token, the
// registration of a webhook). Entries expire after `ttlMs`, so a change made through another
// replica takes effect within that time; changes made here delete the entry at once.
export interface TtlCache<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): void;
  /** Drops every entry whose value matches, e.g. all entries of one webhook id. */
  deleteWhere(match: (value: V) => boolean): void;
}

export function createTtlCache<K, V>(ttlMs: number, maxEntries: number): TtlCache<K, V> {
  const entries = new Map<K, { value: V; expiresAt: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= Date.now()) {
        entries.delete(key);
        return undefined;
      }
      return entry.value;
    },
    set(key, value) {
      // Maps iterate in insertion order: the first key is the oldest.
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value as K);
      entries.set(key, { value, expiresAt: Date.now() + ttlMs });
    },
    deleteWhere(match) {
      for (const [key, entry] of entries) if (match(entry.value)) entries.delete(key);
    },
  };
}
