// Reading EXPLAIN (FORMAT JSON) answers, which PostgreSQL gives as json and PGlite as text.

/** The indexes a plan scans, each once, in the order met; `rows` is EXPLAIN's answer. */
export function indexesOfPlan(rows: unknown[]): string[] {
  const [explained] = Object.values((rows[0] ?? {}) as object) as unknown[];
  const plan = (typeof explained === "string" ? JSON.parse(explained) : explained) as {
    Plan: Record<string, unknown>;
  }[];
  const found: string[] = [];
  const visit = (node: Record<string, unknown>) => {
    const index = node["Index Name"];
    if (typeof index === "string" && !found.includes(index)) found.push(index);
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit(plan?.[0]?.Plan ?? {});
  return found;
}
