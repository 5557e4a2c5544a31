// Another commit's whole tree, runnable beside this one: the rolling-upgrade test runs the previous release
// from it, and scripts/bench-ab.ts --whole-tree the "before" side of a comparison.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./system.ts";

/** The release before the code of this tree (package.json's `previousRelease`): what an upgrade to it starts from. */
export function previousRelease(): { version: string; commit: string } {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
  return pkg.previousRelease;
}

const git = (...args: string[]) => execFileSync("git", args, { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/**
 * `commit`'s tree as a git worktree in the temp directory (outside the repository, so that nothing that walks it,
 * tsc, dpdm or duplicates, meets a second tree) with its own `npm ci`; made once and kept for the next run.
 */
export function checkedOutTree(commit: string, options: { quiet?: boolean } = {}): string {
  const short = git("rev-parse", "--short", commit);
  const dir = join(tmpdir(), `formsvc-tree-${short}`);
  // Written after the install succeeded: a run cut short in `npm ci` leaves no half tree taken for whole.
  const installed = join(dir, ".formsvc-installed");
  if (existsSync(installed)) return dir;
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  git("worktree", "prune");
  git("worktree", "add", "--detach", dir, short);
  execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir, stdio: options.quiet ? ["ignore", "ignore", "inherit"] : "inherit" });
  writeFileSync(installed, `${commit}\n`);
  return dir;
}
