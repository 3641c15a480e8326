// The shell: sign-in gate, navigation, org switcher, theme, and the screen the URL names.
import { QueryClient, QueryClientProvider, useQuery } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "preact/hooks";
import { type Answer, api, unwrap, whenSignedOut } from "./api/client.ts";
import { AgentsPage } from "./pages/agents.tsx";
import { AlertPage } from "./pages/alert.tsx";
import { AlertsPage, alertListQuery } from "./pages/alerts.tsx";
import { AskPage } from "./pages/ask.tsx";
import { InvestigationsPage } from "./pages/investigations.tsx";
import { RegistrationsPage } from "./pages/registrations.tsx";
import { SessionsPage } from "./pages/sessions.tsx";
import { SignIn } from "./pages/sign-in.tsx";
import { WorkflowsPage } from "./pages/workflows.tsx";
import { Link, navigate, ORG_PARAM, queryHref, urlOrg, useLocation, withOrg } from "./router.tsx";
import { applyTheme, initialTheme, type KeyReads, session, type Theme } from "./session.ts";
import { Empty, ErrorBox, Loading, useTitle } from "./ui.tsx";

export type Caller = Answer<"getCaller">;

const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 } },
});

/** The screens; one that needs an optional capability is listed only when this Vigil serves it. */
const NAV: { href: string; label: string; scope: string; feature?: keyof Caller["features"] }[] = [
  { href: "/alerts", label: "Alerts", scope: "sre_alerts_read" },
  {
    href: "/investigations",
    label: "Investigations",
    scope: "sre_investigations_read",
    feature: "investigations",
  },
  { href: "/registrations", label: "Sources", scope: "sre_alerts_read" },
  { href: "/workflows", label: "Workflows", scope: "aios_automation_read" },
  { href: "/agents", label: "Agents", scope: "aios_automation_read" },
  { href: "/ask", label: "Ask", scope: "aios_automation_write", feature: "ask" },
  { href: "/sessions", label: "Sessions", scope: "aios_automation_read", feature: "sessions" },
];
type NavItem = (typeof NAV)[number];

/** The screens this Vigil serves, whatever the key. */
const served = (caller: Caller) => NAV.filter((item) => !item.feature || caller.features[item.feature]);
/** The screens the key may read, in menu order: the first is where the console opens. */
const readable = (caller: Caller) => served(caller).filter((item) => caller.scopes.includes(item.scope));

/** Whether the key may read the alert list in `org` (null: the personal namespace, always open). */
const mayListAlerts = (reads: KeyReads, org: string | null) =>
  reads.scopes.includes("sre_alerts_read") && (org === null || reads.orgIds.includes(org));

export function App() {
  const [signedIn, setSignedIn] = useState(Boolean(session.key()));
  // Why the console returned to sign-in on its own: said there, not left to guess.
  const [notice, setNotice] = useState<string | null>(null);
  const signedInNow = useRef(signedIn);
  signedInNow.current = signedIn;
  const [theme, setTheme] = useState<Theme>(initialTheme);
  useEffect(() => applyTheme(theme, false), []);
  useEffect(() => {
    whenSignedOut(() => {
      // A key refused at sign-in is the form's own error; one that stops working later is news.
      if (signedInNow.current)
        setNotice("Your API key stopped working (revoked, or no longer accepted). Sign in again.");
      session.signOut();
      queryClient.clear();
      setSignedIn(false);
    });
  }, []);
  const toggleTheme = () => {
    const next = theme === "dark" ? "light" : "dark";
    applyTheme(next, true);
    setTheme(next);
  };
  return (
    <QueryClientProvider client={queryClient}>
      {signedIn ? (
        <Shell
          theme={theme}
          toggleTheme={toggleTheme}
          signOut={() => {
            setNotice(null);
            session.signOut();
            queryClient.clear();
            setSignedIn(false);
            navigate("/signin", { org: null });
          }}
        />
      ) : (
        <SignIn
          notice={notice}
          onSignedIn={() => {
            setNotice(null);
            // The shell takes /signin (and /) to the first screen the key may read, once it knows them.
            setSignedIn(true);
          }}
        />
      )}
    </QueryClientProvider>
  );
}

function Shell(props: { theme: Theme; toggleTheme: () => void; signOut: () => void }) {
  // The URL names the org (`org=`; none for the personal namespace), so a link copied inside an org
  // opens in it. On load, a URL without one keeps the org this tab chose before (session storage),
  // and shows it in the URL; an org in the URL wins. From then on the URL alone says.
  useState(() => {
    const kept = session.org();
    if (kept && !urlOrg()) history.replaceState(null, "", withOrg(location.pathname + location.search, kept));
  });
  const { path, query } = useLocation();
  const org = query.get(ORG_PARAM)?.toLowerCase() || null;
  // The API client sends the stored org as `orgId`; another org's answers are not this one's.
  if (session.org() !== org) {
    session.setOrg(org);
    queryClient.removeQueries({ predicate: (cached) => cached.queryKey[0] !== "caller" });
  }
  const caller = useQuery({
    queryKey: ["caller"],
    queryFn: async () => unwrap(await api.GET("/api/v1/me")),
    staleTime: 60_000,
  });
  useEffect(() => {
    if (caller.data) session.setReads(caller.data);
  }, [caller.data]);
  const screens = caller.data ? readable(caller.data) : [];
  // Where the console opens: the first screen the key may read, not one that would only say 403.
  const home = screens[0] ?? null;
  useEffect(() => {
    if ((path === "/" || path === "/signin") && home) navigate(home.href, { replace: true });
  }, [path, home?.href]);
  // A new screen takes the focus, so the next Tab starts at its content, not wherever the control
  // that led there was (it is gone). A change of filters (the query alone) keeps the focus.
  const main = useRef<HTMLElement>(null);
  const shownPath = useRef(path);
  useEffect(() => {
    if (path === shownPath.current) return;
    shownPath.current = path;
    main.current?.focus({ preventScroll: true });
  }, [path]);

  // A link to the alert list is the page most often opened cold: ask for the list beside the caller
  // instead of after it, one round trip less before the first row. Only when this tab already knows
  // the key may read it in this org (from sign-in, or the caller's last answer): a list it may not
  // read would be a 403 or a 404 asked for nothing, the screen saying so itself.
  useEffect(() => {
    const reads = session.reads();
    if (location.pathname === "/alerts" && reads && mayListAlerts(reads, org))
      void queryClient.prefetchQuery(alertListQuery(new URLSearchParams(location.search)));
  }, []);

  // The same screen in the other org: a new history entry, so Back returns to the previous one.
  const switchOrg = (orgId: string) => navigate(queryHref({ [ORG_PARAM]: orgId || null }), { org: null });
  // An org the key may not act in (or none at all): said, with the way to the personal namespace.
  const refused = caller.data && org !== null && !caller.data.orgs.some((o) => o.id === org);
  return (
    <div class="shell">
      <button type="button" class="skip" onClick={() => main.current?.focus()}>
        Skip to content
      </button>
      <header class="top">
        <Link href={home?.href ?? "/"} class="brand">
          <span class="dot" aria-hidden="true" /> Vigil
        </Link>
        <nav>
          {/* A screen the key may not read is not offered. */}
          {screens.map((item) => (
            <Link key={item.href} href={item.href} class={path.startsWith(item.href) ? "active" : ""}>
              {item.label}
            </Link>
          ))}
        </nav>
        <div class="top-right">
          {caller.data && caller.data.orgs.length > 0 ? (
            <label class="org">
              <span class="sr-only">Organization</span>
              <select
                aria-label="Organization"
                value={org ?? ""}
                onChange={(event) => switchOrg(event.currentTarget.value)}
              >
                <option value="">Personal</option>
                {caller.data.orgs.map((o) => (
                  <option key={o.id} value={o.id}>
                    {o.name}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <button type="button" class="ghost" onClick={props.toggleTheme} title="Switch theme">
            {props.theme === "dark" ? "Light" : "Dark"}
          </button>
          <button type="button" class="ghost" onClick={props.signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main key={org ?? "personal"} id="main" ref={main} tabIndex={-1}>
        {caller.isPending ? <Loading /> : caller.error ? <ErrorBox error={caller.error} /> : null}
        {refused ? (
          <OrgRefused org={org} openPersonal={() => switchOrg("")} />
        ) : caller.data ? (
          <Screen path={path} caller={caller.data} home={home} />
        ) : null}
      </main>
    </div>
  );
}

function OrgRefused({ org, openPersonal }: { org: string; openPersonal: () => void }) {
  useTitle("Organization not available");
  return (
    <Empty title={`This link is for the organization ${org}, which this key may not act in.`}>
      The organization does not exist, or this key is not one of its members.{" "}
      <button type="button" class="link" onClick={openPersonal}>
        Open it in your personal namespace
      </button>
    </Empty>
  );
}

/**
 * The screen the path names. A path the console does not have (a mistyped or outdated link, an extra
 * part after an id) is "not available", as the server's 404 page is; a screen the key may not read
 * says which scope it needs instead of showing the API's 403 and asking again.
 */
function Screen({ path, caller, home }: { path: string; caller: Caller; home: NavItem | null }) {
  const [section = "", ...rest] = path
    .replace(/(.)\/$/, "$1")
    .slice(1)
    .split("/");
  const id = rest.length === 1 ? decodedPart(rest[0] ?? "") : "";
  // An id is one path part: /workflows/a/b names no workflow, /ask/foo no screen.
  if (rest.length > 1 || id === null || (rest.length === 1 && !WITH_ID.has(section)))
    return <NotAvailable home={home} />;
  const screen = NAV.find((item) => item.href === `/${section}`);
  if (section !== "" && section !== "signin" && (!screen || !served(caller).includes(screen)))
    return <NotAvailable home={home} />;
  if (!home) return <NoScreen caller={caller} />;
  if (!screen) return <Loading />;
  if (!caller.scopes.includes(screen.scope)) return <MayNotRead screen={screen} home={home} />;
  switch (section) {
    case "alerts":
      return id ? <AlertPage id={id} caller={caller} /> : <AlertsPage />;
    case "investigations":
      return <InvestigationsPage id={id} caller={caller} />;
    case "ask":
      return <AskPage caller={caller} />;
    case "sessions":
      return <SessionsPage id={id} caller={caller} />;
    case "registrations":
      return <RegistrationsPage caller={caller} />;
    case "workflows":
      return <WorkflowsPage name={id} caller={caller} />;
    case "agents":
      return <AgentsPage name={id} />;
    default:
      return <NotAvailable home={home} />;
  }
}

/** The screens whose path may name one thing after them (an alert, a workflow, ...). */
const WITH_ID = new Set(["alerts", "investigations", "sessions", "workflows", "agents"]);

/** A path part as text; null when it is not valid percent-encoding (a mangled link). */
function decodedPart(part: string): string | null {
  try {
    return decodeURIComponent(part);
  } catch {
    return null;
  }
}

function MayNotRead({ screen, home }: { screen: NavItem; home: NavItem }) {
  useTitle(screen.label);
  return (
    <Empty title={`This key may not read ${screen.label}.`}>
      It needs the scope <code>{screen.scope}</code>. <Link href={home.href}>Go to {home.label}</Link>
    </Empty>
  );
}

function NotAvailable({ home }: { home: NavItem | null }) {
  useTitle("Not available");
  return (
    <Empty title="This page is not available on this Vigil.">
      <Link href={home?.href ?? "/"}>Go to {home ? home.label : "the console"}</Link>
    </Empty>
  );
}

/** A key that may read none of the screens: which scopes would open which, on this Vigil. */
function NoScreen({ caller }: { caller: Caller }) {
  const byScope = new Map<string, string[]>();
  for (const item of served(caller))
    byScope.set(item.scope, [...(byScope.get(item.scope) ?? []), item.label]);
  useTitle("No screen");
  return (
    <Empty title="This key may not read any screen of the console.">
      The console needs a key with at least one of these scopes:{" "}
      {[...byScope].map(([scope, labels], index) => (
        <span key={scope}>
          {index > 0 ? ", " : ""}
          <code>{scope}</code> ({labels.join(", ")})
        </span>
      ))}
      . Sign out and sign in with such a key.
    </Empty>
  );
}
