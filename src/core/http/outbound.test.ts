// The outbound rules against a real loopback peer. Most refusals aim at the peer itself, so that a
// rule that let the call through would show as a request the peer received.
import { lookup } from "node:dns/promises";
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type OutboundConfig,
  OutboundError,
  type OutboundPolicy,
  type OutboundRequest,
  outboundRequest,
  type ResolvedAddress,
} from "./outbound.ts";

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const LIMIT = 1024;
let server: Server;
let port = 0;
let base = "";
let seen: Seen[] = [];
/** Resolves with the next request held on /hang, once it arrived, and once it was given up. */
let held: { arrived: Promise<void>; closed: Promise<void> };
let markArrived = () => {};
let markClosed = () => {};

function holdNext() {
  held = {
    arrived: new Promise((resolve) => {
      markArrived = resolve;
    }),
    closed: new Promise((resolve) => {
      markClosed = resolve;
    }),
  };
}

const routes: Record<string, (res: ServerResponse, request: Seen) => void> = {
  "/ok": (res) => res.writeHead(200, { "content-type": "text/plain" }).end("hello"),
  "/echo": (res, request) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(request)),
  "/redirect": (res) => res.writeHead(302, { location: `${base}/ok` }).end("moved"),
  "/missing": (res) => res.writeHead(404).end("secret detail of the 404"),
  // Says it is large and sends one byte: only the declared size can fail it without a wait.
  "/huge": (res) => res.writeHead(200, { "content-length": String(LIMIT * 4) }).write("x"),
  "/stream": (res) => {
    // No content-length: only counting the bytes finds the answer too large.
    res.writeHead(200);
    for (let i = 0; i < 8; i++) res.write("y".repeat(LIMIT / 2));
    res.end();
  },
  "/cut": (res) => {
    res.writeHead(200, { "content-length": "1000" });
    res.write("partial secret body", () => res.destroy());
  },
  "/hang": (res) => {
    res.on("close", markClosed);
    markArrived();
  },
};

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    const request = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
    seen.push(request);
    const route = routes[request.url.split("?")[0] ?? ""];
    if (route) route(res, request);
    else res.writeHead(404).end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, "close");
});
beforeEach(() => {
  seen = [];
  holdNext();
});

/** Vigil listening elsewhere (a port no test uses), on PGlite. */
const config = (overrides: Partial<OutboundConfig> = {}): OutboundConfig => ({
  host: "127.0.0.1",
  port: 1,
  databaseUrl: null,
  ...overrides,
});

/** A resolver that answers the names given and asks the system for others; it counts its calls. */
function resolver(names: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    const addresses = names[hostname];
    if (!addresses) return lookup(hostname, { all: true });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  return { resolve, calls };
}

function policy(overrides: Partial<OutboundPolicy> = {}): OutboundPolicy {
  return {
    allowedHosts: ["127.0.0.1"],
    allowedHostsSetting: "TEST_ALLOWED_HOSTS",
    config: config(),
    ...overrides,
  };
}

function send(url: string, givenPolicy: OutboundPolicy = policy(), request: Partial<OutboundRequest> = {}) {
  return outboundRequest(givenPolicy, {
    url: new URL(url),
    timeoutMs: 10_000,
    maxResponseBytes: LIMIT,
    oversize: "fail",
    ...request,
  });
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const err = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(err).toBeInstanceOf(OutboundError);
  return err as OutboundError;
}

/** The allow-list that names the host of each URL: what is refused then is refused by the rules. */
const naming = (urls: string[]) => urls.map((url) => new URL(url).hostname.replace(/^\[|\]$/g, ""));

describe("outboundRequest", () => {
  it("calls an allow-listed host and hands back any status, without following a redirect", async () => {
    const ok = await send(`${base}/ok`);
    expect(ok).toMatchObject({ status: 200, truncated: false });
    expect(ok.body.toString()).toBe("hello");
    expect(ok.headers["content-type"]).toBe("text/plain");

    const moved = await send(`${base}/redirect`);
    expect(moved.status).toBe(302);
    expect(moved.headers.location).toBe(`${base}/ok`);
    expect((await send(`${base}/missing`)).status).toBe(404);
    // The redirect's target was never asked for.
    expect(seen.map((request) => request.url)).toEqual(["/ok", "/redirect", "/missing"]);
  });

  it("resolves a name once, judges its addresses, and connects to exactly those", async () => {
    // The system resolver does not know peer.test: only the policy's answer can reach the peer.
    const names = resolver({ "peer.test": ["127.0.0.1"] });
    const answer = await send(
      `http://peer.test:${port}/echo`,
      policy({ allowedHosts: ["peer.test"], resolve: names.resolve }),
    );
    expect(JSON.parse(answer.body.toString())).toMatchObject({ headers: { host: `peer.test:${port}` } });
    expect(names.calls).toEqual(["peer.test"]);

    // An answer that changes after the first lookup changes nothing: there is no second lookup.
    let calls = 0;
    const rebinding = async (): Promise<ResolvedAddress[]> =>
      calls++ === 0 ? [{ address: "127.0.0.1", family: 4 }] : [{ address: "169.254.169.254", family: 4 }];
    const again = await send(
      `http://peer.test:${port}/ok`,
      policy({ allowedHosts: ["peer.test"], resolve: rebinding }),
    );
    expect(again.status).toBe(200);
    expect(calls).toBe(1);
  });

  it("never calls Vigil's own port, in any spelling of this machine's address", async () => {
    const urls = [
      `http://127.0.0.1:${port}/ok`,
      `http://127.1:${port}/ok`,
      `http://2130706433:${port}/ok`,
      `http://0x7f000001:${port}/ok`,
      `http://[::ffff:127.0.0.1]:${port}/ok`,
      `http://[::1]:${port}/ok`,
      `http://127.0.0.2:${port}/ok`,
      `http://localhost:${port}/ok`,
      `http://self.test:${port}/ok`,
    ];
    const names = resolver({ "self.test": ["127.0.0.1"] });
    for (const host of ["127.0.0.1", "0.0.0.0", "localhost", "::"]) {
      const rules = policy({
        allowedHosts: naming(urls),
        config: config({ host, port }),
        resolve: names.resolve,
      });
      for (const url of urls) {
        const err = await failure(send(url, rules));
        expect([url, host, err.kind, err.message]).toEqual([
          url,
          host,
          "refused",
          `host ${new URL(url).host} is Vigil's own address, which Vigil never calls`,
        ]);
      }
    }
    expect(seen).toEqual([]);
    // Another port of the same machine is not Vigil.
    const other = policy({ config: config({ port: port === 65535 ? port - 1 : port + 1 }) });
    expect((await send(`${base}/ok`, other)).status).toBe(200);
  });

  it("never calls the database's host and port", async () => {
    const names = resolver({ "db.test": ["127.0.0.1"], "pg.test": ["10.9.8.7"], "alias.test": ["10.9.8.7"] });
    const local = policy({
      allowedHosts: ["127.0.0.1", "localhost", "db.test"],
      config: config({ databaseUrl: `postgres://vigil:pw@db.test:${port}/vigil` }),
      resolve: names.resolve,
    });
    for (const url of [`${base}/ok`, `http://localhost:${port}/ok`, `http://db.test:${port}/ok`]) {
      const err = await failure(send(url, local));
      expect([err.kind, err.message]).toEqual([
        "refused",
        `host ${new URL(url).host} is the database's address, which Vigil never calls`,
      ]);
    }
    expect(seen).toEqual([]);
    // The host as a parameter, as pg reads it too; the same machine at another port is not the database.
    const byParameter = (dbPort: number) =>
      policy({ config: config({ databaseUrl: `postgres:///vigil?host=127.0.0.1&port=${dbPort}` }) });
    expect((await failure(send(`${base}/ok`, byParameter(port)))).message).toMatch(
      /is the database's address/,
    );
    expect((await send(`${base}/ok`, byParameter(port === 65535 ? port - 1 : port + 1))).status).toBe(200);

    // A remote database: its addresses at its port, under any name or spelling.
    const remote = policy({
      allowedHosts: ["pg.test", "alias.test"],
      config: config({ databaseUrl: "postgresql://pg.test/vigil" }),
      resolve: names.resolve,
    });
    for (const url of ["http://pg.test:5432/", "http://alias.test:5432/", "http://[::ffff:10.9.8.7]:5432/"]) {
      const rules = { ...remote, allowedHosts: naming([url]) };
      expect((await failure(send(url, rules))).message).toMatch(/is the database's address/);
    }
  });

  it("never calls a link-local, metadata or reserved address, whatever the allow-list says", async () => {
    const urls = [
      // First those that would reach the peer, so that a rule let through fails here on loopback:
      // 0.0.0.0 and :: reach this machine.
      `http://0.0.0.0:${port}/ok`,
      `http://0:${port}/ok`,
      `http://[::]:${port}/ok`,
      `http://mixed.test:${port}/ok`,
      "http://metadata.test/",
      "http://169.254.169.254/latest/meta-data/",
      "http://169.254.170.2/",
      "http://[fe80::1]/",
      "http://100.100.100.200/",
      "http://168.63.129.16/",
      "http://[fd00:ec2::254]/",
      "http://[::ffff:169.254.169.254]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[ff02::1]/",
      "http://224.0.0.1/",
    ];
    const names = resolver({
      "metadata.test": ["169.254.169.254"],
      "mixed.test": ["127.0.0.1", "169.254.169.254"],
    });
    const rules = policy({ allowedHosts: naming(urls), resolve: names.resolve });
    for (const url of urls) {
      const err = await failure(send(url, rules));
      expect([url, err.kind, err.message]).toEqual([
        url,
        "refused",
        expect.stringMatching(
          /^host \S+ is \S+, a link-local, metadata or reserved address, which Vigil never calls$/,
        ),
      ]);
    }
    expect(seen).toEqual([]);
  });

  it("calls an internal address only for a host the allow-list names", async () => {
    const names = resolver({ "internal.test": ["127.0.0.1"] });
    const anyPublic = policy({ allowedHosts: null, resolve: names.resolve });
    for (const url of [
      `${base}/ok`,
      `http://127.1:${port}/ok`,
      `http://[::ffff:7f00:1]:${port}/ok`,
      `http://localhost:${port}/ok`,
      `http://internal.test:${port}/ok`,
      "http://10.1.2.3/",
      "http://192.168.1.1/",
      "http://[fd12::1]/",
    ]) {
      const err = await failure(send(url, anyPublic));
      expect([url, err.kind, err.message]).toEqual([
        url,
        "refused",
        expect.stringMatching(/, an internal address: name the host on TEST_ALLOWED_HOSTS to call it$/),
      ]);
    }
    expect(seen).toEqual([]);

    const listed = policy({ allowedHosts: ["internal.test"], resolve: names.resolve });
    expect((await send(`http://internal.test:${port}/ok`, listed)).status).toBe(200);
    const err = await failure(send(`${base}/ok`, listed));
    expect([err.kind, err.message]).toEqual([
      "refused",
      `host 127.0.0.1:${port} is not on TEST_ALLOWED_HOSTS`,
    ]);
    expect(seen.map((request) => request.url)).toEqual(["/ok"]);
  });

  it("fails or truncates an answer over the size limit", async () => {
    for (const path of ["/huge", "/stream"]) {
      const err = await failure(send(`${base}${path}`));
      expect([path, err.kind, err.message]).toEqual([path, "too_large", `answer larger than ${LIMIT} bytes`]);
    }
    const cut = await send(`${base}/stream`, policy(), { oversize: "truncate" });
    expect([cut.truncated, cut.body.length]).toEqual([true, LIMIT]);
    const whole = await send(`${base}/ok`, policy(), { maxResponseBytes: 5 });
    expect([whole.truncated, whole.body.toString()]).toEqual([false, "hello"]);
  });

  it("gives up at the timeout or when the caller aborts, and drops the connection", async () => {
    const timedOut = await failure(send(`${base}/hang`, policy(), { timeoutMs: 100 }));
    expect([timedOut.kind, timedOut.message]).toEqual(["timeout", "no answer within 100 ms"]);
    await held.closed;

    holdNext();
    const controller = new AbortController();
    const pending = failure(send(`${base}/hang`, policy(), { signal: controller.signal }));
    await held.arrived;
    controller.abort();
    expect((await pending).kind).toBe("aborted");
    await held.closed;

    const before = seen.length;
    expect((await failure(send(`${base}/ok`, policy(), { signal: AbortSignal.abort() }))).kind).toBe(
      "aborted",
    );
    expect(seen.length).toBe(before);
  });

  it("sends the caller's headers and body, but frames the message itself", async () => {
    const answer = await send(`${base}/echo`, policy(), {
      method: "POST",
      headers: {
        "X-Token": "abc",
        "Content-Length": "1",
        Host: "evil.example",
        "Transfer-Encoding": "chunked",
      },
      body: "héllo",
    });
    const echoed = JSON.parse(answer.body.toString()) as Seen;
    expect(echoed).toMatchObject({ method: "POST", body: "héllo" });
    expect(echoed.headers).toMatchObject({
      "x-token": "abc",
      host: `127.0.0.1:${port}`,
      "content-length": "6",
    });
    expect(echoed.headers["transfer-encoding"]).toBeUndefined();
  });

  it("refuses what it cannot send, and names no part of an answer in its errors", async () => {
    for (const [url, headers, message] of [
      ["ftp://127.0.0.1/", {}, "the url must be http(s)"],
      [`http://user:pw@127.0.0.1:${port}/ok`, {}, "the url must not carry credentials"],
      [`${base}/ok`, { "x-bad": "a\nb" }, "Invalid character in header content"],
    ] as const) {
      const err = await failure(send(url, policy(), { headers }));
      expect([err.kind, err.message]).toEqual(["invalid", expect.stringContaining(message)]);
    }
    const cut = await failure(send(`${base}/cut`));
    expect(cut.kind).toBe("network");
    expect(cut.message).not.toContain("secret");
  });
});
