// `npm start` as a test runs it: its entry in a child process, the URL it prints, and a stop that
// proves nothing it started outlives it.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { serviceNames } from "@formsvc/platform/config.ts";
import { repoRoot } from "../system.ts";

/** `npm start`'s entry. */
export const startScript = join(repoRoot, "packages/launcher/src/start.ts");

export interface Proc {
  pid: number;
  cmdline: string;
}

function processes(): Map<number, { ppid: number; cmdline: string }> {
  const all = new Map<number, { ppid: number; cmdline: string }>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      all.set(Number(entry), { ppid, cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return all;
}

/** The processes under `pid` (children, their children, ...), from /proc. */
export function descendantsOf(pid: number): Proc[] {
  const all = processes();
  const found: Proc[] = [];
  const visit = (parent: number) => {
    for (const [child, info] of all) {
      if (info.ppid === parent) {
        found.push({ pid: child, cmdline: info.cmdline });
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** Processes still there that were descendants of the launcher or that name its data directory. */
function leftovers(descendants: Proc[], dataDir: string): string[] {
  const all = processes();
  const left = descendants.filter((p) => all.get(p.pid)?.cmdline === p.cmdline).map((p) => `${p.pid} ${p.cmdline}`);
  for (const [pid, info] of all) if (info.cmdline.includes(dataDir)) left.push(`${pid} ${info.cmdline}`);
  return [...new Set(left)];
}

/**
 * Kills a launcher still running, and what it started: its services are in process groups of their own
 * (see startSystem), so its own group would not reach them.
 */
export function killLauncher(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  for (const p of descendantsOf(child.pid!)) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {}
  }
  child.kill("SIGKILL");
}

export interface Launched {
  child: ChildProcess;
  output: () => string;
  url: string;
  seconds: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function launch(env: Record<string, string>, timeoutMs = 240_000): Promise<Launched> {
  const began = performance.now();
  const child = spawn(process.execPath, [startScript], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL within ${timeoutMs / 1000} s; output:\n${output}`)), timeoutMs);
    const check = () => {
      const match = /formsvc is running at (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on("data", check);
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the launcher exited (code ${code}, signal ${signal}) before it printed its URL; output:\n${output}`));
    });
  });
  return { child, output: () => output, url, seconds: (performance.now() - began) / 1000, exit };
}

export async function stopAndCheck(launched: Launched, dataDir: string): Promise<number> {
  const descendants = descendantsOf(launched.child.pid!);
  assert.ok(descendants.length > serviceNames.length, `expected the services, the gateway and Postgres under the launcher: ${JSON.stringify(descendants)}`);
  const began = performance.now();
  launched.child.kill("SIGTERM");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the launcher did not exit within 60 s of SIGTERM")), 60_000).unref());
  const { code, signal } = await Promise.race([launched.exit, timeout]);
  assert.equal(signal, null, launched.output());
  assert.equal(code, 0, launched.output());
  assert.deepEqual(leftovers(descendants, dataDir), [], "no process of the launcher may outlive it");
  return (performance.now() - began) / 1000;
}

/** Whether `pid` is a running process (a zombie, exited but not reaped by whoever adopted it, is not). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}
