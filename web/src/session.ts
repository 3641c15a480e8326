// The signed-in key lives in sessionStorage: it is gone when the tab closes, is never sent to a
// server other than this one, and needs no server-side session. The chosen org, the theme and
// what the key may read are kept too.
const KEY = "vigil.apiKey";
const ORG = "vigil.orgId";
const READS = "vigil.reads";
const THEME = "vigil.theme";

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn(key: string) {
    sessionStorage.setItem(KEY, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(ORG);
    sessionStorage.removeItem(READS);
  },
  /**
   * What the key may read, as GET /api/v1/me last said in this tab (null before it answered): a
   * reload starts a read it allows beside asking again, and none it would refuse.
   */
  reads(): KeyReads | null {
    try {
      return JSON.parse(sessionStorage.getItem(READS) ?? "null") as KeyReads | null;
    } catch {
      return null;
    }
  },
  setReads(caller: { scopes: string[]; orgs: { id: string }[] }) {
    const reads: KeyReads = { scopes: caller.scopes, orgIds: caller.orgs.map((org) => org.id) };
    sessionStorage.setItem(READS, JSON.stringify(reads));
  },
  /** The selected org, or null for the key's personal namespace. */
  org: (): string | null => sessionStorage.getItem(ORG),
  setOrg(orgId: string | null) {
    if (orgId) sessionStorage.setItem(ORG, orgId);
    else sessionStorage.removeItem(ORG);
  },
};

/** The key's scopes and the orgs it may act in. */
export type KeyReads = { scopes: string[]; orgIds: string[] };

export type Theme = "light" | "dark";

/** The theme chosen here, else the system's. Kept in localStorage: it is not a secret. */
export function initialTheme(): Theme {
  const chosen = localStorage.getItem(THEME);
  if (chosen === "light" || chosen === "dark") return chosen;
  return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

export function applyTheme(theme: Theme, remember: boolean) {
  document.documentElement.dataset.theme = theme;
  if (remember) localStorage.setItem(THEME, theme);
}
