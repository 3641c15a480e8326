// PGlite is single-process: two processes on one data directory would corrupt it. A pid file
// refuses the second one; a file left by a crashed process is taken over.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function lockDataDir(dataDir: string): () => void {
  const path = join(dataDir, "vigil.pid");
  try {
    writeFileSync(path, String(process.pid), { flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    const holder = Number(readFileSync(path, "utf8"));
    if (holder !== process.pid && Number.isInteger(holder) && isAlive(holder)) {
      throw new Error(
        `DATA_DIR ${dataDir} is in use by process ${holder}; use DATABASE_URL to run several instances`,
      );
    }
    writeFileSync(path, String(process.pid));
  }
  return () => rmSync(path, { force: true });
}
