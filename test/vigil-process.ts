// The real `vigil` command in a child process, as an operator runs it, for the tests that start,
// signal and restart it. Every child is remembered so a test file can kill what it left running.
import { type ChildProcess, spawn } from "node:child_process";

const BIN = new URL("../bin/vigil.js", import.meta.url).pathname;
const children = new Set<ChildProcess>();

export interface Running {
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr together. */
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * `vigil ARGS` with only PATH, LOG_LEVEL=info and `env` in its environment; `bin` runs another
 * checkout's `bin/vigil.js`.
 */
export function runVigil(args: string[], env: Record<string, string>, bin = BIN): Running {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.add(child);
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  exited.then(() => children.delete(child));
  return { child, output: () => output, exited };
}

/** SIGKILL every child still running: for afterAll, so a failed test leaves no server behind. */
export function killVigils(): void {
  for (const child of children) child.kill("SIGKILL");
}
