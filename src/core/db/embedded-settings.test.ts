// The embedded database's page cache is Vigil's to size (PGLITE_CACHE_MB), not PostgreSQL's 128 MB
// default, a search index merges its pending entries at 256 kB instead of 4 MB, and a COMMIT still
// writes its WAL before it returns. PGlite only: these are the embedded engine's settings.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./database.ts";

const SLOW = 300_000;

async function settingsOf(target: Parameters<typeof openDatabase>[0]): Promise<Record<string, unknown>> {
  const database = await openDatabase(target);
  try {
    const { rows } = await database.db.execute(
      "select current_setting('shared_buffers') as shared_buffers, current_setting('synchronous_commit') as synchronous_commit, current_setting('full_page_writes') as full_page_writes, current_setting('gin_pending_list_limit') as gin_pending_list_limit",
    );
    return rows[0] ?? {};
  } finally {
    await database.close();
  }
}

describe("the embedded database's settings", () => {
  const work = mkdtempSync(join(tmpdir(), "vigil-embedded-settings-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it(
    "keeps a 16 MB page cache unless told otherwise, small lists of pending search entries, and commits synchronously",
    async () => {
      expect(await settingsOf({ memory: true })).toEqual({
        shared_buffers: "16MB",
        synchronous_commit: "on",
        full_page_writes: "on",
        gin_pending_list_limit: "256kB",
      });
    },
    SLOW,
  );

  it(
    "sizes the page cache of a DATA_DIR as configured",
    async () => {
      expect(await settingsOf({ dataDir: join(work, "data"), cacheMb: 48 })).toEqual({
        shared_buffers: "48MB",
        synchronous_commit: "on",
        full_page_writes: "on",
        gin_pending_list_limit: "256kB",
      });
    },
    SLOW,
  );
});
