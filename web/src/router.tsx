// A small router over the History API: the URL is the state, so every screen has a shareable link.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();
const notify = () => {
  for (const listener of listeners) listener();
};
window.addEventListener("popstate", notify);

export function navigate(to: string, options: { replace?: boolean } = {}) {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
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

/** Goes to queryHref(changes). */
export function setQuery(changes: Record<string, string | null | undefined>, options = { replace: true }) {
  navigate(queryHref(changes), options);
}

export function Link(props: { href: string; class?: string; children: ComponentChildren; title?: string }) {
  return (
    <a
      href={props.href}
      class={props.class}
      title={props.title}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}
