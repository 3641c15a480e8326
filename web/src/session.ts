// The signed-in key lives in sessionStorage: it is gone when the tab closes, is never sent to a
// server other than this one, and needs no server-side session. The chosen org and theme are kept too.
const KEY = "vigil.apiKey";
const ORG = "vigil.orgId";
const THEME = "vigil.theme";

export const session = {
  key: (): string | null => sessionStorage.getItem(KEY),
  signIn(key: string) {
    sessionStorage.setItem(KEY, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(ORG);
  },
  /** The selected org, or null for the key's personal namespace. */
  org: (): string | null => sessionStorage.getItem(ORG),
  setOrg(orgId: string | null) {
    if (orgId) sessionStorage.setItem(ORG, orgId);
    else sessionStorage.removeItem(ORG);
  },
};

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
