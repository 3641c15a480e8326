// CPU time a process has used, all its threads, read from /proc/<pid>/stat (Linux): utime + stime.
import { readFileSync } from "node:fs";

/** Linux reports a process's CPU time in clock ticks of 1/100 s (USER_HZ). */
const TICKS_PER_SECOND = 100;

/** Seconds of CPU `pid` has used so far; null when it is gone (or this is not Linux). */
export function cpuSeconds(pid: number): number | null {
  try {
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
