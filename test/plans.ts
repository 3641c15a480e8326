// Reading EXPLAIN (FORMAT JSON) answers, which PostgreSQL gives as json and PGlite as text.

/** Every index scan of a plan, in the order met: the index and what it is searched by. */
export function scansOfPlan(rows: unknown[]): { index: string; cond: string }[] {
  const [explained] = Object.values((rows[0] ?? {}) as object) as unknown[];
  const plan = (typeof explained === "string" ? JSON.parse(explained) : explained) as {
    Plan: Record<string, unknown>;
  }[];
  const scans: { index: string; cond: string }[] = [];
  const visit = (node: Record<string, unknown>) => {
    const index = node["Index Name"];
    if (typeof index === "string") scans.push({ index, cond: String(node["Index Cond"] ?? "") });
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit(plan?.[0]?.Plan ?? {});
  return scans;
}

/** The indexes a plan scans, each once, in the order met; `rows` is EXPLAIN's answer. */
export function indexesOfPlan(rows: unknown[]): string[] {
  return [...new Set(scansOfPlan(rows).map((scan) => scan.index))];
}
