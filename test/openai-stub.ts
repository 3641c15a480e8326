// A loopback server that speaks the OpenAI chat completions protocol well enough for the Vercel AI
// SDK's OpenAI-compatible provider: POST /v1/chat/completions, non-streaming JSON (generateText and
// generateObject send `stream: false`; a streaming request is answered 400, so a test notices if
// that ever changes). It replays a scripted list of replies in order (assistant text, assistant
// `tool_calls`, an HTTP error, a reply held back to provoke a timeout), then `fallback` for every
// further request, and records every request it received (headers and parsed body), so a test can
// check the model, the messages (the `role: tool` results included) and the Authorization header.
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface StubUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface StubToolCall {
  name: string;
  /** An object is sent as its JSON text, a string as is (to send malformed arguments). */
  arguments: Record<string, unknown> | string;
  id?: string;
}

/** `until`: the reply is held until the promise settles (a gate a test opens). */
export type StubReply =
  | { content: string; usage?: StubUsage; delayMs?: number; until?: Promise<unknown> }
  | {
      toolCalls: StubToolCall[];
      content?: string;
      usage?: StubUsage;
      delayMs?: number;
      until?: Promise<unknown>;
    }
  | { status: number; body?: unknown; delayMs?: number; until?: Promise<unknown> }
  /** Computed from the request (e.g. echo part of it back). */
  | ((request: StubRequest) => StubReply);

export interface StubRequest {
  /** True once the client closed the request before its reply was sent. */
  dropped?: boolean;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (null when it was not JSON). */
  body: ChatRequestBody | null;
}

/** The fields of a chat completions request the tests look at. */
export interface ChatRequestBody {
  model: string;
  messages: {
    role: string;
    content?: unknown;
    tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    tool_call_id?: string;
  }[];
  tools?: { type: string; function: { name: string; description?: string; parameters: unknown } }[];
  tool_choice?: unknown;
  max_tokens?: number;
  response_format?: unknown;
  stream?: boolean;
  [field: string]: unknown;
}

export interface OpenAiStub {
  /** The server's origin; the OpenAI base URL is `${url}/v1`. */
  url: string;
  baseUrl: string;
  requests: StubRequest[];
  /** Replaces the script (and the fallback) and forgets the recorded requests. */
  script(replies: StubReply[], fallback?: StubReply): void;
  close(): Promise<void>;
}

export const DEFAULT_USAGE: StubUsage = { prompt_tokens: 10, completion_tokens: 5 };
const EXHAUSTED: StubReply = { status: 500, body: { error: { message: "stub: no scripted reply left" } } };

export async function startOpenAiStub(): Promise<OpenAiStub> {
  let queue: StubReply[] = [];
  let fallback: StubReply = EXHAUSTED;
  const requests: StubRequest[] = [];
  let counter = 0;
  const server: Server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    let body: ChatRequestBody | null = null;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      body = null;
    }
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const request: StubRequest = { method: req.method ?? "GET", path, headers: req.headers, body };
    requests.push(request);
    // Closed before the reply was sent: the client gave the call up.
    res.on("close", () => {
      request.dropped = !res.writableFinished;
    });
    const send = (status: number, payload: unknown) => {
      if (res.destroyed) return;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(payload));
    };
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      return send(404, { error: { message: `stub: no route ${req.method} ${path}` } });
    }
    if (!body) return send(400, { error: { message: "stub: the body is not JSON" } });
    if (body.stream) return send(400, { error: { message: "stub: streaming is not supported" } });
    let reply = queue.shift() ?? fallback;
    while (typeof reply === "function") reply = reply(request);
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.until) await reply.until;
    if ("status" in reply) return send(reply.status, reply.body ?? { error: { message: "stub error" } });
    counter += 1;
    const usage = reply.usage ?? DEFAULT_USAGE;
    const toolCalls =
      "toolCalls" in reply
        ? reply.toolCalls.map((call, index) => ({
            id: call.id ?? `call_${counter}_${index}`,
            type: "function",
            function: {
              name: call.name,
              arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments),
            },
          }))
        : undefined;
    send(200, {
      id: `chatcmpl-${counter}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: reply.content ?? null,
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: toolCalls ? "tool_calls" : "stop",
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    script(replies, next = EXHAUSTED) {
      queue = [...replies];
      fallback = next;
      requests.length = 0;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** The requests' bodies that reached the chat completions route. */
export const chatBodies = (stub: OpenAiStub): ChatRequestBody[] =>
  stub.requests.flatMap((request) => (request.body ? [request.body] : []));

/**
 * Replies held until `count` requests wait at once: a client that asks one question at a time never
 * opens it, and after `giveUpMs` the gate opens anyway with `gaveUp` set, so the test ends and says so.
 */
export function concurrencyGate(count: number, giveUpMs = 20_000) {
  let arrived = 0;
  let gaveUp = false;
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const timer = setTimeout(() => {
    gaveUp = true;
    open();
  }, giveUpMs);
  return {
    /** The reply to script: counts the request, and holds it until the gate opens. */
    reply(content: string): StubReply {
      arrived += 1;
      if (arrived === count) {
        clearTimeout(timer);
        open();
      }
      return { content, until: opened };
    },
    get arrived() {
      return arrived;
    },
    get gaveUp() {
      return gaveUp;
    },
  };
}
