// One alert, by uuid or external_uid: triage first, then fields, labels, links, storm, history and
// the raw payload; ignore (with a reason) and un-ignore; an analyst's attention (with why);
// Investigate when this Vigil investigates.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { type Alert, api, type Schemas, unwrap } from "../api/client.ts";
import type { Caller } from "../app.tsx";
import { Link, navigate } from "../router.tsx";
import {
  ATTENTION_LABEL,
  Attention,
  CopyButton,
  Empty,
  ErrorBox,
  Impact,
  Loading,
  Severity,
  StaleNote,
  sendOnEnter,
  Time,
  unreadable,
  useTitle,
} from "../ui.tsx";

/**
 * Whether an answer is an alert, in the parts the page reads without a check. A path of its own
 * under /alerts/ answers something else with a 200 (/alerts/webhook: the registrations, an array).
 */
function isAlert(value: unknown): value is Alert {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const alert = value as Record<string, unknown>;
  return (
    typeof alert.id === "string" &&
    typeof alert.labels === "object" &&
    alert.labels !== null &&
    Array.isArray(alert.links)
  );
}

export function AlertPage({ id, caller }: { id: string; caller: Caller }) {
  const alert = useQuery({
    queryKey: ["alert", id],
    queryFn: async () => {
      const answer: unknown = unwrap(
        await api.GET("/app/sre/api/v1/alerts/{id}", { params: { path: { id } } }),
      );
      if (!isAlert(answer)) throw new Error(`"${id}" is not an alert's id or external_uid.`);
      return answer;
    },
    refetchInterval: 15_000,
  });
  const history = useQuery({
    queryKey: ["alert-history", id],
    queryFn: async () => {
      const answer = unwrap(
        await api.GET("/app/sre/api/v1/alerts/{id}/history", { params: { path: { id } } }),
      );
      if (!Array.isArray(answer?.events)) throw new Error(`"${id}" has no alert history.`);
      return answer;
    },
    refetchInterval: 15_000,
  });
  useTitle(alert.data ? `Alert ${alert.data.title || alert.data.external_uid}` : "Alert");
  if (alert.isPending) return <Loading />;
  // A failed refresh keeps the alert on screen (and any half-filled form), marked old: only a first
  // load that failed, or an alert deleted since, has nothing to show but the error.
  const a = alert.data;
  if (!a || unreadable(alert))
    return (
      <>
        <ErrorBox error={alert.error} />
        <Empty title="This alert could not be shown.">
          <Link href="/alerts">Back to the alert console</Link>
        </Empty>
      </>
    );
  const overridden = history.data ? analystOverride(history.data.events) : null;
  const canWrite = caller.scopes.includes("sre_alerts_write");
  // Reading an investigation needs less than starting one: the link is for every key that may read it.
  const readsInvestigations =
    caller.features.investigations && caller.scopes.includes("sre_investigations_read");
  return (
    <article class="alert-page">
      <p class="crumbs">
        <Link href="/alerts">← Alerts</Link>
      </p>
      <StaleNote read={alert} />
      <header class="alert-head">
        <Severity value={a.signal_severity} />
        <h1>{a.title || a.external_uid}</h1>
        <span class={`status status-${a.status}`}>{a.status}</span>
      </header>
      <div class="alert-actions">
        {canWrite ? <IgnoreControl alert={a} /> : null}
        {canWrite ? <AttentionControl alert={a} /> : null}
        {canWrite && a.status !== "resolved" ? <ClassifyAgainButton alert={a} /> : null}
        {caller.features.investigate && caller.scopes.includes("sre_investigations_write") ? (
          <InvestigateButton alert={a} />
        ) : null}
        {a.investigation && readsInvestigations ? (
          <Link href={`/investigations/${a.investigation.id}`} class="small latest-investigation">
            Latest investigation ({a.investigation.status})
          </Link>
        ) : null}
      </div>

      <div class="grid">
        <section class="card">
          <h2>Triage</h2>
          <p>
            <Attention value={a.attention} /> <span class="muted small">analysis {a.analysis_status}</span>
            {overridden ? <span class="muted small"> · set by an analyst</span> : null}
          </p>
          {a.attention_reason ? <p class="attention-reason-text">{a.attention_reason}</p> : null}
          {overridden && (a.short_summary || overridden.attention) ? (
            // The analyst's attention stands: what the classifier said is history, not the verdict.
            <div class="superseded muted">
              <p class="small">
                Classifier said (before the analyst's attention):{" "}
                {overridden.attention ? <Attention value={overridden.attention} /> : null}
                {overridden.reason ? <> “{overridden.reason}”</> : null}
              </p>
              {a.short_summary ? <p class="summary-text">{a.short_summary}</p> : null}
            </div>
          ) : a.short_summary ? (
            <p class="summary-text">{a.short_summary}</p>
          ) : null}
          {a.initial_investigation ? (
            <>
              <h3>Initial investigation</h3>
              <pre class="prose">{a.initial_investigation}</pre>
            </>
          ) : null}
          {a.analysis_status === "none" ||
          a.analysis_status === "queued" ||
          a.analysis_status === "running" ? (
            <p class="muted small">Triage appears here once the analysis has run.</p>
          ) : null}
          {a.ignore_reason ? (
            <p>
              <strong>Ignored:</strong> {a.ignore_reason}
            </p>
          ) : null}
        </section>

        <section class="card">
          <h2>Impact</h2>
          <Impact score={a.impact_score} />
          {a.impact_explanation ? <p class="small">{a.impact_explanation}</p> : null}
          {a.storm_id ? (
            <>
              <h3>Storm</h3>
              <p>
                This alert is the <strong>{a.alert_role}</strong> in a storm
                {a.likely_upstream ? (
                  <>
                    ; likely upstream: <strong>{a.likely_upstream}</strong>
                  </>
                ) : null}
                . <Link href={`/alerts?storm_id=${a.storm_id}`}>See the whole storm</Link>
              </p>
            </>
          ) : null}
        </section>
      </div>

      <section class="card">
        <h2>Fields</h2>
        <dl class="fields">
          <Field name="Source">
            {a.source_type}
            {a.integration_name ? ` / ${a.integration_name}` : ""}{" "}
            {a.ingested_via ? <span class="muted">({a.ingested_via})</span> : null}
          </Field>
          <Field name="External id">
            <code>{a.external_uid}</code>
          </Field>
          <Field name="Alert id">
            <code>{a.id}</code>
          </Field>
          <Field name="Source severity">
            {a.source_severity || "—"} <span class="muted">(priority P{a.display_priority})</span>
          </Field>
          <Field name="Triggered">
            <Time at={a.triggered_at} />
          </Field>
          <Field name="First seen">
            <Time at={a.created_at} />
          </Field>
          <Field name="Resolved">
            <Time at={a.resolved_at} />
          </Field>
          <Field name="Refired">
            {a.refire_count}{" "}
            {a.last_resolved_at ? (
              <span class="muted">
                (last resolved <Time at={a.last_resolved_at} />)
              </span>
            ) : null}
          </Field>
        </dl>
        {a.description ? <pre class="prose">{a.description}</pre> : null}
      </section>

      <section class="card">
        <h2>Labels</h2>
        {Object.keys(a.labels).length === 0 ? (
          <p class="muted">No labels.</p>
        ) : (
          <ul class="labels">
            {/* Plain text, not links: no list filter searches labels (q is title and description). */}
            {Object.entries(a.labels).map(([name, value]) => (
              <li key={name} class="label">
                <span class="label-chip">
                  <span class="label-name">{name}</span>=<span class="label-value">{value}</span>
                </span>
                <CopyButton text={`${name}=${value}`} label="Copy" title={`Copy ${name}=${value}`} />
              </li>
            ))}
          </ul>
        )}
        {a.links.length > 0 ? (
          <>
            <h3>Links</h3>
            <ul class="links">
              {a.links.map((link) => (
                <li key={link.url}>
                  <span class="muted">{link.kind}</span>{" "}
                  {/^https?:\/\//.test(link.url) ? (
                    <a href={link.url} target="_blank" rel="noopener noreferrer">
                      {link.url}
                    </a>
                  ) : (
                    <code>{link.url}</code>
                  )}
                </li>
              ))}
            </ul>
          </>
        ) : null}
      </section>

      <section class="card">
        <h2>History</h2>
        {/* The alert's note above says when both are old; the history fails alone rarely. */}
        {history.data === undefined ? (
          <ErrorBox error={history.error} />
        ) : alert.error == null ? (
          <StaleNote read={history} />
        ) : null}
        {history.data ? (
          <ol class="timeline">
            {history.data.events.map((event) => (
              <li key={event.seq} class={`event event-${event.kind}`}>
                <span class="event-kind">{event.kind}</span> <Time at={event.at} />{" "}
                <span class="muted small">
                  by {event.actor}
                  {event.status_before && event.status_before !== event.status_after
                    ? ` · ${event.status_before} → ${event.status_after}`
                    : ""}
                </span>
                <EventDetail detail={event.detail} />
              </li>
            ))}
          </ol>
        ) : null}
      </section>

      <section class="card">
        <h2>Raw payload</h2>
        <RawPayload text={a.raw_payload ?? null} />
      </section>
    </article>
  );
}

/**
 * When an analyst's attention stands over the classifier's (their newest attention is later than the
 * classifier's newest decision), the classifier's last say: its attention and reason (empty when
 * it has not classified). Null when the classifier's attention is the current one.
 */
function analystOverride(
  events: { seq: number; kind: string; detail: Record<string, unknown> }[],
): { attention: string | null; reason: string | null } | null {
  let operator = false;
  let classifier: { attention: string | null; reason: string | null } = { attention: null, reason: null };
  for (const event of [...events].sort((x, y) => x.seq - y.seq)) {
    const changes = event.detail.changes as Record<string, unknown> | undefined;
    if (event.kind === "triaged" && textOf(changes?.attention)) operator = true;
    if (event.kind === "classified") {
      classifier = { attention: textOf(event.detail.attention), reason: textOf(event.detail.reason) };
      // A classification already queued keeps the analyst's attention (operator_attention_kept).
      if (event.detail.operator_attention_kept !== true) operator = false;
    }
  }
  return operator ? classifier : null;
}

const textOf = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);

/**
 * What a history event's detail says: the attention and reason of a classification
 * (`detail.attention`, `detail.reason`), or what an operator changed (`detail.changes`: attention,
 * its reason, the ignore reason).
 */
function EventDetail({ detail }: { detail: Record<string, unknown> }) {
  const changes = (
    typeof detail.changes === "object" && detail.changes !== null ? detail.changes : {}
  ) as Record<string, unknown>;
  const attention = textOf(changes.attention) ?? textOf(detail.attention);
  const reasons = [
    ...new Set(
      [detail.reason, changes.attention_reason, changes.ignore_reason]
        .map(textOf)
        .filter((reason): reason is string => reason !== null),
    ),
  ];
  if (!attention && reasons.length === 0) return null;
  return (
    <div class="small event-detail">
      {attention ? (
        <div>
          attention <Attention value={attention} />
        </div>
      ) : null}
      {reasons.map((reason) => (
        <div key={reason}>“{reason}”</div>
      ))}
    </div>
  );
}

function Field({ name, children }: { name: string; children: preact.ComponentChildren }) {
  return (
    <>
      <dt>{name}</dt>
      <dd>{children}</dd>
    </>
  );
}

function RawPayload({ text }: { text: string | null }) {
  if (!text) return <p class="muted">The source sent no payload this Vigil kept.</p>;
  let pretty = text;
  try {
    pretty = JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    // Not JSON: shown as the source sent it.
  }
  return <pre class="raw">{pretty}</pre>;
}

type AlertChange = Schemas["AlertPatch"];

/** A PATCH of the alert; every cached copy of it takes the answer, and `done` runs after. */
function useAlertUpdate(alert: Alert, done: () => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: AlertChange) =>
      unwrap(await api.PATCH("/app/sre/api/v1/alerts/{id}", { params: { path: { id: alert.id } }, body })),
    onSuccess: (updated) => {
      // The page reads the alert under the id in its URL, the uuid or the external_uid: every
      // cached copy of this alert takes the answer, whichever id opened it.
      client.setQueriesData<Alert>(
        {
          queryKey: ["alert"],
          predicate: (query) => (query.state.data as Alert | undefined)?.id === updated.id,
        },
        updated,
      );
      client.invalidateQueries({ queryKey: ["alert-history"] });
      client.invalidateQueries({ queryKey: ["alerts"] });
      done();
    },
  });
}

/** A form that takes the focus when it opens and gives it back to its button when it closes. */
function useOpenForm<T extends HTMLElement>(changed: unknown) {
  const [open, setOpen] = useState(false);
  const field = useRef<T>(null);
  const button = useRef<HTMLButtonElement>(null);
  // Before the next paint, so that keys typed at once land in the field.
  const refocus = useRef(false);
  useLayoutEffect(() => {
    if (open) field.current?.focus();
    else if (refocus.current) button.current?.focus();
    refocus.current = false;
  }, [open, changed]);
  const close = () => {
    refocus.current = true;
    setOpen(false);
  };
  return { open, setOpen, close, field, button };
}

function IgnoreControl({ alert }: { alert: Alert }) {
  const [reason, setReason] = useState("");
  // When the form closes (cancelled, or the alert changed state), the button takes the focus back.
  const { open, setOpen, close, field: reasonInput, button } = useOpenForm<HTMLInputElement>(alert.status);
  const update = useAlertUpdate(alert, close);
  if (alert.status === "ignored")
    return (
      <>
        <button
          type="button"
          ref={button}
          onClick={() => update.mutate({ status: "active" })}
          disabled={update.isPending}
        >
          Un-ignore
        </button>
        <ErrorBox error={update.error} />
      </>
    );
  if (alert.status !== "active") return null;
  if (!open)
    return (
      <button
        type="button"
        ref={button}
        onClick={() => {
          // A fresh form each time, as Set attention… has: a cancelled reason is not the next one's.
          setReason("");
          setOpen(true);
        }}
      >
        Ignore…
      </button>
    );
  return (
    <form
      class="ignore-form"
      onKeyDown={(event) => {
        if (event.key === "Escape") close();
      }}
      onSubmit={(event) => {
        event.preventDefault();
        update.mutate({ status: "ignored", ignore_reason: reason.trim() || null });
      }}
    >
      <input
        name="ignore_reason"
        class="ignore-reason"
        aria-label="Why ignore this alert"
        placeholder="Why? (e.g. known maintenance until 14:00)"
        maxLength={2000}
        value={reason}
        ref={reasonInput}
        onInput={(event) => setReason(event.currentTarget.value)}
      />
      <FormEnd submit="Ignore" pending={update.isPending} error={update.error} onCancel={close} />
    </form>
  );
}

/** A form's submit and cancel buttons, and the error of its last submit. */
function FormEnd(props: { submit: string; pending: boolean; error: unknown; onCancel: () => void }) {
  return (
    <>
      <button type="submit" disabled={props.pending}>
        {props.submit}
      </button>
      <button type="button" class="ghost" onClick={props.onCancel}>
        Cancel
      </button>
      <ErrorBox error={props.error} />
    </>
  );
}

/** An analyst's attention, with why: it stands for the alert's episode (docs/console.md). */
function AttentionControl({ alert }: { alert: Alert }) {
  const [attention, setAttention] = useState(alert.attention);
  const [reason, setReason] = useState("");
  const { open, setOpen, close, field, button } = useOpenForm<HTMLSelectElement>(alert.attention);
  const update = useAlertUpdate(alert, close);
  if (!open)
    return (
      <button
        type="button"
        ref={button}
        onClick={() => {
          setAttention(alert.attention);
          setReason("");
          setOpen(true);
        }}
      >
        Set attention…
      </button>
    );
  return (
    <form
      class="attention-form"
      onKeyDown={(event) => {
        if (event.key === "Escape") close();
      }}
      onSubmit={(event) => {
        event.preventDefault();
        // Without a reason the API records "set by an operator".
        update.mutate(reason.trim() ? { attention, attention_reason: reason.trim() } : { attention });
      }}
    >
      <select
        name="attention"
        aria-label="Attention"
        value={attention}
        ref={field}
        onChange={(event) => setAttention(event.currentTarget.value as Alert["attention"])}
        onKeyDown={sendOnEnter}
      >
        {Object.entries(ATTENTION_LABEL).map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <input
        name="attention_reason"
        class="attention-reason"
        aria-label="Why this attention"
        placeholder="Why? (e.g. flaps during every deploy)"
        maxLength={5000}
        value={reason}
        onInput={(event) => setReason(event.currentTarget.value)}
      />
      <FormEnd submit="Save" pending={update.isPending} error={update.error} onCancel={close} />
    </form>
  );
}

/** Hands the alert back to the classifier: after a failed analysis, or to undo an analyst's attention. */
function ClassifyAgainButton({ alert }: { alert: Alert }) {
  const client = useQueryClient();
  const again = useMutation({
    mutationFn: async () =>
      unwrap(await api.POST("/app/sre/api/v1/alerts/{id}/classify", { params: { path: { id: alert.id } } })),
    onSuccess: () => {
      client.invalidateQueries({ queryKey: ["alert"] });
      client.invalidateQueries({ queryKey: ["alert-history"] });
      client.invalidateQueries({ queryKey: ["alerts"] });
    },
  });
  return (
    <>
      <button type="button" onClick={() => again.mutate()} disabled={again.isPending}>
        Classify again
      </button>
      <ErrorBox error={again.error} />
    </>
  );
}

function InvestigateButton({ alert }: { alert: Alert }) {
  // The first press starts one; a repeat answers the newest. Either way, open it.
  const start = useMutation({
    mutationFn: async () =>
      unwrap(
        await api.POST("/app/sre/api/v1/alerts/{id}/investigate", {
          params: { path: { id: alert.id } },
          body: { force_new: false, remediation_requested: false },
        }),
      ),
    onSuccess: (answer) => navigate(`/investigations/${answer.investigation.id}`),
  });
  return (
    <>
      <button type="button" onClick={() => start.mutate()} disabled={start.isPending}>
        Investigate
      </button>
      <ErrorBox error={start.error} />
    </>
  );
}
