// A local S3-compatible server for tests and local use, without Docker: Adobe S3Mock's executable jar
// (com.adobe.testing:s3mock:<version>:jar:exec) comes from Maven Central through Maven (cached in
// ~/.m2), and one JVM serves plain HTTP on 127.0.0.1 with one bucket.
//
//   node deploy/s3/s3mock-runner.ts                  prints the S3_* settings, runs until Ctrl-C
//   node deploy/s3/s3mock-runner.ts --port 9090 --bucket files --data-dir /tmp/s3
//
//   const s3 = await startS3Mock();   // s3.env: S3_ENDPOINT, S3_BUCKET, ... for submissions
//   await s3.stop();
//
// Needs `java` (17+; S3Mock 5 is built for Java 17) and `mvn` on PATH. S3MOCK_VERSION overrides the version.
//
// S3Mock always opens a second plain connector (its `http.port`) on every interface, whatever
// `server.address` says; the runner gives it a free ephemeral port and never uses it. The one used is the
// main connector, TLS turned off and bound to 127.0.0.1.
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { exited, freePort, logTail, run, spawnDaemon, tail, terminate } from "../jvm-process.ts";

export const DEFAULT_S3MOCK_VERSION = process.env.S3MOCK_VERSION || "5.0.0";
/** S3Mock accepts any credentials; these are what clients are configured with. */
const accessKeyId = "s3mock";
const secretAccessKey = "s3mock-secret";
const readyTimeoutMs = 90_000;

export interface S3MockOptions {
  /** The port on 127.0.0.1; a free one when absent. */
  port?: number;
  /** The bucket made at start; "formsvc-files" when absent. */
  bucket?: string;
  /** Where S3Mock keeps objects; a fresh temporary directory when absent (removed again by stop()). */
  dataDir?: string;
  /** The JVM's output; <dataDir>/s3mock.log when absent. */
  log?: string;
  version?: string;
}

export interface S3Mock {
  endpoint: string;
  bucket: string;
  port: number;
  /** The S3_* settings that point submissions at this server. */
  env: Record<string, string>;
  /** SIGTERM, SIGKILL after 15 s; then removes the data directory if startS3Mock made it. */
  stop(): Promise<void>;
}

/** The path of S3Mock's executable jar in ~/.m2, fetched from Maven Central by Maven when missing. */
export async function ensureS3MockJar(version: string = DEFAULT_S3MOCK_VERSION): Promise<string> {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`not an S3Mock version: ${version}`);
  const jar = join(homedir(), ".m2", "repository", "com", "adobe", "testing", "s3mock", version, `s3mock-${version}-exec.jar`);
  if (existsSync(jar)) return jar;
  let fetching = fetchingJars.get(version);
  if (!fetching) {
    fetching = fetchJar(version, jar).finally(() => fetchingJars.delete(version));
    fetchingJars.set(version, fetching);
  }
  return fetching;
}

const fetchingJars = new Map<string, Promise<string>>();

async function fetchJar(version: string, jar: string): Promise<string> {
  const artifact = `com.adobe.testing:s3mock:${version}:jar:exec`;
  const { code, output } = await run("mvn", ["-q", "-B", "-Dstyle.color=never", "dependency:get", `-Dartifact=${artifact}`, "-Dtransitive=false"]);
  if (code !== 0 || !existsSync(jar)) throw new Error(`mvn could not fetch ${artifact} (exit ${code}):\n${tail(output, 30)}`);
  return jar;
}

/** Starts S3Mock on 127.0.0.1 with one bucket and resolves once it lists that bucket. */
export async function startS3Mock(options: S3MockOptions = {}): Promise<S3Mock> {
  const jar = await ensureS3MockJar(options.version);
  const bucket = options.bucket ?? "formsvc-files";
  const ownDataDir = options.dataDir === undefined;
  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), "formsvc-s3mock-")));
  mkdirSync(dataDir, { recursive: true });
  const logFile = resolve(options.log ?? join(dataDir, "s3mock.log"));
  const port = options.port ?? (await freePort());
  const endpoint = `http://127.0.0.1:${port}`;

  const began = performance.now();
  const child = spawnDaemon(
    [
      "java", "-Xms64m", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true", "-jar", jar,
      "--server.address=127.0.0.1", `--server.port=${port}`, "--server.ssl.enabled=false", "--http.port=0",
      // Single PUTs and multipart parts up to 64 MiB (10 MB by default).
      "--com.adobe.testing.s3mock.max-payload-size=64MB",
    ],
    logFile,
    {
      ...process.env,
      COM_ADOBE_TESTING_S3MOCK_STORE_INITIAL_BUCKETS: bucket,
      COM_ADOBE_TESTING_S3MOCK_STORE_ROOT: join(dataDir, "objects"),
      COM_ADOBE_TESTING_S3MOCK_STORE_RETAIN_FILES_ON_EXIT: "true",
    },
  );
  try {
    await waitReady(child, endpoint, bucket, logFile);
  } catch (err) {
    await terminate(child, "SIGKILL");
    if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  writeFileSync(logFile, `# s3mock-runner: pid ${child.pid} ready on ${endpoint} after ${Math.round(performance.now() - began)} ms\n`, { flag: "a" });

  let stopped = false;
  return {
    endpoint,
    bucket,
    port,
    env: {
      S3_ENDPOINT: endpoint,
      S3_REGION: "us-east-1",
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: accessKeyId,
      S3_SECRET_ACCESS_KEY: secretAccessKey,
      S3_FORCE_PATH_STYLE: "true",
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await terminate(child, "SIGTERM");
      if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Ready once ListBuckets (GET /) answers with the bucket in it. */
async function waitReady(child: ChildProcess, endpoint: string, bucket: string, logFile: string): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (exited(child)) {
      throw new Error(`S3Mock exited (${child.exitCode ?? child.signalCode}) before it was ready; log ${logFile}:\n${logTail(logFile)}`);
    }
    try {
      const res = await fetch(`${endpoint}/`, { signal: AbortSignal.timeout(2_000) });
      const body = await res.text();
      if (res.ok && body.includes(`<Name>${bucket}</Name>`)) return;
      last = `ListBuckets answered ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(250);
  }
  throw new Error(`S3Mock did not answer on ${endpoint} within ${readyTimeoutMs / 1000} s (${last}); log ${logFile}:\n${logTail(logFile)}`);
}

async function main(argv: string[]): Promise<void> {
  const options: S3MockOptions = {};
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--port") options.port = Number(value);
    else if (flag === "--bucket") options.bucket = value;
    else if (flag === "--data-dir") options.dataDir = value;
    else if (flag === "--log") options.log = value;
    else if (flag === "--version") options.version = value;
    else {
      process.stderr.write("usage: node deploy/s3/s3mock-runner.ts [--port N] [--bucket NAME] [--data-dir DIR] [--log FILE] [--version X.Y.Z]\n");
      process.exit(2);
    }
  }
  const s3 = await startS3Mock(options);
  for (const [name, value] of Object.entries(s3.env)) process.stdout.write(`${name}=${value}\n`);
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    s3.stop().then(() => process.exit(0), (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    });
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  setInterval(() => {}, 1 << 30); // the JVM is unref'd: stay up until a signal
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((err: Error) => {
    process.stderr.write(`s3mock-runner: ${err.message}\n`);
    process.exit(1);
  });
}
