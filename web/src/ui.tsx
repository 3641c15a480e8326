// Small pieces every screen uses: times, errors, empty states, severity and impact, copying.
import type { ComponentChildren, TargetedKeyboardEvent } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, isOutage, isUnreachable } from "./api/client.ts";

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 31_536_000],
  ["month", 2_592_000],
  ["day", 86_400],
  ["hour", 3_600],
  ["minute", 60],
  ["second", 1],
];
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((new Date(iso).getTime() - now) / 1000);
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === "second")
      return relative.format(Math.round(seconds / size), unit);
  }
  return iso;
}

/** "5 minutes ago", with the exact time (local and UTC) on hover. */
export function Time({ at }: { at: string | null | undefined }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(timer);
  }, []);
  if (!at) return <span class="muted">—</span>;
  const date = new Date(at);
  return (
    <time dateTime={at} title={`${date.toLocaleString()} (${date.toISOString()})`}>
      {relativeTime(at)}
    </time>
  );
}

export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const message = isUnreachable(error)
    ? "Vigil is not reachable: check the network, or whether Vigil is running."
    : error instanceof Error
      ? error.message
      : String(error);
  const status = error instanceof ApiError ? `${error.status}${error.code ? ` ${error.code}` : ""}: ` : "";
  return (
    <div class="error" role="alert">
      {status}
      {message}
    </div>
  );
}

/**
 * A uuid shortened for a list or a link: its last 8 characters, which are random. The first ones of
 * a UUIDv7 (alert ids) are a timestamp, the same for every alert of a burst.
 */
export const shortId = (id: string) => `…${id.slice(-8)}`;

/** 14:05:09: when the data on screen was read, to the second. */
export const clockTime = (at: number) =>
  new Date(at).toLocaleTimeString(undefined, {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
  });

/** What the server said when it answered with an error ("503 UNAVAILABLE: …"); empty without an answer. */
export const serverSaid = (error: unknown) =>
  error instanceof ApiError ? `${error.status}${error.code ? ` ${error.code}` : ""}: ${error.message}` : "";

/** A read's state as useQuery has it: its last data (kept when a refresh fails) and last error. */
type Read = { data: unknown; error: unknown; dataUpdatedAt: number };

/**
 * Whether a read has nothing to show in its error's place: its first load failed, or the thing is
 * gone (404, deleted since). A refresh that failed otherwise keeps the last answer on screen.
 */
export const unreadable = (read: Read) =>
  read.error != null &&
  (read.data === undefined || (read.error instanceof ApiError && read.error.status === 404));

/** Whether a read shows its last answer because the refresh after it failed (kept, marked old). */
export const outdated = (read: Pick<Read, "data" | "error">) => read.error != null && read.data !== undefined;

/**
 * Says that what is shown is the last answer, and since when, after a refresh failed: a page keeps
 * it (and any half-filled form) rather than trading it for the error, and the next refresh that
 * succeeds takes this away. Nothing while the last refresh succeeded, nor when `covered`: the note
 * of the page around this part already says so (one outage, one note).
 */
export function StaleNote({ read, covered = false }: { read: Read; covered?: boolean }) {
  const { error, dataUpdatedAt } = read;
  if (covered || !outdated(read)) return null;
  const said = serverSaid(error);
  const detail = said ? `Vigil answered ${said}.` : isOutage(error) ? "" : errorText(error);
  return (
    <div class="error outdated" role="alert">
      {isOutage(error) ? "Vigil is not reachable" : "This could not be refreshed"}: showing this as of{" "}
      <time dateTime={new Date(dataUpdatedAt).toISOString()}>{clockTime(dataUpdatedAt)}</time>. {detail}
      {detail ? " " : ""}It refreshes by itself once Vigil answers.
    </div>
  );
}

/** refetchInterval of a read that does not poll: after a failed refresh it asks again every 10 s. */
export const retryWhileStale = (query: { state: { data: unknown; error: unknown } }) =>
  outdated(query.state) ? 10_000 : false;

/**
 * A list Vigil did not answer (no answer, or a 502/503/504 saying it is out for now): said in plain
 * words, with the server's words and, when rows are still shown, the time they were read. `children`
 * says how the list comes back.
 */
export function Unreachable(props: { since: number | null; error: unknown; children: ComponentChildren }) {
  const { since } = props;
  const said = serverSaid(props.error);
  return (
    <div class="error unreachable" role="alert">
      {since ? (
        <>
          Vigil is not reachable: showing the list as of{" "}
          <time dateTime={new Date(since).toISOString()}>{clockTime(since)}</time>.
        </>
      ) : said ? (
        "Vigil is not available for now."
      ) : (
        "Vigil is not reachable: check the network, or whether Vigil is running."
      )}{" "}
      {said ? `Vigil answered ${said}. ` : null}
      {props.children}
    </div>
  );
}

/**
 * A list's error. Rows kept after a refresh failed for an outage are the list as of its last answer
 * (shown dimmed: class "stale" on them while outdated); any other error, or a first load that failed,
 * is said as it is.
 */
export function ListError({ read }: { read: Read }) {
  if (!isOutage(read.error) || !outdated(read)) return <ErrorBox error={read.error} />;
  return (
    <Unreachable since={read.dataUpdatedAt} error={read.error}>
      It refreshes by itself once Vigil answers.
    </Unreachable>
  );
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Names the screen in the tab's title ("Alerts · Vigil"), so tabs, bookmarks and the history list
 * tell the screens apart.
 */
export function useTitle(name: string) {
  useEffect(() => {
    document.title = `${name} · Vigil`;
  }, [name]);
}

/** What the key may not read, and the scope it would need: said in place of a part, not as a 403. */
export function NeedsScope({ what, scope }: { what: string; scope: string }) {
  return (
    <p class="muted needs-scope">
      This key may not read {what}: it needs the scope <code>{scope}</code>.
    </p>
  );
}

/**
 * Enter on a select sends its form, as it does from a text field: browsers send a form on Enter only
 * from an input, and the console's forms send with Enter wherever the focus is in them.
 */
export function sendOnEnter(event: TargetedKeyboardEvent<HTMLSelectElement>) {
  if (event.key !== "Enter" || event.isComposing) return;
  event.preventDefault();
  event.currentTarget.form?.requestSubmit();
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <strong>{title}</strong>
      {children ? <div>{children}</div> : null}
    </div>
  );
}

export function Loading() {
  return <div class="muted loading">Loading…</div>;
}

export function Severity({ value }: { value: string }) {
  return <span class={`sev sev-${value.toLowerCase()}`}>{value === "info" ? "Info" : value}</span>;
}

export function Impact({ score }: { score: number }) {
  const level = score >= 70 ? "high" : score >= 40 ? "mid" : "low";
  return (
    <span class={`impact impact-${level}`} title={`impact ${score} of 100`}>
      <span class="impact-bar" style={{ width: `${score}%` }} />
      <span class="impact-n">{score}</span>
    </span>
  );
}

export const ATTENTION_LABEL: Record<string, string> = {
  needs_attention: "Needs attention",
  needs_review: "Needs review",
  false_positive: "False positive",
  others: "Others",
};

export function Attention({ value }: { value: string }) {
  return <span class={`att att-${value}`}>{ATTENTION_LABEL[value] ?? value}</span>;
}

/**
 * Copies through the Clipboard API, or, where the browser withholds it (a console served over plain
 * http from a name other than localhost), by selecting the text in a hidden field. The focus goes
 * back where it was, so a keyboard user stays on the button.
 */
async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const focused = document.activeElement as HTMLElement | null;
    const field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.style.position = "fixed";
    field.style.opacity = "0";
    document.body.append(field);
    field.select();
    const copied = document.execCommand("copy");
    field.remove();
    focused?.focus();
    return copied;
  }
}

export function CopyButton({
  text,
  label = "Copy",
  title,
}: {
  text: string;
  label?: string;
  title?: string;
}) {
  const [outcome, setOutcome] = useState<"copied" | "failed" | null>(null);
  return (
    <button
      type="button"
      class="small"
      title={title}
      aria-label={outcome ? undefined : title}
      onClick={async () => {
        setOutcome((await copyText(text)) ? "copied" : "failed");
        setTimeout(() => setOutcome(null), 2000);
      }}
    >
      {outcome === "copied" ? "Copied" : outcome === "failed" ? "Copy failed: select the text" : label}
    </button>
  );
}
