// The proposed change: clone the git integration's base branch, find the rule file that defines the
// alert (by its alert name), edit the rule and take `git diff`. Nothing is committed or pushed here.
import { lstat, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { IntegrationConnection } from "../../integrations/index.ts";
import type { RuleFix } from "../investigator/conclude.ts";
import { editRule } from "./edit-rule.ts";
import { git, type RemoteConfig, withClone } from "./git.ts";

const RULE_FILE = /\.(ya?ml|rules)$/i;
const FILE_MAX_BYTES = 1024 * 1024;
const FILES_MAX = 5000;

export type Proposal =
  | { file: string; diff: string; summary: string; baseCommit: string }
  | { file: null; reason: string };

/**
 * Rule files of the checkout in path order: the files git tracks (so nothing under .git, and never a
 * path through a symbolic link, which git tracks as a link of its own).
 */
async function ruleFiles(connection: IntegrationConnection, dir: string, signal?: AbortSignal) {
  const listed = await git(connection, ["ls-files", "-z"], { cwd: dir, signal });
  return listed
    .split("\0")
    .filter((path) => RULE_FILE.test(path))
    .sort()
    .slice(0, FILES_MAX);
}

export async function proposeRuleChange(
  connection: IntegrationConnection,
  config: RemoteConfig,
  input: { alertname: string; fix: RuleFix },
  signal?: AbortSignal,
): Promise<Proposal> {
  return withClone(
    connection,
    config,
    async (dir) => {
      const misses: string[] = [];
      for (const file of await ruleFiles(connection, dir, signal)) {
        const path = join(dir, file);
        // lstat: a symbolic link in the repository could point anywhere on this machine; never followed.
        const info = await lstat(path);
        if (!info.isFile() || info.size > FILE_MAX_BYTES) continue;
        const text = await readFile(path, "utf8");
        if (!text.includes(input.alertname)) continue;
        const edit = editRule(text, input.alertname, input.fix);
        if (edit.text === null) {
          misses.push(`${file}: ${edit.reason}`);
          continue;
        }
        await writeFile(path, edit.text, "utf8");
        const diff = await git(connection, ["diff", "--no-color", "--", file], { cwd: dir, signal });
        const baseCommit = await git(connection, ["rev-parse", "HEAD"], { cwd: dir, signal });
        return { file, diff: `${diff}\n`, summary: edit.summary, baseCommit };
      }
      return {
        file: null,
        reason: misses.length
          ? `the rule could not be changed (${misses.join("; ")})`
          : `no rule file of ${connection.name} defines the alert ${input.alertname}`,
      };
    },
    signal,
  );
}

/** Applies an approved diff to a fresh clone of the base branch and pushes it as `branch`. */
export async function pushChange(
  connection: IntegrationConnection,
  config: RemoteConfig,
  input: { diff: string; branch: string; message: string },
): Promise<{ commit: string }> {
  return withClone(connection, config, async (dir) => {
    const patch = join(dir, "..", "change.diff");
    await writeFile(patch, input.diff, "utf8");
    await git(connection, ["apply", "--index", "--", patch], { cwd: dir });
    await git(connection, ["commit", "--quiet", "--no-verify", "-m", input.message], { cwd: dir });
    const commit = await git(connection, ["rev-parse", "HEAD"], { cwd: dir });
    // No force: a branch of that name already on the remote refuses the push rather than losing work.
    await git(connection, ["push", "--quiet", "origin", `HEAD:refs/heads/${input.branch}`], { cwd: dir });
    return { commit };
  });
}
