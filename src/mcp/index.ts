// The MCP server of the SRE app (Streamable HTTP, stateless). app.ts reaches it only here.
export { mcpRoutes as registerMcp } from "./routes.ts";
