// What the JVM runners under deploy/ (Kafka, S3Mock) share: a free loopback port, a short command run to
// completion, and a long-lived JVM that dies with this process and is stopped gently, then firmly.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

const stopGraceMs = 15_000;

/** A port nothing listens on at 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Runs `command` to its end, with its stdout and stderr together. */
export function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.once("error", (err) => reject(new Error(`could not run ${command}: ${err.message}`)));
    child.once("close", (code) => resolveRun({ code, output: Buffer.concat(chunks).toString("utf8") }));
  });
}

/** The last `lines` lines of `text`, without terminal colours. */
export function tail(text: string, lines: number): string {
  return text.replace(/\x1b\[[0-9;]*m/g, "").trimEnd().split("\n").slice(-lines).join("\n");
}

export function logTail(file: string, lines = 40): string {
  try {
    return tail(readFileSync(file, "utf8"), lines);
  } catch {
    return "(no log)";
  }
}

const setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].some((path) => existsSync(path));
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Starts `command` (a JVM) with its output appended to `logFile`; it dies with this process. */
export function spawnDaemon(command: string[], logFile: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const fd = openSync(logFile, "a");
  try {
    // setpriv (util-linux) makes the kernel SIGKILL the child when this process dies, even by SIGKILL
    // or an unhandled signal, which no exit handler sees; without it, the exit handler below is all.
    const full = setpriv ? ["setpriv", "--pdeathsig", "SIGKILL", "--", ...command] : command;
    const child = spawn(full[0], full.slice(1), { stdio: ["ignore", fd, fd], env });
    // A daemon left running must not keep the test process alive, and dies with it (see below).
    child.unref();
    running.add(child);
    child.once("exit", () => running.delete(child));
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once("exit", () => {
        for (const orphan of running) orphan.kill("SIGKILL");
      });
    }
    return child;
  } finally {
    closeSync(fd);
  }
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Sends `signal` and waits for the exit; SIGKILL after 15 s (5 s when `signal` already is SIGKILL). */
export async function terminate(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (exited(child)) return;
  const gone = new Promise<void>((resolveGone) => child.once("exit", () => resolveGone()));
  // spawnDaemon unrefs the child; waiting for its exit must hold the event loop, or a broker slower than
  // the grace period to stop leaves nothing to wait on and the caller's await never ends.
  child.ref();
  child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), signal === "SIGKILL" ? 5_000 : stopGraceMs);
  try {
    await gone;
  } finally {
    clearTimeout(timer);
  }
}
