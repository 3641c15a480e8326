// Every HTTP call Vigil makes to a URL a tenant chose (pull sync of an integration, the http_request
// action, and any later integration client) goes through outboundRequest, so that one set of rules
// holds for all of them:
//   - only http(s), only the hosts of the caller's allow-list; an empty integration list means any
//     host whose addresses are public (an internal address needs its host named on the list)
//   - never a link-local, cloud-metadata, unspecified, multicast or reserved address, never Vigil's
//     own listening address and port, never the database's host and port, whatever the list says
//   - the rules apply to the addresses a name resolves to, and the connection goes to the address
//     that was checked: node:http is given a `lookup` that checks before it answers, so a DNS answer
//     cannot change between the check and the connect
//   - no redirects (node:http never follows one: a 3xx is returned like any other status), a timeout
//     over the whole exchange, a size limit on the answer, the caller's abort signal
//   - errors name the request and the reason, never the answer's body
import { lookup as systemLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { networkInterfaces } from "node:os";
import type { Config } from "../../config.ts";
import { abortAfter } from "../abort.ts";
import { hostAllowed } from "./allowed-hosts.ts";

/** What the rules need from the config: Vigil's listening address and its database's. */
export type OutboundConfig = Pick<Config, "host" | "port" | "databaseUrl">;

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface OutboundPolicy {
  /** Allow-list entries (`host` or `host:port`); null: any host whose addresses are all public. */
  allowedHosts: readonly string[] | null;
  /** The setting allowedHosts comes from, named when a host is refused. */
  allowedHostsSetting: string;
  config: OutboundConfig;
  /** The system resolver unless given (tests map names of their own). */
  resolve?: Resolver;
}

export interface OutboundRequest {
  url: URL;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  maxResponseBytes: number;
  /** An answer over maxResponseBytes: an error ("fail"), or its first maxResponseBytes ("truncate"). */
  oversize: "fail" | "truncate";
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  truncated: boolean;
}

/**
 * invalid: the URL or request cannot be sent; refused: the rules forbid the target (nothing was
 * sent); timeout, aborted, too_large, network: the exchange failed under way.
 */
export type OutboundFailure = "invalid" | "refused" | "timeout" | "aborted" | "too_large" | "network";

export class OutboundError extends Error {
  readonly kind: OutboundFailure;
  constructor(kind: OutboundFailure, message: string) {
    super(message);
    this.name = "OutboundError";
    this.kind = kind;
  }
}

// ---- addresses ----

type Address = { family: 4 | 6; value: bigint };
type Cidr = { family: 4 | 6; base: bigint; bits: number };

function parseIpv4(text: string): bigint | null {
  if (isIP(text) !== 4) return null;
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

function parseIpv6(text: string): bigint | null {
  let rest = text.replace(/%.*$/, "");
  if (isIP(rest) !== 6) return null;
  // A trailing dotted quad (::ffff:127.0.0.1) is the last two groups.
  let tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(rest);
  if (dotted?.[1] && dotted[2]) {
    const v4 = parseIpv4(dotted[2]);
    if (v4 === null) return null;
    tail = [Number(v4 >> 16n), Number(v4 & 0xffffn)];
    rest = dotted[1].endsWith("::") ? dotted[1] : dotted[1].slice(0, -1);
  }
  const read = (part: string) => (part ? part.split(":").map((group) => Number.parseInt(group, 16)) : []);
  const [head = "", back] = rest.split("::");
  let groups: number[];
  if (back === undefined) groups = [...read(head), ...tail];
  else {
    const front = read(head);
    const end = [...read(back), ...tail];
    groups = [...front, ...new Array<number>(Math.max(0, 8 - front.length - end.length)).fill(0), ...end];
  }
  if (groups.length !== 8) return null;
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

function cidr(text: string): Cidr {
  const [base = "", bits = ""] = text.split("/");
  const v4 = parseIpv4(base);
  if (v4 !== null) return { family: 4, base: v4, bits: Number(bits) };
  const v6 = parseIpv6(base);
  if (v6 === null) throw new Error(`bad CIDR ${text}`);
  return { family: 6, base: v6, bits: Number(bits) };
}

function inCidr(address: Address, range: Cidr): boolean {
  if (address.family !== range.family) return false;
  const width = address.family === 4 ? 32n : 128n;
  const shift = width - BigInt(range.bits);
  return address.value >> shift === range.base >> shift;
}

// IPv6 forms that carry an IPv4 address and reach it: IPv4-mapped (::ffff:a.b.c.d), the deprecated
// IPv4-compatible (::a.b.c.d) and NAT64's well-known prefix (64:ff9b::a.b.c.d). They are judged as the
// IPv4 address, so `[::ffff:169.254.169.254]` is as forbidden as 169.254.169.254.
const EMBEDS_IPV4 = ["::ffff:0:0/96", "::/96", "64:ff9b::/96"].map(cidr);

/** The address as Vigil judges it (IPv4 inside IPv6 unwrapped); null when it is not an IP address. */
function parseAddress(text: string): Address | null {
  const bare = text.replace(/^\[|\]$/g, "");
  const v4 = parseIpv4(bare);
  if (v4 !== null) return { family: 4, value: v4 };
  const v6 = parseIpv6(bare);
  if (v6 === null) return null;
  const address: Address = { family: 6, value: v6 };
  // :: and ::1 sit inside ::/96 but are IPv6's own unspecified and loopback addresses.
  if (v6 > 1n && EMBEDS_IPV4.some((range) => inCidr(address, range))) {
    return { family: 4, value: v6 & 0xffffffffn };
  }
  return address;
}

function formatAddress(address: Address): string {
  if (address.family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((address.value >> shift) & 0xffn)).join(".");
  }
  const groups = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n)
    groups.push(((address.value >> shift) & 0xffffn).toString(16));
  return groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::");
}

// Never called, whatever an allow-list says: nothing legitimate lives there, and cloud metadata
// services (credentials of the machine) do.
const NEVER = [
  "0.0.0.0/8", // "this network": connecting to 0.0.0.0 reaches the local machine
  "169.254.0.0/16", // link-local, including 169.254.169.254 (AWS, GCP, Azure, DigitalOcean, Oracle)
  "100.100.100.200/32", // Alibaba Cloud metadata
  "168.63.129.16/32", // Azure platform endpoint
  "192.0.0.192/32", // Oracle Cloud metadata
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, and broadcast
  "::/128",
  "fe80::/10", // link-local
  "fd00:ec2::254/128", // AWS metadata over IPv6
  "ff00::/8", // multicast
].map(cidr);

// Called only for a host named on the allow-list: a list that is empty ("any host") means any public
// host, so that no tenant reaches what only the machine's own network can.
const INTERNAL = [
  "127.0.0.0/8",
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "100.64.0.0/10", // carrier-grade NAT, used inside clouds
  "192.0.0.0/24",
  "198.18.0.0/15",
  "::1/128",
  "fc00::/7", // unique local
  "fec0::/10", // old site-local
  "64:ff9b:1::/48", // local NAT64
].map(cidr);

const LOOPBACK_OR_UNSPECIFIED = ["127.0.0.0/8", "0.0.0.0/8", "::1/128", "::/128"].map(cidr);

const keyOf = (address: Address) => `${address.family}/${address.value}`;

/** Addresses that reach this machine: loopback, unspecified, and those of its interfaces. */
function localMachineKeys(): Set<string> {
  const keys = new Set<string>();
  for (const list of Object.values(networkInterfaces())) {
    for (const item of list ?? []) {
      const address = parseAddress(item.address);
      if (address) keys.add(keyOf(address));
    }
  }
  return keys;
}

function isLocalMachine(address: Address, interfaceKeys: Set<string>): boolean {
  return LOOPBACK_OR_UNSPECIFIED.some((range) => inCidr(address, range)) || interfaceKeys.has(keyOf(address));
}

// ---- the rules ----

const systemResolver: Resolver = async (hostname) => systemLookup(hostname, { all: true, verbatim: true });

interface Protected {
  host: string;
  port: number;
  what: string;
}

/** Vigil's own listening address and the database's: a tenant must reach neither. */
function protectedEndpoints(config: OutboundConfig): Protected[] {
  const endpoints: Protected[] = [];
  // Port 0 asks the system for a free port: which one is only known once listening.
  if (config.port > 0) endpoints.push({ host: config.host, port: config.port, what: "Vigil's own address" });
  if (config.databaseUrl) {
    try {
      const url = new URL(config.databaseUrl);
      // As pg reads it: `host` and `port` parameters win over the URL's own.
      const host = url.searchParams.get("host") ?? decodeURIComponent(url.hostname);
      const port = Number(url.searchParams.get("port") ?? (url.port || 5432));
      // A host starting with / is a Unix socket directory: nothing HTTP can reach.
      if (host && !host.startsWith("/")) endpoints.push({ host, port, what: "the database's address" });
    } catch {
      // loadConfig accepted it; a URL this cannot read names no TCP endpoint to protect.
    }
  }
  return endpoints;
}

async function addressesOf(host: string, resolve: Resolver): Promise<Address[]> {
  const literal = parseAddress(host);
  if (literal) return [literal];
  try {
    return (await resolve(host)).flatMap((item) => parseAddress(item.address) ?? []);
  } catch {
    return [];
  }
}

function refused(message: string): OutboundError {
  return new OutboundError("refused", message);
}

/**
 * Throws `refused` unless every address of the target may be called. `display` is the URL's host
 * (with its port), `named` whether the allow-list names it.
 */
async function vet(
  policy: OutboundPolicy,
  target: { display: string; hostname: string; port: number; named: boolean },
  texts: string[],
): Promise<void> {
  const resolve = policy.resolve ?? systemResolver;
  const addresses = texts.map((text) => {
    const address = parseAddress(text);
    if (!address) throw refused(`host ${target.display} resolved to ${text}, which is not an IP address`);
    return address;
  });
  for (const address of addresses) {
    if (NEVER.some((range) => inCidr(address, range))) {
      throw refused(
        `host ${target.display} is ${formatAddress(address)}, a link-local, metadata or reserved address, which Vigil never calls`,
      );
    }
  }
  const interfaceKeys = localMachineKeys();
  for (const endpoint of protectedEndpoints(policy.config)) {
    if (endpoint.port !== target.port) continue;
    const refusal = refused(`host ${target.display} is ${endpoint.what}, which Vigil never calls`);
    if (endpoint.host.toLowerCase().replace(/^\[|\]$/g, "") === target.hostname) throw refusal;
    const own = await addressesOf(endpoint.host, resolve);
    // Bound to a local address (or all of them): every address of this machine reaches it.
    const local = own.some((address) => isLocalMachine(address, interfaceKeys));
    const ownKeys = new Set(own.map(keyOf));
    for (const address of addresses) {
      if ((local && isLocalMachine(address, interfaceKeys)) || ownKeys.has(keyOf(address))) throw refusal;
    }
  }
  if (!target.named) {
    for (const address of addresses) {
      if (INTERNAL.some((range) => inCidr(address, range)) || isLocalMachine(address, interfaceKeys)) {
        throw refused(
          `host ${target.display} is ${formatAddress(address)}, an internal address: name the host on ${policy.allowedHostsSetting} to call it`,
        );
      }
    }
  }
}

// ---- the exchange ----

// Set by Vigil, not by the caller: they frame the message on the wire (a caller's content-length or
// transfer-encoding could split one request into two) or name another host than the one called.
const RESERVED_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "proxy-authorization",
  "proxy-connection",
]);

function describeNetworkError(err: unknown): string {
  const error = err as { message?: string; code?: string; errors?: { message?: string }[] };
  // Trying several addresses of a name ends in an AggregateError whose own message may be empty.
  const nested = error.errors?.map((item) => item.message).filter(Boolean);
  return error.message || nested?.join("; ") || error.code || String(err);
}

/**
 * Sends one request under the rules above and reads the answer. Any status, a 3xx included, is a
 * response; what the caller makes of it is its own affair. Throws OutboundError only.
 */
/**
 * The same rules for a client that makes its own connection (the git CLI): the URL's host must be
 * on the allow-list when there is one, and the addresses it resolves to now are judged. That client
 * resolves again when it connects, so a DNS answer that changes in between is not caught: name
 * such hosts on the allow-list.
 */
export async function vetOutboundHost(policy: OutboundPolicy, url: URL, defaultPort: number): Promise<void> {
  const named = policy.allowedHosts !== null;
  if (policy.allowedHosts !== null && !hostAllowed(url, policy.allowedHosts)) {
    throw refused(`host ${url.host} is not on ${policy.allowedHostsSetting}`);
  }
  const hostname = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const resolve = policy.resolve ?? systemResolver;
  const texts = isIP(hostname)
    ? [hostname]
    : (await resolve(hostname).catch(() => [])).map((item) => item.address);
  if (texts.length === 0) throw new OutboundError("network", `host ${url.host} does not resolve`);
  await vet(policy, { display: url.host, hostname, port: Number(url.port || defaultPort), named }, texts);
}

export async function outboundRequest(
  policy: OutboundPolicy,
  request: OutboundRequest,
): Promise<OutboundResponse> {
  const { url } = request;
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OutboundError("invalid", "the url must be http(s)");
  }
  if (url.username || url.password) throw new OutboundError("invalid", "the url must not carry credentials");
  const named = policy.allowedHosts !== null;
  if (policy.allowedHosts !== null && !hostAllowed(url, policy.allowedHosts)) {
    throw refused(`host ${url.host} is not on ${policy.allowedHostsSetting}`);
  }
  const hostname = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const target = { display: url.host, hostname, port, named };
  // node:http resolves nothing for an IP literal (the lookup below is not called): judged here.
  if (isIP(hostname)) await vet(policy, target, [hostname]);

  const signal = abortAfter(request.timeoutMs, request.signal);
  const aborted = () =>
    (signal.reason as Error | undefined)?.name === "TimeoutError"
      ? new OutboundError("timeout", `no answer within ${request.timeoutMs} ms`)
      : new OutboundError("aborted", "the request was aborted");
  if (signal.aborted) throw aborted();

  const resolve = policy.resolve ?? systemResolver;
  // Resolves once, judges every address, and hands node:http exactly those addresses to connect to.
  const lookup: LookupFunction = (name, options, callback) => {
    const answer = (async () => {
      const found = await resolve(name);
      const wanted = options.family ? found.filter((item) => item.family === options.family) : found;
      if (wanted.length === 0) {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
      }
      await vet(
        policy,
        target,
        found.map((item) => item.address),
      );
      return wanted;
    })();
    // The callback runs outside the promise chain, so that nothing it throws is taken for a DNS error.
    answer.then(
      (wanted) => {
        const first = wanted[0] as ResolvedAddress;
        setImmediate(() =>
          options.all ? callback(null, wanted) : callback(null, first.address, first.family),
        );
      },
      (err: NodeJS.ErrnoException) => setImmediate(() => callback(err, "", 0)),
    );
  };

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (!RESERVED_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  const body = request.body === undefined ? undefined : Buffer.from(request.body, "utf8");
  if (body) headers["content-length"] = String(body.byteLength);

  return new Promise<OutboundResponse>((resolvePromise, reject) => {
    let settled = false;
    let response: http.IncomingMessage | undefined;
    let req: http.ClientRequest;
    const finish = (outcome: OutboundResponse | OutboundError) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener("abort", onAbort);
      if (outcome instanceof OutboundError) {
        response?.destroy();
        req?.destroy();
        reject(outcome);
      } else {
        resolvePromise(outcome);
      }
    };
    const onAbort = () => finish(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      req = (url.protocol === "https:" ? https : http).request({
        protocol: url.protocol,
        hostname,
        port,
        path: `${url.pathname}${url.search}`,
        method: request.method ?? "GET",
        headers,
        lookup,
        // A connection of its own: none kept alive from an earlier call, none kept for a later one.
        agent: false,
      });
    } catch (err) {
      // Node refuses a bad header name or value, or a bad method, before sending anything.
      finish(new OutboundError("invalid", (err as Error).message));
      return;
    }
    req.on("error", (err) => {
      if (err instanceof OutboundError) finish(err);
      else if (signal.aborted) finish(aborted());
      else finish(new OutboundError("network", describeNetworkError(err)));
    });
    req.on("response", (res) => {
      response = res;
      const responseHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) responseHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
      }
      const limit = request.maxResponseBytes;
      const tooLarge = () => new OutboundError("too_large", `answer larger than ${limit} bytes`);
      const done = (chunks: Buffer[], truncated: boolean) =>
        finish({
          status: res.statusCode ?? 0,
          headers: responseHeaders,
          body: Buffer.concat(chunks).subarray(0, limit),
          truncated,
        });
      if (request.oversize === "fail" && Number(res.headers["content-length"]) > limit) {
        finish(tooLarge());
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.byteLength;
        if (size <= limit) return;
        if (request.oversize === "fail") finish(tooLarge());
        else {
          done(chunks, true);
          res.destroy();
        }
      });
      res.on("end", () => done(chunks, false));
      res.on("error", (err) =>
        finish(signal.aborted ? aborted() : new OutboundError("network", describeNetworkError(err))),
      );
    });
    req.end(body);
  });
}
