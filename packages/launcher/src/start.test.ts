import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";
import { serviceNames } from "@formsvc/platform/config.ts";
import { freeSystemPorts } from "./ports.ts";
import { entryOf, repoRoot } from "./system.ts";

const startScript = join(repoRoot, "packages/launcher/src/start.ts");
const missing = [...serviceNames, "gateway"].map((name) => entryOf(name)).filter((entry) => !existsSync(entry));

interface Proc {
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

function descendantsOf(pid: number): Proc[] {
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

interface Launched {
  child: ChildProcess;
  output: () => string;
  url: string;
  seconds: number;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function launch(env: Record<string, string>, timeoutMs = 240_000): Promise<Launched> {
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

async function stopAndCheck(launched: Launched, dataDir: string): Promise<number> {
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

test(
  "npm start runs the system on embedded Postgres, starts again on the same data, and stops without leftovers",
  {
    timeout: 600_000,
    skip: missing.length > 0 && `not every entry exists yet: ${missing.map((m) => relative(repoRoot, m)).join(", ")}`,
  },
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), "formsvc-start-"));
    let launched: Launched | undefined;
    try {
      const ports = await freeSystemPorts();
      const env: Record<string, string> = {
        ...(process.env as Record<string, string>),
        ...ports,
        DATA_DIR: dataDir,
        DATABASE_URL: "",
        SECRET_KEY: "",
        PUBLIC_URL: "",
      };
      delete env.NODE_TEST_CONTEXT;

      launched = await launch(env);
      t.diagnostic(`first start (initdb included): URL printed after ${launched.seconds.toFixed(1)} s`);
      assert.equal(launched.url, `http://localhost:${ports.PORT}`);
      assert.match(launched.output(), /npm run -s cli -- user:create --email you@example.com/);
      assert.match(launched.output(), /npm run -s cli -- key:create --email you@example.com --name first/);

      const response = await fetch(`http://127.0.0.1:${ports.PORT}/api/v1/users/me`);
      assert.equal(response.status, 401);
      assert.match(response.headers.get("content-type") ?? "", /application\/json/);
      assert.equal(typeof ((await response.json()) as { error?: unknown }).error, "string");

      const secretFile = join(dataDir, "secret-key");
      assert.equal(statSync(secretFile).mode & 0o777, 0o600);
      const secret = readFileSync(secretFile, "utf8");
      assert.equal(Buffer.from(secret.trim(), "base64url").length, 32);
      t.diagnostic(`first stop took ${(await stopAndCheck(launched, dataDir)).toFixed(1)} s`);

      launched = await launch(env);
      t.diagnostic(`second start (existing cluster): URL printed after ${launched.seconds.toFixed(1)} s`);
      assert.doesNotMatch(launched.output(), /initialising the embedded Postgres/);
      assert.equal(readFileSync(secretFile, "utf8"), secret, "the generated SECRET_KEY is reused");
      assert.equal((await fetch(`http://127.0.0.1:${ports.PORT}/api/v1/users/me`)).status, 401);
      t.diagnostic(`second stop took ${(await stopAndCheck(launched, dataDir)).toFixed(1)} s`);
    } finally {
      if (launched && launched.child.exitCode === null && launched.child.signalCode === null) {
        for (const p of descendantsOf(launched.child.pid!)) {
          try {
            process.kill(p.pid, "SIGKILL");
          } catch {}
        }
        launched.child.kill("SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
);
