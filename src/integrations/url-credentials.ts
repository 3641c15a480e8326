// User info in an integration's url (https://user:password@host) is a credential, and credentials
// are write-only: a write moves it into the sealed credentials, and a row stored with it before is
// read as if that had happened, so neither the API nor a link built from the url shows it.
// An ssh:// remote's user name (git@) is its login, not a secret: it stays in the url.

export interface SplitUrl {
  /** The url without its user info. */
  url: string;
  /** The user info as the type's credentials; null when the url had none. */
  credentials: Record<string, string> | null;
  /** A password in an ssh:// url, which ssh never uses (it signs in with a key). */
  sshPassword: boolean;
}

const decode = (part: string) => {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
};

/**
 * Splits the user info off `url`. It becomes `username` and `password` (basic auth); for a git
 * remote `username` and `token`, the credentials git sends as basic auth. The rest of the url is
 * kept as written where it splits cleanly (a client comparing what it wrote sees no other change).
 */
export function splitUrlCredentials(url: string, type: string): SplitUrl {
  const parsed = URL.canParse(url) ? new URL(url) : null;
  if (!parsed || (parsed.username === "" && parsed.password === "")) {
    return { url, credentials: null, sshPassword: false };
  }
  const { username, password } = parsed;
  const ssh = parsed.protocol === "ssh:";
  const login = ssh && username ? `${username}@` : "";
  // The authority ends at the first / ? # (or \, which http(s) reads as /); its last @ ends the user info.
  let stripped = url.replace(/^([^:/?#]+:\/\/)[^/?#\\]*@/, `$1${login}`);
  const left = URL.canParse(stripped) ? new URL(stripped) : null;
  // Should the text not split cleanly, the parsed url without its user info (normalized).
  if (!(left?.password === "" && left.username === (ssh ? username : ""))) {
    parsed.password = "";
    if (!ssh) parsed.username = "";
    stripped = parsed.href;
  }
  if (ssh) return { url: stripped, credentials: null, sshPassword: password !== "" };
  const secret = password === "" ? {} : { [type === "git" ? "token" : "password"]: decode(password) };
  return { url: stripped, credentials: { username: decode(username), ...secret }, sshPassword: false };
}
