// Vigil for the ingest bench, in a process of its own (started by ingest.ts with an IPC channel), so
// the CPU the bench reads from /proc is the server's alone, not the load generator's. It starts as
// `vigil serve` does (startVigil with the configuration from the environment: DATABASE_URL,
// VIGIL_ROLE, ...), listens on a free loopback port, and answers the bench's messages: `begin` and
// `end` around a scenario (event-loop use, statement counts, an optional CPU profile), `stop`.
// It exits when the bench goes away, however the bench ended.
import { performance } from "node:perf_hooks";
import { loadConfig } from "../src/config.ts";
import { startVigil } from "../src/start.ts";
import { startProfile, stopProfile } from "./profiler.ts";
import { installQueryCounter, type QueryStats, queryStats, resetQueryStats } from "./query-counter.ts";

export type ServerMessage = { type: "begin" } | { type: "end"; name: string } | { type: "stop" };

export type ServerReply =
  | { type: "listening"; port: number }
  | { type: "begun" }
  | {
      type: "ended";
      /** How busy the server's event loop was during the scenario. */
      loopPercent: number;
      queries: [string, QueryStats][];
    };

if (!process.send) throw new Error("ingest-server.ts is started by the ingest bench (with an IPC channel)");
const send = (reply: ServerReply) => process.send?.(reply);

installQueryCounter();
const vigil = await startVigil(loadConfig(process.env, { port: 0, host: "127.0.0.1" }));
const address = await vigil.app.listen({ port: 0, host: "127.0.0.1" });

process.on("disconnect", () => process.exit(1));
let loopBefore = performance.eventLoopUtilization();
process.on("message", async (message: ServerMessage) => {
  if (message.type === "begin") {
    resetQueryStats();
    await startProfile();
    loopBefore = performance.eventLoopUtilization();
    send({ type: "begun" });
  } else if (message.type === "end") {
    const loop = performance.eventLoopUtilization(loopBefore);
    await stopProfile(message.name);
    send({ type: "ended", loopPercent: loop.utilization * 100, queries: queryStats() });
  } else {
    await vigil.stop();
    process.exit(0);
  }
});
send({ type: "listening", port: Number(new URL(address).port) });
