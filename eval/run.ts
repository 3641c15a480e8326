// `npm run eval -- <name>` runs eval/<name>/run.ts (its default export), which prints its figures;
// `npm run eval` lists the evals. An eval measures quality on a labelled set kept in the repository.
import { existsSync, readdirSync } from "node:fs";

const here = new URL("./", import.meta.url);
const known = readdirSync(here, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(new URL(`${entry.name}/run.ts`, here)))
  .map((entry) => entry.name)
  .sort();

const requested = process.argv.slice(2).filter((arg) => arg !== "--");
const unknown = requested.filter((name) => !known.includes(name));
if (requested.length === 0 || unknown.length > 0) {
  if (unknown.length > 0) console.error(`unknown eval: ${unknown.join(", ")}`);
  console.error(`usage: npm run eval -- <name>; known: ${known.join(", ")}`);
  process.exit(2);
}
for (const name of requested) {
  const module = (await import(new URL(`${name}/run.ts`, here).href)) as { default: () => Promise<void> };
  await module.default();
}
