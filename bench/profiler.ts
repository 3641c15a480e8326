// Optional CPU profiles per scenario: BENCH_PROFILE_DIR=/tmp/prof writes one .cpuprofile for each
// (open them in Chrome DevTools or any cpuprofile viewer). Off by default.
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";

const dir = process.env.BENCH_PROFILE_DIR?.trim() || null;
let session: Session | null = null;

export async function startProfile(): Promise<void> {
  if (!dir) return;
  if (!session) {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    await session.post("Profiler.setSamplingInterval", { interval: 200 });
  }
  await session.post("Profiler.start");
}

export async function stopProfile(name: string): Promise<void> {
  if (!dir || !session) return;
  const { profile } = await session.post("Profiler.stop");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
}
