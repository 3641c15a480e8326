// PGlite is single-process: two processes on one data directory would corrupt it. A pid file
// refuses the second one; a file left by a process that is gone is taken over.
//
// A live pid is not enough: after a crash or a reboot, the pid in a stale file may belong to an
// unrelated process. So the file also records when its process started and the boot it ran in
// (Linux /proc), and the holder counts only while the process with that pid is that very process.
// A file of the older, pid-only kind counts while its pid runs node with "vigil" in its command line.
// Without /proc, a live pid is assumed to hold the directory.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: number,
    /** Where the holder serves HTTP, when it said so (`noteServingUrl`). */
    readonly url: string | null = null,
  ) {
    super(`DATA_DIR ${dataDir} is in use by process ${holder}; use DATABASE_URL to run several instances`);
    this.name = "DataDirInUseError";
  }
}

interface LockRecord {
  pid: number;
  /** Start time of the process, in clock ticks since boot (/proc/<pid>/stat field 22). */
  start: string | null;
  boot: string | null;
  url?: string | null;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function startTimeOf(pid: number): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ")".
  const fields = stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
  return fields?.[19] ?? null;
}

function bootId(): string | null {
  return readText("/proc/sys/kernel/random/boot_id")?.trim() || null;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** First line the pid (so `head -1 vigil.pid` still works), then `start <ticks>` and `boot <id>`. */
function format(record: LockRecord): string {
  const lines = [String(record.pid)];
  if (record.start) lines.push(`start ${record.start}`);
  if (record.boot) lines.push(`boot ${record.boot}`);
  if (record.url) lines.push(`url ${record.url}`);
  return `${lines.join("\n")}\n`;
}

function parse(text: string): LockRecord {
  const [first = "", ...rest] = text.split("\n");
  const fields = new Map(rest.map((line) => line.trim().split(/\s+/, 2) as [string, string]));
  return {
    pid: Number(first.trim()),
    start: fields.get("start") ?? null,
    boot: fields.get("boot") ?? null,
    url: fields.get("url") ?? null,
  };
}

/** True when the process the record names still runs: the same process, not just the same pid. */
function holds(record: LockRecord): boolean {
  const { pid } = record;
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !isAlive(pid)) return false;
  const start = startTimeOf(pid);
  if (start === null) return true;
  if (record.start !== null) {
    const boot = bootId();
    return record.start === start && (record.boot === null || boot === null || record.boot === boot);
  }
  const argv = (readText(`/proc/${pid}/cmdline`) ?? "").split("\0");
  return /node/.test(argv[0]?.split("/").pop() ?? "") && argv.some((arg) => arg.includes("vigil"));
}

function ownRecord(): LockRecord {
  return { pid: process.pid, start: startTimeOf(process.pid), boot: bootId() };
}

function tryCreate(path: string): boolean {
  try {
    writeFileSync(path, format(ownRecord()), { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return false;
  }
}

export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, "vigil.pid");
  // Twice at most: once on a free directory, once after removing a stale file.
  for (let attempt = 0; attempt < 2 && !tryCreate(path); attempt++) {
    const text = readText(path) ?? "";
    const record = parse(text);
    if (holds(record) || attempt === 1) throw new DataDirInUseError(dataDir, record.pid, record.url);
    // Only the file judged stale: another process may have replaced it meanwhile.
    if ((readText(path) ?? "") === text) rmSync(path, { force: true });
  }
  return () => rmSync(path, { force: true });
}

/**
 * Adds the URL this process serves HTTP on to its lock, so that a command refused the directory
 * can name the port the server really listens on, not the one its own environment would pick.
 */
export function noteServingUrl(dataDir: string, url: string): void {
  const path = join(dataDir, "vigil.pid");
  const record = parse(readText(path) ?? "");
  if (record.pid === process.pid) writeFileSync(path, format({ ...record, url }));
}
