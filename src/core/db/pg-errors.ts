// PostgreSQL errors by their SQLSTATE, on both engines: drizzle wraps the driver's error (pg or
// PGlite) in its own, so the code may sit on the error or on its cause.

/** The database's own error inside whatever wrapped it: the first with a SQLSTATE code. */
function databaseErrorOf(err: unknown): { code: string; message: string } | undefined {
  for (let current = err, depth = 0; current && typeof current === "object" && depth < 5; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return { code, message: String(message) };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The SQLSTATE of a database error, wherever the wrapping put it. */
export function sqlStateOf(err: unknown): string | undefined {
  return databaseErrorOf(err)?.code;
}

/** The database's own message for an error drizzle wrapped (its own message names the query). */
export function databaseMessageOf(err: unknown): string {
  return databaseErrorOf(err)?.message ?? (err instanceof Error ? err.message : String(err));
}

export const isUniqueViolation = (err: unknown): boolean => sqlStateOf(err) === "23505";

/**
 * A unique violation or a deadlock: two writers raced for the same new row. The loser's
 * transaction is rolled back whole, so running it again is safe and finds the winner's row.
 */
export const isRetryableConflict = (err: unknown): boolean => {
  const state = sqlStateOf(err);
  return state === "23505" || state === "40P01";
};

/** Runs `work` again (at most `attempts` times in all) while it fails with a retryable conflict. */
export async function retryOnConflict<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !isRetryableConflict(err)) throw err;
    }
  }
}
