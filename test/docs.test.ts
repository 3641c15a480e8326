// The documents a user reads: every relative link resolves inside the repository, and no document
// points outside it (a clone has nothing beside the checkout).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const SKIP = new Set(["node_modules", ".git", "data", "dist"]);

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (SKIP.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith(".md") ? [path] : [];
  });
}

/** Link targets of a markdown text: `[text](target)`, without titles and anchors. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1] ?? "";
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("#")) continue;
    targets.push(target.split("#")[0] ?? "");
  }
  return targets;
}

describe("documentation", () => {
  const files = markdownFiles(ROOT);

  it("finds the documents", () => {
    const names = files.map((file) => relative(ROOT, file));
    expect(names).toEqual(
      expect.arrayContaining(["README.md", "CONTRIBUTING.md", "docs/api.md", "bench/README.md"]),
    );
  });

  it.each(files.map((file) => [relative(ROOT, file), file]))(
    "%s links only to files that exist here",
    (_name, file) => {
      const broken = linkTargets(readFileSync(file, "utf8")).filter((target) => {
        const path = resolve(dirname(file), target);
        return !path.startsWith(`${ROOT}/`) || !existsSync(path);
      });
      expect(broken).toEqual([]);
    },
  );

  it("reads links the way a markdown viewer does", () => {
    expect(
      linkTargets('[a](docs/api.md#errors) [b](https://example.com) [c](#top) [d](../x.md "t")'),
    ).toEqual(["docs/api.md", "../x.md"]);
  });
});
