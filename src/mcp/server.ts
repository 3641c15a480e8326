// One MCP server per request (stateless Streamable HTTP): the caller is authenticated by the route
// (Bearer API key or app token, the workspace from ?orgId), and every tool checks its own scope.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CallToolRequest,
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  RequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallerCtx } from "../core/context.ts";
import { AppError } from "../core/errors.ts";
import { advertisedInput, MCP_TOOLS, validInput } from "./tools.ts";

const text = (value: string, isError = false): CallToolResult => ({
  content: [{ type: "text", text: value }],
  ...(isError ? { isError: true } : {}),
});

/** An error the SDK's Server answers as the JSON-RPC error `code` with `message` as it is. */
const protocolError = (code: ErrorCode, message: string) => Object.assign(new Error(message), { code });

export function createMcpServer(ctx: CallerCtx, version: string): Server {
  const server = new Server({ name: "vigil-sre", version }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: MCP_TOOLS.map((tool) => ({
      name: tool.name,
      description: `${tool.description} (scope ${tool.scope})`,
      inputSchema: advertisedInput(tool),
    })),
  }));
  // Registered with any params: the SDK's Server checks a tools/call request itself and answers bad
  // params with -32602 (Invalid params), but the schema given here is checked first, and its
  // failure (arguments not an object, no name) went out as -32603, an internal error.
  const anyParams = CallToolRequestSchema.extend({ params: RequestSchema.shape.params });
  server.setRequestHandler(anyParams, async (request) => {
    const params = request.params as CallToolRequest["params"];
    const tool = MCP_TOOLS.find((item) => item.name === params.name);
    // An unknown tool is a protocol error (MCP: tools, error handling), not a result of a tool. Not
    // an McpError: its message starts "MCP error -32602: ", which the SDK's client adds again.
    if (!tool) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${params.name}`);
    if (!ctx.actor.scopes.includes(tool.scope)) {
      return text(
        `INSUFFICIENT_SCOPE: this token lacks the scope ${tool.scope} that ${tool.name} needs`,
        true,
      );
    }
    try {
      const output = await tool.run(ctx, validInput(tool, params.arguments) as never);
      return text(typeof output === "string" ? output : JSON.stringify(output));
    } catch (err) {
      // Expected outcomes (not found, a bad filter) are the tool's answer; anything else is a bug.
      if (err instanceof AppError && err.status < 500) return text(`${err.code}: ${err.message}`, true);
      ctx.log.error({ err, tool: tool.name }, "MCP tool failed");
      return text("INTERNAL: the tool failed; see the server log", true);
    }
  });
  return server;
}
