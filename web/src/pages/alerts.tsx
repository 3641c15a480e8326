// The alert console: tabs, attention counts, every filter of listAlerts, both sorts, pages, storms as
// groups, and keyboard navigation. The URL holds the whole state, so a filtered view can be shared.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type Alert, api, isOutage, type QueryOf, unwrap } from "../api/client.ts";
import { Link, navigate, queryHref, setQuery, useLocation } from "../router.tsx";
import { SOURCES } from "../sources.ts";
import {
  ATTENTION_LABEL,
  Attention,
  Empty,
  ErrorBox,
  Impact,
  Loading,
  outdated,
  Severity,
  shortId,
  Time,
  Unreachable,
  useTitle,
} from "../ui.tsx";

const STATUSES = ["active", "ignored", "resolved"] as const;
const ATTENTIONS = ["needs_attention", "needs_review", "false_positive", "others"] as const;
const SEVERITIES = ["Critical", "High", "Medium", "Low", "info"] as const;
const ROLES = ["cause", "symptom", "unknown"] as const;
const PAGE_SIZE = 50;
/** The API's bounds of page_size: a URL's value outside them is brought inside, not sent to a 400. */
const MAX_PAGE_SIZE = 500;
const REFRESH_MS = 10_000;

type Status = (typeof STATUSES)[number];
/** The list request the page sends: it always sets the parameters the API would default. */
type Query = QueryOf<"listAlerts"> &
  Required<Pick<QueryOf<"listAlerts">, "status" | "sort_by" | "page" | "page_size">>;

/** The list request the URL describes; unknown values are passed on, and the API names the bad field. */
function listQueryOf(query: URLSearchParams): Query {
  const text = (name: string) => query.get(name) || undefined;
  return {
    // A storm is an incident of active alerts: its view lists its active members, whatever the tab.
    status: (text("storm_id") ? "active" : (text("status") ?? "active")) as Status,
    attention: text("attention") as never,
    source_type: text("source_type"),
    integration_names: integrationNames(query.get("integration_names") ?? ""),
    storm_id: text("storm_id"),
    q: text("q"),
    signal_severity: text("signal_severity") as never,
    alert_role: text("alert_role") as never,
    sort_by: (text("sort_by") ?? "severity") as "severity" | "impact",
    page: pageOf(text("page")),
    page_size: pageSizeOf(text("page_size")),
    // The list shows no payloads: a storm's alerts would each bring their delivery's whole body.
    include_raw_payload: false,
  };
}

/** Comma-separated integration names without blank entries ("prod, ,staging," is "prod,staging"). */
function integrationNames(value: string): string | undefined {
  const names = value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  return names.length > 0 ? names.join(",") : undefined;
}

/**
 * page_size from the URL: 1 to 500, a value outside brought to the nearer bound (0 is 1); the default
 * when missing or not a number.
 */
function pageSizeOf(value: string | undefined): number {
  const size = Math.trunc(Number(value ?? PAGE_SIZE));
  if (Number.isNaN(size)) return PAGE_SIZE;
  return Math.min(MAX_PAGE_SIZE, Math.max(1, size));
}

/** page from the URL: 1 when missing, not a number or below 1, as page=0 is (the API would answer 400). */
function pageOf(value: string | undefined): number {
  const page = Math.trunc(Number(value ?? 1));
  return Number.isFinite(page) && page > 1 ? page : 1;
}

/**
 * Inputs that take no text (the Live box, a radio, a button): the list's keys still act while one
 * has the focus. Text fields, text areas, selects and editable text take the keys as typing.
 */
const NOT_TEXT = new Set([
  "checkbox",
  "radio",
  "button",
  "submit",
  "reset",
  "range",
  "color",
  "file",
  "image",
]);

function isTyping(target: HTMLElement): boolean {
  if (target instanceof HTMLInputElement) return !NOT_TEXT.has(target.type);
  return (
    target instanceof HTMLTextAreaElement || target instanceof HTMLSelectElement || target.isContentEditable
  );
}

/** The list request the URL names: the page's, and the shell's early start of it on a cold load. */
export function alertListQuery(query: URLSearchParams) {
  const input = listQueryOf(query);
  return {
    queryKey: ["alerts", input],
    queryFn: async () => unwrap(await api.GET("/app/sre/api/v1/alerts", { params: { query: input } })),
  };
}

/** Storm members are gathered at the place of their first row: the cause first, then the symptoms. */
type Row =
  | { kind: "alert"; alert: Alert; inStorm: boolean }
  | { kind: "storm"; stormId: string; members: Alert[] };
function rowsOf(alerts: Alert[]): Row[] {
  const byStorm = new Map<string, Alert[]>();
  for (const alert of alerts) {
    if (!alert.storm_id) continue;
    const members = byStorm.get(alert.storm_id) ?? [];
    members.push(alert);
    byStorm.set(alert.storm_id, members);
  }
  const rows: Row[] = [];
  const placed = new Set<string>();
  const roleOrder = { cause: 0, unknown: 1, symptom: 2 } as Record<string, number>;
  for (const alert of alerts) {
    const members = alert.storm_id ? byStorm.get(alert.storm_id) : undefined;
    if (!alert.storm_id || !members || members.length < 2) {
      rows.push({ kind: "alert", alert, inStorm: false });
      continue;
    }
    if (placed.has(alert.storm_id)) continue;
    placed.add(alert.storm_id);
    const ordered = [...members].sort(
      (a, b) => (roleOrder[a.alert_role] ?? 1) - (roleOrder[b.alert_role] ?? 1),
    );
    rows.push({ kind: "storm", stormId: alert.storm_id, members: ordered });
    for (const member of ordered) rows.push({ kind: "alert", alert: member, inStorm: true });
  }
  return rows;
}

export function AlertsPage() {
  const { query } = useLocation();
  const input = listQueryOf(query);
  const [live, setLive] = useState(true);
  useTitle("Alerts");
  const list = useQuery({
    ...alertListQuery(query),
    placeholderData: keepPreviousData,
    refetchInterval: live ? REFRESH_MS : false,
  });
  // The rows on screen may not answer the URL: the previous filter's, kept while the new one loads
  // (placeholder), or the last answer before Vigil stopped answering. Either way they are shown as
  // stale (dimmed, aria-busy) and the keys do not act on them until a fresh answer comes. A 503 (its
  // database out, or shutting down) is an outage like no answer at all, not a refusal of the request.
  const outage = isOutage(list.error);
  const placeholder = list.isPlaceholderData;
  const stale = placeholder || outdated(list);
  const alerts = list.data?.alerts ?? [];
  const rows = useMemo(() => rowsOf(alerts), [alerts]);
  const alertRows = rows.filter((row): row is Extract<Row, { kind: "alert" }> => row.kind === "alert");
  // The selection is an alert, not a row number: when a refresh re-ranks the list, the alert the
  // engineer picked stays picked (the first row when it has left the page).
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const indexOf = (list: typeof alertRows, id: string | null) =>
    Math.max(
      0,
      list.findIndex((row) => row.alert.id === id),
    );
  const cursor = indexOf(alertRows, selectedId);
  const search = useRef<HTMLInputElement>(null);
  // The key handler reads the rows and selection of the latest render, not of the one that added it.
  const latest = useRef({ alertRows, selectedId, stale });
  latest.current = { alertRows, selectedId, stale };

  // j/k move, Enter opens, / searches: the list works without a mouse.
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement;
      const typing = isTyping(target);
      if (event.key === "Escape" && typing) return target.blur();
      if (typing || event.metaKey || event.ctrlKey || event.altKey) return;
      const { alertRows: shown, selectedId: picked, stale: outdated } = latest.current;
      const at = indexOf(shown, picked);
      // Enter on a focused link or button is that control's own; the list's Enter is for no focus.
      const control = target.closest("a, button, summary");
      if (event.key === "/") {
        event.preventDefault();
        search.current?.focus();
      } else if (outdated && (event.key === "j" || event.key === "k" || event.key === "Enter")) {
        // Rows of another filter, or of a Vigil no longer answering: nothing to move to or open.
      } else if (event.key === "j" || event.key === "k") {
        const next = Math.max(0, Math.min(shown.length - 1, at + (event.key === "j" ? 1 : -1)));
        setSelectedId(shown[next]?.alert.id ?? null);
      } else if (event.key === "Enter" && !control && shown[at]) {
        navigate(alertHref(shown[at].alert));
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  useEffect(() => {
    document.querySelector(`[data-row="${cursor}"]`)?.scrollIntoView({ block: "nearest" });
  }, [cursor]);
  useEffect(() => setSelectedId(null), [query.toString()]);

  const summary = list.data?.summary;
  const filtered = [
    "attention",
    "source_type",
    "integration_names",
    "storm_id",
    "q",
    "signal_severity",
    "alert_role",
  ].some((name) => query.get(name));
  return (
    <section class="alerts">
      <div class="toolbar">
        {input.storm_id ? (
          // The API lists a storm's active members whatever the status asked: tabs would not filter.
          <p class="storm-view">
            <strong>Whole storm</strong>: its active alerts. Remove the storm filter (✕) for the Ignored and
            Resolved tabs.
          </p>
        ) : (
          <div class="tabs" role="tablist">
            {STATUSES.map((status) => (
              <button
                type="button"
                role="tab"
                key={status}
                aria-selected={input.status === status}
                class={input.status === status ? "tab active" : "tab"}
                onClick={() => setQuery({ status: status === "active" ? null : status })}
              >
                {status[0]?.toUpperCase() + status.slice(1)}
              </button>
            ))}
          </div>
        )}
        <label class="live">
          <input type="checkbox" checked={live} onChange={(event) => setLive(event.currentTarget.checked)} />{" "}
          Live
          {list.isFetching ? <span class="spinner" role="status" title="refreshing" /> : null}
        </label>
      </div>

      <div class={stale ? "summary stale" : "summary"} aria-busy={placeholder}>
        <h2 class="sr-only">Active alerts by attention</h2>
        <span class="summary-total">
          <strong>{summary?.total_active ?? "…"}</strong> active
        </span>
        {ATTENTIONS.map((attention) => (
          <button
            type="button"
            key={attention}
            class={`count att-${attention}${input.attention === attention ? " selected" : ""}`}
            aria-pressed={input.attention === attention}
            onClick={() => setQuery({ attention: input.attention === attention ? null : attention })}
          >
            <strong>{summary?.[attention] ?? "…"}</strong> {ATTENTION_LABEL[attention]}
          </button>
        ))}
        {placeholder ? (
          <span class="stale-note" role="status">
            Loading…
          </span>
        ) : null}
      </div>

      <Filters query={query} input={input} search={search} />
      {outage ? (
        <Unreachable since={list.data ? list.dataUpdatedAt : null} error={list.error}>
          While <strong>Live</strong> is on, the console asks again every 10 seconds.
        </Unreachable>
      ) : (
        <ErrorBox error={list.error} />
      )}

      <div class={stale ? "alert-list stale" : "alert-list"} aria-busy={placeholder}>
        {list.isPending ? (
          <Loading />
        ) : alerts.length === 0 ? (
          // A failed request says so above; an empty state under it would claim a list it never read.
          list.error || !list.data ? null : list.data.page > 1 ? (
            <PastTheEnd
              page={list.data.page}
              totalPages={list.data.total_pages}
              total={list.data.total}
              exact={list.data.total_exact}
            />
          ) : (
            <NoAlerts status={input.status} filtered={filtered} />
          )
        ) : (
          <>
            <table class="alert-table">
              <thead>
                <tr>
                  <th>Severity</th>
                  <th>Impact</th>
                  <th>Alert</th>
                  <th class="wide">Attention</th>
                  <th class="wide">Source</th>
                  <th>{input.status === "resolved" ? "Resolved" : "Triggered"}</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((row) =>
                  row.kind === "storm" ? (
                    <StormHeader key={`storm-${row.stormId}`} stormId={row.stormId} members={row.members} />
                  ) : (
                    <AlertRow
                      key={row.alert.id}
                      alert={row.alert}
                      inStorm={row.inStorm}
                      index={alertRows.indexOf(row)}
                      selected={alertRows[cursor] === row}
                      resolvedTab={input.status === "resolved"}
                    />
                  ),
                )}
              </tbody>
            </table>
            <Pager
              page={list.data?.page ?? 1}
              totalPages={list.data?.total_pages ?? 1}
              total={list.data?.total ?? 0}
              exact={list.data?.total_exact ?? true}
              rows={alerts.length}
              pageSize={input.page_size}
            />
          </>
        )}
      </div>
      <p class="muted small keys">
        <kbd>j</kbd>/<kbd>k</kbd> move · <kbd>Enter</kbd> open · <kbd>/</kbd> search
      </p>
    </section>
  );
}

export const alertHref = (alert: Pick<Alert, "id">) => `/alerts/${encodeURIComponent(alert.id)}`;

function Filters(props: {
  query: URLSearchParams;
  input: Query;
  search: { current: HTMLInputElement | null };
}) {
  const { query, input } = props;
  const [text, setText] = useState(query.get("q") ?? "");
  const [integrations, setIntegrations] = useState(query.get("integration_names") ?? "");
  // The fields follow the URL: a cleared filter empties its field, so a later blur cannot set it again.
  useEffect(() => setText(query.get("q") ?? ""), [query.get("q")]);
  useEffect(() => setIntegrations(query.get("integration_names") ?? ""), [query.get("integration_names")]);
  const select = (
    name: string,
    label: string,
    values: readonly string[],
    labels?: Record<string, string>,
  ) => (
    <label>
      <span class="sr-only">{label}</span>
      <select
        aria-label={label}
        value={query.get(name) ?? ""}
        onChange={(event) => setQuery({ [name]: event.currentTarget.value })}
      >
        <option value="">{label}: any</option>
        {values.map((value) => (
          <option key={value} value={value}>
            {labels?.[value] ?? value}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <div class="filters">
      <form
        class="search"
        onSubmit={(event) => {
          event.preventDefault();
          setQuery({ q: text.trim() });
        }}
      >
        <input
          ref={props.search}
          type="search"
          name="q"
          aria-label="Search title and description"
          placeholder="Search title and description  ( / )"
          value={text}
          onInput={(event) => setText(event.currentTarget.value)}
          // Esc leaves the field (the page's key handler blurs it) showing the search in force: not
          // emptied, as the browser does to a search field, over a list still filtered by it, and
          // without a search typed but never sent.
          onKeyDown={(event) => {
            if (event.key !== "Escape") return;
            event.preventDefault();
            setText(query.get("q") ?? "");
          }}
        />
      </form>
      {select("attention", "Attention", ATTENTIONS, ATTENTION_LABEL)}
      {select("signal_severity", "Severity", SEVERITIES)}
      {select(
        "source_type",
        "Source",
        SOURCES.map((source) => source.name),
      )}
      {select("alert_role", "Role", ROLES)}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setQuery({ integration_names: integrationNames(integrations) ?? null });
        }}
      >
        <input
          name="integration_names"
          aria-label="Integrations (comma-separated)"
          placeholder="Integrations: prod,staging"
          value={integrations}
          onInput={(event) => setIntegrations(event.currentTarget.value)}
          onBlur={() => setQuery({ integration_names: integrationNames(integrations) ?? null })}
        />
      </form>
      <label>
        <span class="sr-only">Sort</span>
        <select
          aria-label="Sort"
          value={input.sort_by}
          onChange={(event) =>
            setQuery({ sort_by: event.currentTarget.value === "severity" ? null : event.currentTarget.value })
          }
        >
          <option value="severity">Sort: severity</option>
          <option value="impact">Sort: impact</option>
        </select>
      </label>
      {input.storm_id ? (
        <button
          type="button"
          class="chip"
          onClick={() => setQuery({ storm_id: null })}
          title="Show all alerts"
        >
          Storm {shortId(input.storm_id)} ✕
        </button>
      ) : null}
    </div>
  );
}

/**
 * The label keys that say where a storm is, broadest first, as the correlator scopes storms (a
 * cluster, then a namespace, a service, a host): what tells apart storms of one cause in two places.
 */
const STORM_SCOPE_KEYS = [
  "cluster",
  "namespace",
  "service",
  "app",
  "application",
  "host",
  "hostname",
  "node",
  "nodename",
  "instance",
];

/** `cluster=prod-eu`: the first scope label of the storm's cause (of its first member when none is). */
function stormScope(members: Alert[]): string | null {
  const alert = members.find((member) => member.alert_role === "cause") ?? members[0];
  const labels = new Map(
    Object.entries(alert?.labels ?? {}).map(([key, value]) => [key.toLowerCase(), value.trim()]),
  );
  for (const key of STORM_SCOPE_KEYS) {
    const value = labels.get(key);
    if (value) return `${key}=${value}`;
  }
  return null;
}

function StormHeader({ stormId, members }: { stormId: string; members: Alert[] }) {
  const cause = members.find((member) => member.alert_role === "cause");
  const upstream = members.find((member) => member.likely_upstream)?.likely_upstream;
  const scope = stormScope(members);
  return (
    <tr class="storm-head">
      <td colSpan={6}>
        <span class="storm-badge">Storm</span>
        {scope ? (
          <>
            {" "}
            in <strong class="storm-scope">{scope}</strong>
          </>
        ) : null}{" "}
        · {members.length} alerts on this page
        {cause ? (
          <>
            {" "}
            · cause: <strong>{cause.title}</strong>
          </>
        ) : null}
        {/* The cause's own title said again is no news; a different upstream (named by a label) is. */}
        {upstream && upstream !== cause?.title ? (
          <span class="muted"> · likely upstream: {upstream}</span>
        ) : null}{" "}
        <button type="button" class="link" onClick={() => setQuery({ storm_id: stormId, status: null })}>
          Whole storm
        </button>
      </td>
    </tr>
  );
}

function AlertRow(props: {
  alert: Alert;
  inStorm: boolean;
  index: number;
  selected: boolean;
  resolvedTab: boolean;
}) {
  const { alert } = props;
  return (
    <tr
      data-row={props.index}
      class={`alert-row${props.selected ? " selected" : ""}${props.inStorm ? " in-storm" : ""}`}
      aria-selected={props.selected}
    >
      <td>
        <Severity value={alert.signal_severity} />
      </td>
      <td>
        <Impact score={alert.impact_score} />
      </td>
      <td class="title-cell">
        {props.inStorm ? <span class={`role role-${alert.alert_role}`}>{alert.alert_role}</span> : null}
        <Link href={alertHref(alert)} class="alert-title">
          {alert.title || alert.external_uid}
        </Link>
        {alert.short_summary ? <div class="muted small clamp">{alert.short_summary}</div> : null}
        <div class="narrow muted small">
          {alert.source_type}
          {alert.integration_name ? ` / ${alert.integration_name}` : ""} ·{" "}
          <Attention value={alert.attention} />
        </div>
      </td>
      <td class="wide">
        <Attention value={alert.attention} />
      </td>
      <td class="wide muted">
        {alert.source_type}
        {alert.integration_name ? <div class="small">{alert.integration_name}</div> : null}
      </td>
      <td>
        <Time at={props.resolvedTab ? alert.resolved_at : alert.triggered_at} />
        {alert.refire_count > 0 ? <div class="small muted">refired {alert.refire_count}×</div> : null}
      </td>
    </tr>
  );
}

function Pager(props: {
  page: number;
  totalPages: number;
  total: number;
  exact: boolean;
  rows: number;
  pageSize: number;
}) {
  const count = props.exact ? props.total.toLocaleString() : `${props.total.toLocaleString()}+`;
  const pages = props.exact ? props.totalPages.toLocaleString() : `${props.totalPages.toLocaleString()}+`;
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        disabled={props.page <= 1}
        onClick={() => setQuery({ page: String(props.page - 1) })}
      >
        ← Previous
      </button>
      <span>
        Page {props.page} of {pages} · <strong class="total">{count}</strong>{" "}
        {props.exact && props.total === 1 ? "alert" : "alerts"}
      </span>
      <button
        type="button"
        // A short page is the last one, whatever a capped count says.
        disabled={(props.exact && props.page >= props.totalPages) || props.rows < props.pageSize}
        onClick={() => setQuery({ page: String(props.page + 1) })}
      >
        Next →
      </button>
    </nav>
  );
}

/** The URL of this view at another page (page 1 is the URL without one). */
const pageHref = (page: number) => queryHref({ page: page > 1 ? String(page) : null });

/** A page number past the last page (an old link, a list that shrank): the way back. */
function PastTheEnd(props: { page: number; totalPages: number; total: number; exact: boolean }) {
  const first = <Link href={pageHref(1)}>the first page</Link>;
  const last = (what: string) => <Link href={pageHref(props.totalPages)}>{what}</Link>;
  return (
    <Empty title={`Page ${props.page} is past the end of this list.`}>
      {props.total === 0 ? (
        <>No alerts match: go to {first}.</>
      ) : !props.exact ? (
        // Counting stopped at its limit, so the capped page count is only a lower bound: the last
        // page with alerts is at least that and before this one. The page before is the one a walk
        // with Next came from.
        <>
          {props.total.toLocaleString()}+ alerts match: go back to{" "}
          <Link href={pageHref(props.page - 1)}>page {(props.page - 1).toLocaleString()}</Link> or {first}.
        </>
      ) : props.totalPages > 1 ? (
        <>
          {props.total.toLocaleString()} alerts on {props.totalPages.toLocaleString()} pages: go to{" "}
          {last(`the last page (${props.totalPages.toLocaleString()})`)} or {first}.
        </>
      ) : (
        <>
          {props.total.toLocaleString()} {props.total === 1 ? "alert" : "alerts"}, all on one page: go to{" "}
          {first}.
        </>
      )}
    </Empty>
  );
}

function NoAlerts({ status, filtered }: { status: Status; filtered: boolean }) {
  if (filtered)
    return (
      <Empty title="No alerts match these filters.">
        <button
          type="button"
          class="link"
          onClick={() => navigate(status === "active" ? "/alerts" : `/alerts?status=${status}`)}
        >
          Clear the filters
        </button>
      </Empty>
    );
  if (status === "ignored")
    return <Empty title="No ignored alerts.">Alerts you ignore from an alert's page are listed here.</Empty>;
  if (status === "resolved")
    return (
      <Empty title="No resolved alerts yet.">Alerts move here when their source reports them resolved.</Empty>
    );
  return (
    <Empty title="No active alerts. All quiet.">
      Not expecting quiet? Check that your monitoring posts to a trigger URL on the{" "}
      <Link href="/registrations">Sources</Link> page.
    </Empty>
  );
}
