// The transport area, over a real socket to the listening server on 127.0.0.1: requests cut short
// (the socket half-closed or dropped mid-body), lying or conflicting lengths, broken chunking, huge
// headers, unknown methods, raw bytes in the request line, pipelining. Nothing may take the process
// down, and the server must not log its own failure for a client's fault.
import { connect } from "node:net";
import fc from "fast-check";
import type { Finding, FuzzClient, FuzzRequest } from "./client.ts";
import { type Budget, fuzz } from "./runner.ts";

export interface RawCase {
  name: string;
  /** The whole request, as bytes; `cut` may send only a prefix of it. */
  bytes: (requestId: string) => Buffer;
}

const CRLF = "\r\n";

function request(lines: string[], body: Buffer | string = ""): Buffer {
  return Buffer.concat([Buffer.from(lines.join(CRLF) + CRLF + CRLF, "latin1"), Buffer.from(body)]);
}

/** The cases: `trigger` is a registration's trigger path, `auth` an API key header value. */
export function rawCases(trigger: string, auth: string): RawCase[] {
  const json = JSON.stringify({ name: "fz-raw", type: "grafana" });
  const alert = JSON.stringify({
    version: "4",
    status: "firing",
    alerts: [{ status: "firing", labels: { alertname: "Raw" } }],
  });
  const post =
    (path: string, body: string, extra: string[] = []) =>
    (id: string) =>
      request(
        [
          `POST ${path} HTTP/1.1`,
          "Host: 127.0.0.1",
          `Authorization: ${auth}`,
          "Content-Type: application/json",
          `Content-Length: ${Buffer.byteLength(body)}`,
          `X-Request-Id: ${id}`,
          ...extra,
        ],
        body,
      );
  return [
    { name: "trigger body", bytes: post(trigger, alert) },
    { name: "json api body", bytes: post("/api/v1/integrations", json) },
    {
      name: "content-length larger than body",
      bytes: (id) =>
        request(
          [
            `POST ${trigger} HTTP/1.1`,
            "Host: 127.0.0.1",
            "Content-Type: application/json",
            "Content-Length: 100000",
            `X-Request-Id: ${id}`,
          ],
          alert,
        ),
    },
    {
      name: "content-length not a number",
      bytes: (id) =>
        request(
          [`POST ${trigger} HTTP/1.1`, "Host: 127.0.0.1", "Content-Length: 1e30", `X-Request-Id: ${id}`],
          alert,
        ),
    },
    {
      name: "content-length over the body limit",
      bytes: (id) =>
        request(
          [
            `POST /api/v1/integrations HTTP/1.1`,
            "Host: 127.0.0.1",
            `Authorization: ${auth}`,
            "Content-Type: application/json",
            "Content-Length: 9223372036854775808",
            `X-Request-Id: ${id}`,
          ],
          json,
        ),
    },
    {
      name: "length and chunked together",
      bytes: (id) =>
        request(
          [
            `POST ${trigger} HTTP/1.1`,
            "Host: 127.0.0.1",
            "Content-Length: 4",
            "Transfer-Encoding: chunked",
            `X-Request-Id: ${id}`,
          ],
          `4${CRLF}abcd${CRLF}0${CRLF}${CRLF}`,
        ),
    },
    {
      name: "broken chunk size",
      bytes: (id) =>
        request(
          [
            `POST ${trigger} HTTP/1.1`,
            "Host: 127.0.0.1",
            "Content-Type: application/json",
            "Transfer-Encoding: chunked",
            `X-Request-Id: ${id}`,
          ],
          `zz${CRLF}{}${CRLF}0${CRLF}${CRLF}`,
        ),
    },
    {
      name: "chunked invalid utf-8",
      bytes: (id) =>
        Buffer.concat([
          request([
            `POST ${trigger} HTTP/1.1`,
            "Host: 127.0.0.1",
            "Content-Type: application/json",
            "Transfer-Encoding: chunked",
            `X-Request-Id: ${id}`,
          ]),
          Buffer.from(`6${CRLF}`),
          Buffer.from([0x7b, 0xff, 0xfe, 0xed, 0xa0, 0x7d]),
          Buffer.from(`${CRLF}0${CRLF}${CRLF}`),
        ]),
    },
    {
      name: "gzip that is not",
      bytes: post("/api/v1/integrations", json, ["Content-Encoding: gzip"]),
    },
    {
      name: "huge header",
      bytes: (id) =>
        request([
          "GET /healthz HTTP/1.1",
          "Host: 127.0.0.1",
          `X-Request-Id: ${id}`,
          `X-Big: ${"b".repeat(70_000)}`,
        ]),
    },
    {
      name: "unknown method",
      bytes: (id) => request(["FUZZ /healthz HTTP/1.1", "Host: 127.0.0.1", `X-Request-Id: ${id}`]),
    },
    {
      name: "raw bytes in the path",
      bytes: (id) =>
        Buffer.concat([
          Buffer.from("GET /app/sre/api/v1/alerts/"),
          Buffer.from([0xff, 0xed, 0xa0, 0x80]),
          Buffer.from(
            ` HTTP/1.1${CRLF}Host: 127.0.0.1${CRLF}Authorization: ${auth}${CRLF}X-Request-Id: ${id}${CRLF}${CRLF}`,
          ),
        ]),
    },
    { name: "no host", bytes: (id) => request(["GET /healthz HTTP/1.1", `X-Request-Id: ${id}`]) },
    {
      name: "http/1.0 absolute form",
      bytes: (id) => request(["GET http://127.0.0.1/healthz HTTP/1.0", `X-Request-Id: ${id}`]),
    },
    {
      name: "pipelined",
      bytes: (id) =>
        Buffer.concat([
          request(["GET /healthz HTTP/1.1", "Host: 127.0.0.1", `X-Request-Id: ${id}`]),
          post("/api/v1/integrations", "{", [])(`${id}-b`),
          request(["GET /readyz HTTP/1.1", "Host: 127.0.0.1", `X-Request-Id: ${id}-c`]),
        ]),
    },
    { name: "expect continue", bytes: post(trigger, alert, ["Expect: 100-continue"]) },
  ];
}

/** Sends bytes and half-closes (or drops) the socket; the status of the first answer, if any. */
function exchange(
  port: number,
  bytes: Buffer,
  drop: boolean,
): Promise<{ status: number | null; text: string }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(guard);
      const text = Buffer.concat(chunks).toString("latin1");
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ status: status ? Number(status) : null, text: text.slice(0, 300) });
    };
    // A bound, not an expectation: a server that never closes is treated as a dropped exchange.
    const guard = setTimeout(() => {
      socket.destroy();
      finish();
    }, 5_000);
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", finish);
    socket.on("close", finish);
    socket.on("connect", () => {
      socket.write(bytes, () => {
        if (drop) socket.destroy();
        else socket.end();
      });
    });
  });
}

export interface RawInput {
  which: number;
  /** Fraction of the bytes sent (1: all of them). */
  keep: number;
  drop: boolean;
}

export async function fuzzTransport(
  client: FuzzClient,
  port: number,
  cases: RawCase[],
  budget: Budget,
): Promise<number> {
  const area = "transport";
  const check = async (input: RawInput): Promise<Finding | null> => {
    const rawCase = cases[input.which % cases.length] as RawCase;
    const requestId = client.nextRequestId();
    const full = rawCase.bytes(requestId);
    const sent = full.subarray(0, Math.max(1, Math.round(full.length * input.keep)));
    client.current = `raw ${rawCase.name}`;
    const answer = await exchange(port, sent, input.drop);
    client.current = null;
    client.count(area, answer.status);
    const shown: FuzzRequest = {
      method: "POST",
      url: `(raw socket) ${rawCase.name}`,
      body: sent,
      mutation: `sent ${sent.length}/${full.length} bytes, then ${input.drop ? "dropped" : "half-closed"}`,
    };
    if (answer.status !== null && answer.status >= 500) {
      return client.report(
        "5xx",
        area,
        rawCase.name,
        shown,
        { status: answer.status, body: answer.text, requestId, json: () => null },
        `answered ${answer.status}`,
      );
    }
    const mine = (id: string | null) => id === requestId || Boolean(id?.startsWith(`${requestId}-`));
    const errors = client.logLines.filter((line) => mine(line.reqId) && line.level >= 50);
    if (errors.length > 0) {
      const finding = client.report(
        "5xx",
        area,
        rawCase.name,
        shown,
        null,
        "the server logged an error for a client's fault",
      );
      finding.log = errors.map((line) => line.line);
      return finding;
    }
    return null;
  };
  const arbitrary = fc.record({
    which: fc.nat(cases.length - 1),
    keep: fc.oneof(fc.constant(1), fc.double({ min: 0.05, max: 1, noNaN: true })),
    drop: fc.boolean(),
  });
  // Every case once whole, before the random cuts.
  const examples = cases.map((_rawCase, which) => ({ which, keep: 1, drop: false }));
  const { runs } = await fuzz(client, area, arbitrary, check, budget, examples);
  return runs;
}
