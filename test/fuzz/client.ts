// Sends the fuzzer's requests through app.inject, tags each with its own request id so the server's
// log lines can be matched to it, counts answers by area and status class, and keeps the findings:
// every 5xx, crash and failed read-back, with the request that caused it.
import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { loadConfig } from "../../src/config.ts";
import { createLogger } from "../../src/start.ts";

export interface FuzzRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  url: string;
  headers?: Record<string, string>;
  /** Bytes as sent; undefined sends no body. */
  body?: Buffer;
  /** What was changed, for reports. */
  mutation: string;
}

export interface FuzzResponse {
  status: number;
  body: string;
  json(): unknown;
  requestId: string;
}

export interface Finding {
  kind: "5xx" | "crash" | "read-back";
  /** What makes two findings the same bug: kind, status, detail and the server's error, ids left out. */
  signature: string;
  area: string;
  operation: string;
  request: { method: string; url: string; contentType: string | null; body: string; mutation: string };
  status: number | null;
  response: string;
  detail: string;
  log: string[];
}

/** A warn or error line of the server, read when it was written. */
export interface LogLine {
  reqId: string | null;
  level: number;
  /** The line, shortened (conciseLog). */
  line: string;
  /** The error it reports, ids and numbers left out, for signatures; null without one. */
  error: string | null;
}

type Classes = { "2xx": number; "3xx": number; "4xx": number; "5xx": number; none: number };

/** A printable, bounded view of bytes: escapes kept visible, long bodies cut in the middle. */
export function preview(bytes: Buffer | string | undefined, limit = 400): string {
  if (bytes === undefined) return "(no body)";
  const text = typeof bytes === "string" ? bytes : bytes.toString("utf8");
  const shown = JSON.stringify(
    text.length > limit ? `${text.slice(0, limit / 2)}…${text.slice(-limit / 4)}` : text,
  );
  return text.length > limit ? `${shown} (${Buffer.byteLength(text)} bytes)` : shown;
}

export class FuzzClient {
  readonly counts = new Map<string, Classes>();
  readonly findings: Finding[] = [];
  private sequence = 0;
  /** The request in flight, named in a crash report. */
  current: string | null = null;

  constructor(
    private readonly app: () => FastifyInstance,
    private readonly prefix: string,
    /** Warn and error lines of the server, with the request id when a request logged them. */
    readonly logLines: LogLine[],
  ) {}

  /** The logger to start Vigil with: warn and above, kept in memory (tokens redacted as in production). */
  static logger(sink: LogLine[]): Logger {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        sink.push(readLogLine(chunk.toString("utf8")));
        done();
      },
    });
    return createLogger({ ...loadConfig({}), logLevel: "warn" }, destination);
  }

  count(area: string, status: number | null): void {
    let classes = this.counts.get(area);
    if (!classes) {
      classes = { "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, none: 0 };
      this.counts.set(area, classes);
    }
    if (status === null) classes.none += 1;
    else if (status >= 500) classes["5xx"] += 1;
    else if (status >= 400) classes["4xx"] += 1;
    else if (status >= 300) classes["3xx"] += 1;
    else classes["2xx"] += 1;
  }

  nextRequestId(): string {
    this.sequence += 1;
    return `${this.prefix}-${this.sequence}`;
  }

  /** Sends one request and counts its answer under `area`. Never throws for an HTTP status. */
  async send(area: string, request: FuzzRequest): Promise<FuzzResponse> {
    const requestId = this.nextRequestId();
    this.current = `${request.method} ${request.url} (${request.mutation})`;
    const response = await this.app().inject({
      method: request.method,
      url: request.url,
      headers: { ...request.headers, "x-request-id": requestId },
      ...(request.body === undefined ? {} : { payload: request.body }),
    });
    this.current = null;
    this.count(area, response.statusCode);
    const body = response.body;
    return {
      status: response.statusCode,
      body,
      requestId,
      json: () => JSON.parse(body) as unknown,
    };
  }

  /** Records a finding; `operation` names the route or source. */
  report(
    kind: Finding["kind"],
    area: string,
    operation: string,
    request: FuzzRequest,
    response: FuzzResponse | null,
    detail: string,
  ): Finding {
    const lines = response ? this.logLines.filter((entry) => entry.reqId === response.requestId) : [];
    const log = lines.map((entry) => entry.line);
    const finding: Finding = {
      kind,
      signature: [
        kind,
        response?.status ?? "-",
        normalized(detail),
        ...new Set(lines.map((entry) => entry.error)),
      ]
        .filter((part) => part !== null)
        .join(" | "),
      area,
      operation,
      request: {
        method: request.method,
        url: request.url.length > 300 ? `${request.url.slice(0, 300)}…` : request.url,
        contentType: request.headers?.["content-type"] ?? null,
        body: preview(request.body),
        mutation: request.mutation,
      },
      status: response?.status ?? null,
      response: preview(response?.body, 300),
      detail,
      log,
    };
    return finding;
  }

  /** Keeps a finding, once per operation and signature. */
  keep(finding: Finding): void {
    const same = this.findings.find(
      (known) => known.operation === finding.operation && known.signature === finding.signature,
    );
    if (!same) this.findings.push(finding);
  }

  /** The counts as a table, one line per area plus the total. */
  table(title: string): string {
    const areas = [...this.counts.keys()].sort();
    const width = Math.max(12, ...areas.map((area) => area.length));
    const line = (name: string, c: Classes) =>
      `${name.padEnd(width)}  ${String(c["2xx"]).padStart(6)} ${String(c["3xx"]).padStart(5)} ${String(c["4xx"]).padStart(6)} ${String(c["5xx"]).padStart(5)} ${String(c.none).padStart(5)}`;
    const total: Classes = { "2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0, none: 0 };
    const rows = areas.map((area) => {
      const c = this.counts.get(area) as Classes;
      for (const key of Object.keys(total) as (keyof Classes)[]) total[key] += c[key];
      return line(area, c);
    });
    return [
      title,
      `${"area".padEnd(width)}  ${"2xx".padStart(6)} ${"3xx".padStart(5)} ${"4xx".padStart(6)} ${"5xx".padStart(5)} ${"none".padStart(5)}`,
      ...rows,
      line("total", total),
    ].join("\n");
  }
}

/** Ids, numbers and quoted values out, so the same failure on other data reads the same. */
function normalized(text: string): string {
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<id>")
    .replace(/whk_[\w-]+/g, "<token>")
    .replace(/\d+/g, "#");
}

interface ParsedLine {
  reqId?: string;
  level?: number;
  msg?: string;
  err?: { type?: string; message?: string; stack?: string };
  database?: { code?: string; message?: string };
}

/** A whole log line, read into the parts a finding shows. */
function readLogLine(text: string): LogLine {
  let parsed: ParsedLine;
  try {
    parsed = JSON.parse(text) as ParsedLine;
  } catch {
    return { reqId: null, level: 0, line: text.trim().slice(0, 400), error: null };
  }
  const message = parsed.err?.message ?? "";
  // A query error's message is mostly the query and its parameters: the reason comes last.
  const reason = message.slice(message.lastIndexOf(": ") + 2).slice(-120);
  return {
    reqId: parsed.reqId ?? null,
    level: parsed.level ?? 0,
    line: conciseLog(parsed),
    error: parsed.err ? `${parsed.err.type}: ${normalized(reason)}` : null,
  };
}

/**
 * A log line, shortened: its message, the error's type, the start and end of the error's message
 * (a query error's middle is the query and its parameters), the database's report and the first
 * frame in Vigil's code.
 */
function conciseLog(parsed: ParsedLine): string {
  const message = parsed.err?.message ?? "";
  const shown = message.length > 240 ? `${message.slice(0, 100)} … ${message.slice(-120)}` : message;
  const frame = parsed.err?.stack
    ?.split("\n")
    .find((text) => text.includes("/src/") && !text.includes("node_modules"))
    ?.trim();
  const database = parsed.database ? ` [database ${parsed.database.code}: ${parsed.database.message}]` : "";
  const error = parsed.err ? `: ${parsed.err.type}: ${shown.replace(/\n/g, " ")}` : "";
  return `${parsed.msg ?? ""}${error}${database}${frame ? ` (${frame})` : ""}`;
}

/** A finding as a few readable lines. */
export function describeFinding(finding: Finding): string {
  return [
    `[${finding.kind}] ${finding.area} ${finding.operation}: ${finding.detail}`,
    `  request: ${finding.request.method} ${finding.request.url}`,
    `  content-type: ${finding.request.contentType ?? "(none)"}; mutation: ${finding.request.mutation}`,
    `  body: ${finding.request.body}`,
    `  answer: ${finding.status ?? "-"} ${finding.response}`,
    ...finding.log.map((line) => `  log: ${line}`),
  ].join("\n");
}
