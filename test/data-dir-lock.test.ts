// The pid file that keeps a second process off an embedded data directory: it must refuse a live
// Vigil, and must not be fooled by a stale file whose pid now belongs to an unrelated process.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { DataDirInUseError, lockDataDir } from "../src/core/db/data-dir-lock.ts";

const LOCK_MODULE = new URL("../src/core/db/data-dir-lock.ts", import.meta.url).pathname;
const children = new Set<ChildProcess>();

function start(command: string, args: string[]): ChildProcess {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
  children.add(child);
  child.on("exit", () => children.delete(child));
  return child;
}

function startTimeOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
}

async function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout?.on("data", (chunk) => {
      text += chunk;
      if (text.includes("\n")) resolve(text.split("\n")[0] ?? "");
    });
    child.on("exit", (code) => reject(new Error(`exited with ${code} before printing`)));
  });
}

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
});

describe.runIf(existsSync("/proc/self/stat"))("the data directory lock", () => {
  let dataDir = "";
  let unrelated: ChildProcess;
  const pidFile = () => join(dataDir, "vigil.pid");

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "vigil-lock-"));
    // A live process that is not Vigil, standing in for one that got a dead Vigil's pid.
    unrelated = start("sleep", ["30"]);
  });
  afterEach(() => {
    unrelated.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("records its pid first, with the process's start time, and removes the file on unlock", () => {
    const unlock = lockDataDir(dataDir);
    const lines = readFileSync(pidFile(), "utf8").trim().split("\n");
    expect(lines[0]).toBe(String(process.pid));
    expect(lines[1]).toBe(`start ${startTimeOf(process.pid)}`);
    unlock();
    expect(existsSync(pidFile())).toBe(false);
  });

  it("takes over a pid-only file whose pid is now an unrelated process", () => {
    writeFileSync(pidFile(), String(unrelated.pid));
    const unlock = lockDataDir(dataDir);
    expect(readFileSync(pidFile(), "utf8").split("\n")[0]).toBe(String(process.pid));
    unlock();
  });

  it("takes over a file whose pid lives but started at another time", () => {
    const start = Number(startTimeOf(unrelated.pid ?? 0));
    writeFileSync(pidFile(), `${unrelated.pid}\nstart ${start - 1}\n`);
    const unlock = lockDataDir(dataDir);
    expect(readFileSync(pidFile(), "utf8").split("\n")[0]).toBe(String(process.pid));
    unlock();
  });

  it("refuses while the recorded process itself still runs", () => {
    const record = `${unrelated.pid}\nstart ${startTimeOf(unrelated.pid ?? 0)}\n`;
    writeFileSync(pidFile(), record);
    expect(() => lockDataDir(dataDir)).toThrow(new DataDirInUseError(dataDir, unrelated.pid ?? 0).message);
    expect(readFileSync(pidFile(), "utf8")).toBe(record);
  });

  it("refuses a pid-only file of a live node process running vigil", async () => {
    const vigilLike = start(process.execPath, [
      "-e",
      "console.log('up'); setInterval(() => {}, 1000)",
      "bin/vigil.js",
    ]);
    await firstLine(vigilLike);
    writeFileSync(pidFile(), String(vigilLike.pid));
    expect(() => lockDataDir(dataDir)).toThrow(DataDirInUseError);
    vigilLike.kill("SIGKILL");
  });

  it("refuses a directory locked by another process, and takes it over once that one is killed", async () => {
    const holder = start(process.execPath, [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `const { lockDataDir } = await import(${JSON.stringify(LOCK_MODULE)});
       lockDataDir(process.argv[1]); console.log("locked"); setInterval(() => {}, 1000);`,
      dataDir,
    ]);
    expect(await firstLine(holder)).toBe("locked");
    expect(() => lockDataDir(dataDir)).toThrow(`is in use by process ${holder.pid}`);

    const exited = new Promise((resolve) => holder.on("exit", resolve));
    holder.kill("SIGKILL");
    await exited;
    const unlock = lockDataDir(dataDir);
    expect(readFileSync(pidFile(), "utf8").split("\n")[0]).toBe(String(process.pid));
    unlock();
  });
});
