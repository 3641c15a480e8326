// listAlerts and the two summaries of the alert console. The summaries always count active alerts,
// whatever list is shown, scoped by integration_names when given (spec, listAlerts rule 1).
import { and, asc, count, desc, eq, ilike, inArray, or, type SQL, sql } from "drizzle-orm";
import { inTenant, tenantOf } from "../../core/auth/tenancy.ts";
import type { CallerCtx } from "../../core/context.ts";
import { AppError } from "../../core/errors.ts";
import { webhookInvocations } from "../../webhooks/index.ts";
import { ANALYSIS_STATUSES, ATTENTIONS } from "../schemas.ts";
import { DISPLAY_PRIORITY } from "../sources/normalize/severity.ts";
import type { SeverityBucket } from "../sources/types.ts";
import { alertPayloads, alertSearch, alerts, SEARCH_SEPARATOR } from "../tables.ts";
import { ALERT_V1_JSON, withRawPayload } from "./present.ts";
import { rawPayloadColumns, rawPayloadText } from "./raw-payload.ts";

export interface ListAlertsInput {
  status: "active" | "resolved" | "ignored";
  attention?: (typeof ATTENTIONS)[number];
  source_type?: string;
  integration_names?: string;
  storm_id?: string;
  q?: string;
  signal_severity?: SeverityBucket;
  alert_role?: string;
  sort_by: "severity" | "impact";
  page: number;
  page_size: number;
  /** false leaves raw_payload out of each alert (a storm's alerts often share one large delivery). */
  include_raw_payload?: boolean;
}

/** `a,b` -> ["a", "b"]; an empty item is a client error, not a silent match-nothing. */
export function parseIntegrationNames(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  const names = value.split(",").map((name) => name.trim());
  if (names.some((name) => name === "")) {
    throw new AppError(
      "VALIDATION_FAILED",
      "integration_names: must be a comma-separated list of non-empty names",
      {
        field: "integration_names",
        location: "querystring",
      },
    );
  }
  return names;
}

/** ILIKE pattern matching `text` literally: %, _ and \ are escaped. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}

function scopeConditions(ctx: CallerCtx, integrationNames: string[] | null): SQL[] {
  const conditions: SQL[] = [inTenant(alerts, tenantOf(ctx.actor))];
  if (integrationNames) conditions.push(inArray(alerts.integrationName, integrationNames));
  return conditions;
}

/** The ListAlertsResponse, as JSON text. */
export async function listAlerts({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: ListAlertsInput;
}): Promise<string> {
  const integrationNames = parseIntegrationNames(input.integration_names);
  const scope = scopeConditions(ctx, integrationNames);
  // A storm is an incident of active alerts: storm_id lists the active members.
  const status = input.storm_id ? "active" : input.status;
  const filters: SQL[] = [];
  /** The search's condition on alert_search (alias s), when there is a q. */
  let search: SQL | null = null;
  if (input.storm_id) filters.push(eq(alerts.stormId, input.storm_id));
  if (input.attention) filters.push(eq(alerts.attention, input.attention));
  if (input.source_type) filters.push(eq(alerts.sourceType, input.source_type));
  // display_priority is the bucket's rank (check alerts_display_priority_of_severity): the same rows
  // as severity = bucket, but a column of the sort and count indexes.
  if (input.signal_severity) {
    filters.push(eq(alerts.displayPriority, DISPLAY_PRIORITY[input.signal_severity]));
  }
  if (input.alert_role) filters.push(eq(alerts.alertRole, input.alert_role));
  if (input.q) {
    const pattern = containsPattern(input.q);
    // One condition on the trigram indexes' text (title, U+001F, description): a q without U+001F
    // cannot match across the two. Only a q holding it needs the columns checked one by one (a
    // second condition the planner would count as more selective than it is, so not by default).
    // `active` as a literal, so that the planner can use the partial index of the status searched:
    // for a common word it reads the page in sort order and looks each alert's text up by its id,
    // for a rare one it reads the word's few alerts from the trigram index.
    search = sql`${sql.raw(status === "active" ? "s.active" : "not s.active")} and s.text ilike ${pattern}`;
    if (input.q.includes(SEARCH_SEPARATOR)) {
      filters.push(or(ilike(alerts.title, pattern), ilike(alerts.description, pattern)) as SQL);
    }
  }
  const found = and(...scope, eq(alerts.status, status), ...filters);
  const where = search
    ? and(found, sql`exists (select from ${alertSearch} s where s.alert_id = ${alerts.id} and ${search})`)
    : found;
  const countedBySummary = !search && status === "active" && filters.length === (input.attention ? 1 : 0);
  // Ties always end on id, so pages never overlap or skip.
  const order =
    input.sort_by === "impact"
      ? [desc(alerts.impactScore), asc(alerts.displayPriority), desc(alerts.triggeredAt), asc(alerts.id)]
      : [asc(alerts.displayPriority), desc(alerts.triggeredAt), asc(alerts.id)];
  // Deferred join: the page's ids first, from the sort index (alone, unless a filter needs another
  // column), so a deep page skips index entries rather than rows and payloads; then only its rows.
  const pageIds = ctx.db
    .select({ id: alerts.id })
    .from(alerts)
    .where(where)
    .orderBy(...order)
    .limit(input.page_size)
    .offset((input.page - 1) * input.page_size)
    .as("page_ids");
  // Each alert of the page comes back as JSON text (ALERT_V1_JSON, present.ts): a page of 500
  // alerts mapped and serialized row by row in Node took longer than PostgreSQL took to read it.
  const withPayloads = input.include_raw_payload !== false;
  const page = withPayloads
    ? ctx.db
        .select({ alert: sql<string>`${ALERT_V1_JSON}::text`, ...rawPayloadColumns })
        .from(pageIds)
        .innerJoin(alerts, eq(alerts.id, pageIds.id))
        .leftJoin(alertPayloads, eq(alertPayloads.id, alerts.rawPayloadId))
        .leftJoin(webhookInvocations, eq(webhookInvocations.id, alerts.rawPayloadId))
        .orderBy(...order)
        .then((rows) => rows.map((row) => withRawPayload(row.alert, rawPayloadText(row))))
    : ctx.db
        .select({ alert: sql<string>`${ALERT_V1_JSON}::text` })
        .from(pageIds)
        .innerJoin(alerts, eq(alerts.id, pageIds.id))
        .orderBy(...order)
        .then((rows) => rows.map((row) => row.alert));
  const [rows, total, summary] = await Promise.all([
    page,
    // The summary counts the active list, whole or by attention, already: not twice.
    countedBySummary
      ? null
      : search
        ? countSearch(ctx, found, search, countLimit(ctx, true))
        : countAlerts(ctx, where, countLimit(ctx, false)),
    attentionSummary(ctx, scope),
  ]);
  const counted = pastTheCount(
    total ?? { n: input.attention ? summary[input.attention] : summary.total_active, exact: true },
    input,
    rows.length,
  );
  const rest = JSON.stringify({
    page: input.page,
    page_size: input.page_size,
    total: counted.n,
    total_exact: counted.exact,
    total_pages: Math.ceil(counted.n / input.page_size),
    summary,
  });
  return `{"alerts":[${rows.join(",")}],${rest.slice(1)}`;
}

/**
 * A count that stopped at its limit, corrected by the page itself: a page past the limit holds at
 * least its own alerts and those before it (so the console never reads "page 3 of 1+"), and a page
 * that is neither empty nor full is the last one, so the total is known exactly.
 */
function pastTheCount(
  counted: { n: number; exact: boolean },
  input: { page: number; page_size: number },
  served: number,
): { n: number; exact: boolean } {
  if (counted.exact || served === 0) return counted;
  const seen = (input.page - 1) * input.page_size + served;
  return served < input.page_size ? { n: seen, exact: true } : { n: Math.max(counted.n, seen), exact: false };
}

/**
 * How far a list's total is counted. A text search stops early (SEARCH_COUNT_LIMIT): its matches
 * must each be read from the table, and 20k of them took 250 ms or more, while the page itself (the
 * first rows in sort order) costs a few; "1,000+" tells the engineer the search is too broad. Other
 * filters count from an index alone, yet that still grows with the history: the 657k resolved
 * alerts of the query bench took 60 ms, and a year of history would take seconds on every page.
 * Past LIST_COUNT_LIMIT (10,000, as search engines answer "10,000+") the exact number tells an
 * engineer nothing more; the active list without filters is the summary's exact count.
 */
function countLimit(ctx: CallerCtx, search: boolean): number {
  const { searchCountLimit, listCountLimit } = ctx.config;
  return search ? searchCountLimit : listCountLimit;
}

/** The list's total, exact up to `limit`; past it `exact` is false and the total is a lower bound. */
async function countAlerts(
  ctx: CallerCtx,
  where: SQL | undefined,
  limit: number,
): Promise<{ n: number; exact: boolean }> {
  const matches = ctx.db
    .select({ one: sql`1`.as("one") })
    .from(alerts)
    .where(where)
    .limit(limit + 1)
    .as("matches");
  const [row] = await ctx.db.select({ n: count() }).from(matches);
  return bounded(row?.n ?? 0, limit);
}

/** A count of at most limit + 1 rows as a total: past the limit, a lower bound. */
function bounded(n: number, limit: number): { n: number; exact: boolean } {
  return n > limit ? { n: limit, exact: false } : { n, exact: true };
}

/**
 * A search's total, exact up to `limit`, as countAlerts. It starts from the search's matches and
 * looks each up in alerts by its id, to the limit: from alerts, the planner hashed all of the
 * tenant's active alerts first (60,000 in the query bench: 40 ms, for a word with 7 matches too).
 */
async function countSearch(
  ctx: CallerCtx,
  found: SQL | undefined,
  search: SQL,
  limit: number,
): Promise<{ n: number; exact: boolean }> {
  const { rows } = await ctx.db.execute(sql`
    select count(*)::int as n from (
      select from (select s.alert_id from ${alertSearch} s where ${search} offset 0) s
      cross join lateral (select from ${alerts} where ${alerts.id} = s.alert_id and ${found} limit 1) a
      limit ${limit + 1}) matches`);
  return bounded(Number(rows[0]?.n ?? 0), limit);
}

/**
 * The number of active alerts in `scope` with each value of `column`: one count per value, each an
 * index-only scan of a count index (tables.ts), which costs less than grouping every row. The values
 * are the column's closed list (a check constraint on alerts), so the counts add up to every active
 * alert.
 */
async function countActiveBy<Value extends string>(
  ctx: CallerCtx,
  scope: SQL[],
  column: typeof alerts.attention | typeof alerts.analysisStatus,
  values: readonly Value[],
): Promise<Record<Value, number>> {
  const counts = values.map((value) => {
    const where = and(...scope, eq(alerts.status, "active"), eq(column, value));
    return sql`(select count(*)::int from ${alerts} where ${where}) as ${sql.identifier(value)}`;
  });
  const { rows } = await ctx.db.execute(sql`select ${sql.join(counts, sql`, `)}`);
  const row = (rows[0] ?? {}) as Partial<Record<Value, number>>;
  return Object.fromEntries(values.map((value) => [value, row[value] ?? 0])) as Record<Value, number>;
}

async function attentionSummary(ctx: CallerCtx, scope: SQL[]) {
  const counts = await countActiveBy(ctx, scope, alerts.attention, ATTENTIONS);
  return {
    total_active: ATTENTIONS.reduce((sum, attention) => sum + counts[attention], 0),
    needs_attention: counts.needs_attention,
    others: counts.others,
    needs_review: counts.needs_review,
    false_positive: counts.false_positive,
  };
}

export async function categorizationSummary({
  ctx,
  input,
}: {
  ctx: CallerCtx;
  input: { integration_names?: string };
}) {
  const scope = scopeConditions(ctx, parseIntegrationNames(input.integration_names));
  const counts = await countActiveBy(ctx, scope, alerts.analysisStatus, ANALYSIS_STATUSES);
  const inProgress = counts.queued + counts.running;
  return {
    total_active: ANALYSIS_STATUSES.reduce((sum, status) => sum + counts[status], 0),
    not_started: counts.none,
    in_progress: inProgress,
    completed: counts.completed,
    failed: counts.failed,
    is_running: inProgress > 0,
  };
}
