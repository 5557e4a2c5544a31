// Another commit's whole tree, runnable beside this one: the rolling-upgrade test runs the previous release
// from it, and scripts/bench-ab.ts --whole-tree the "before" side of a comparison.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot } from "./system.ts";

/** The release before the code of this tree (package.json's `previousRelease`): what an upgrade to it starts from. */
export function previousRelease(): { version: string; commit: string } {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
  return pkg.previousRelease;
}

const git = (...args: string[]) => execFileSync("git", args, { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** Longer than any `npm ci` of a tree: a lock older than this was left by a run that died while it held it. */
const staleLockMs = 30 * 60_000;

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * `commit`'s tree as a git worktree in the temp directory (outside the repository, so that nothing that walks it,
 * tsc, dpdm or duplicates, meets a second tree) with its own `npm ci`; made once and kept for the next run. Two
 * runs on one machine (two clones' tests, a bench beside them) take turns by a lock directory: one removing the
 * tree the other was installing once left a tree marked whole without its workspace links.
 */
export function checkedOutTree(commit: string, options: { quiet?: boolean } = {}): string {
  const short = git("rev-parse", "--short", commit);
  const dir = join(tmpdir(), `formsvc-tree-${short}`);
  // Written after the install succeeded: a run cut short in `npm ci` leaves no half tree taken for whole.
  const installed = join(dir, ".formsvc-installed");
  const lock = `${dir}.lock`;
  for (;;) {
    if (existsSync(installed)) return dir;
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const lockedAt = statSync(lock, { throwIfNoEntry: false })?.mtimeMs;
      if (lockedAt !== undefined && Date.now() - lockedAt > staleLockMs) rmSync(lock, { recursive: true, force: true });
      else pause(1_000);
    }
  }
  try {
    if (existsSync(installed)) return dir;
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    git("worktree", "prune");
    git("worktree", "add", "--detach", dir, short);
    execFileSync("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline"], { cwd: dir, stdio: options.quiet ? ["ignore", "ignore", "inherit"] : "inherit" });
    writeFileSync(installed, `${commit}\n`);
    return dir;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}
