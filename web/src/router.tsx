// A small router over the History API: the URL is the state, so every screen has a shareable link.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
window.addEventListener("popstate", notify);

/** The query parameter naming the selected org; absent for the key's personal namespace. */
export const ORG_PARAM = "org";

/** The org the URL names, or null for the personal namespace. */
export function urlOrg(): string | null {
  return new URLSearchParams(location.search).get(ORG_PARAM) || null;
}

/**
 * A console path carrying an org: `to` as it is when it names one (or `org` is null), else with
 * `org=` added. Every link and navigation goes through it, so a URL copied inside an org opens there.
 */
export function withOrg(to: string, org: string | null = urlOrg()): string {
  if (!org) return to;
  const url = new URL(to, location.origin);
  if (url.origin !== location.origin || url.searchParams.has(ORG_PARAM)) return to;
  url.searchParams.set(ORG_PARAM, org);
  return url.pathname + url.search + url.hash;
}

/** Goes to `to`, in the current org unless `to` names one or `options.org` says (null: personal). */
export function navigate(to: string, options: { replace?: boolean; org?: string | null } = {}) {
  const target = withOrg(to, "org" in options ? (options.org ?? null) : urlOrg());
  if (target === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, "", target);
  else history.pushState(null, "", target);
  notify();
}

/** The current path and query, re-rendering the caller when they change. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((tick) => tick + 1);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** This view's URL with query parameters changed (empty values removed); page resets unless given. */
export function queryHref(changes: Record<string, string | null | undefined>): string {
  const query = new URLSearchParams(location.search);
  if (!("page" in changes)) query.delete("page");
  for (const [name, value] of Object.entries(changes)) {
    if (value) query.set(name, value);
    else query.delete(name);
  }
  const search = query.toString();
  return location.pathname + (search ? `?${search}` : "");
}

/**
 * Goes to queryHref(changes), as a new history entry: a filter, a sort or a page is a view the
 * user chose, which Back returns from (replaced, Back left the console from page 2).
 */
export function setQuery(changes: Record<string, string | null | undefined>) {
  navigate(queryHref(changes));
}

export function Link(props: { href: string; class?: string; children: ComponentChildren; title?: string }) {
  const href = withOrg(props.href);
  return (
    <a
      href={href}
      class={props.class}
      title={props.title}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {props.children}
    </a>
  );
}
