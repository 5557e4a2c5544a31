// A local Apache Kafka broker for tests and local use, without Docker: the broker's jars come from Maven
// Central through Maven (deploy/kafka/pom.xml, cached in ~/.m2), and one JVM runs a single KRaft node
// that is both broker and controller, listening on 127.0.0.1 only.
//
//   node deploy/kafka/kafka-runner.ts                 prints KAFKA_BROKERS=127.0.0.1:<port>, runs until Ctrl-C
//   node deploy/kafka/kafka-runner.ts --port 9092 --data-dir /tmp/kafka --partitions 3 --version 3.9.2
//
//   const kafka = await startKafka();   // kafka.brokers = "127.0.0.1:<port>"
//   await kafka.restart();              // same ports, same data
//   await kafka.stop();
//
// Needs `java` (17+) and `mvn` on PATH. KAFKA_VERSION overrides the default broker version.
import type { ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { exited, freePort, logTail, run, spawnDaemon, tail, terminate } from "../jvm-process.ts";

/** The broker version used when none is given: the newest 4.x whose artifacts are all on Maven Central. */
export const DEFAULT_KAFKA_VERSION = process.env.KAFKA_VERSION || "4.3.1";

const here = import.meta.dirname;
const pom = join(here, "pom.xml");
const cacheRoot = join(homedir(), ".m2", "formsvc-kafka");
const readyTimeoutMs = 60_000;

export interface KafkaOptions {
  /** Where the broker keeps its data and, by default, its log; a fresh temporary directory when absent
   *  (removed again by stop()). A directory that already holds a formatted node is reused as it is. */
  dataDir?: string;
  /** The PLAINTEXT (client) port; a free one when absent. The controller always gets a free one. */
  port?: number;
  /** num.partitions: the partitions of automatically created topics. 3 when absent. */
  partitions?: number;
  /** The broker's log file (stdout and stderr of the JVM); <dataDir>/kafka.log when absent. */
  log?: string;
  /** The Kafka version, as for ensureKafkaJars. */
  version?: string;
}

export interface KafkaBroker {
  /** "127.0.0.1:<port>", for a client's `brokers`. */
  brokers: string;
  port: number;
  /** The broker's JVM process id while it runs (the bench counts its CPU time). */
  readonly pid: number | undefined;
  /** SIGTERM (a clean shutdown), SIGKILL after 15 s; then removes the data directory if startKafka made it. */
  stop(): Promise<void>;
  /** SIGKILL, keeping the data: restart() brings the same broker back (an unclean-shutdown recovery). */
  kill(): Promise<void>;
  /** Stops the broker (if running) and starts it again on the same ports with the same data, until ready. */
  restart(): Promise<void>;
}

/**
 * The Java classpath of the Kafka broker `version` (its kafka_2.13 jar, every runtime dependency and an
 * SLF4J binding), resolved by Maven into ~/.m2. The classpath is cached under ~/.m2/formsvc-kafka keyed by
 * version and pom, so a later call only checks that the jars are still there.
 */
export async function ensureKafkaJars(version: string = DEFAULT_KAFKA_VERSION): Promise<string> {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`not a Kafka version: ${version}`);
  const pomHash = createHash("sha256").update(readFileSync(pom)).digest("hex").slice(0, 12);
  const file = join(cacheRoot, `${version}-${pomHash}.classpath`);
  const cached = readClasspath(file);
  if (cached) return cached;
  // One Maven run per version in this process, however many brokers start at once.
  let resolving = resolvingJars.get(file);
  if (!resolving) {
    resolving = resolveJars(version, file).finally(() => resolvingJars.delete(file));
    resolvingJars.set(file, resolving);
  }
  return resolving;
}

const resolvingJars = new Map<string, Promise<string>>();

async function resolveJars(version: string, file: string): Promise<string> {
  mkdirSync(cacheRoot, { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  const args = [
    "-q", "-B", "-Dstyle.color=never", "-f", pom,
    `-Dkafka.version=${version}`,
    "dependency:build-classpath", "-Dmdep.includeScope=runtime", `-Dmdep.outputFile=${partial}`,
  ];
  const { code, output } = await run("mvn", args);
  if (code !== 0 || !existsSync(partial)) {
    rmSync(partial, { force: true });
    throw new Error(`mvn could not resolve Kafka ${version} (exit ${code}):\n${tail(output, 30)}`);
  }
  const classpath = readFileSync(partial, "utf8").trim();
  if (!classpath.includes(`/kafka_2.13-${version}.jar`)) {
    rmSync(partial, { force: true });
    throw new Error(`Kafka ${version}'s classpath lacks kafka_2.13: ${classpath}`);
  }
  renameSync(partial, file);
  return classpath;
}

function readClasspath(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const classpath = readFileSync(file, "utf8").trim();
  const jars = classpath.split(":");
  return jars.length > 0 && jars.every((jar) => existsSync(jar)) ? classpath : undefined;
}

/** Starts a single-node KRaft Kafka broker on 127.0.0.1 and resolves once it answers a Metadata request. */
export async function startKafka(options: KafkaOptions = {}): Promise<KafkaBroker> {
  const version = options.version ?? DEFAULT_KAFKA_VERSION;
  const classpath = await ensureKafkaJars(version);
  const ownDataDir = options.dataDir === undefined;
  const dataDir = resolve(options.dataDir ?? mkdtempSync(join(tmpdir(), "formsvc-kafka-")));
  mkdirSync(dataDir, { recursive: true });
  const logFile = resolve(options.log ?? join(dataDir, "kafka.log"));
  const port = options.port ?? (await freePort());
  let controllerPort = await freePort();
  while (controllerPort === port) controllerPort = await freePort();

  const properties = join(dataDir, "server.properties");
  writeFileSync(properties, serverProperties({ dataDir, port, controllerPort, partitions: options.partitions ?? 3 }));
  try {
    if (!existsSync(join(dataDir, "logs", "meta.properties"))) await format(classpath, properties, logFile);
  } catch (err) {
    if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  let child: ChildProcess | undefined;
  let stopped = false;

  const launch = async (): Promise<void> => {
    const began = performance.now();
    child = spawnBroker(classpath, properties, logFile);
    try {
      await waitReady(child, port, logFile);
      writeFileSync(logFile, `# kafka-runner: broker pid ${child.pid} ready on 127.0.0.1:${port} after ${Math.round(performance.now() - began)} ms\n`, { flag: "a" });
    } catch (err) {
      await terminate(child, "SIGKILL");
      child = undefined;
      throw err;
    }
  };
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const running = child;
    child = undefined;
    if (running) await terminate(running, signal);
  };

  try {
    await launch();
  } catch (err) {
    if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }

  return {
    brokers: `127.0.0.1:${port}`,
    port,
    get pid() {
      return child?.pid;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await halt("SIGTERM");
      if (ownDataDir) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      await halt("SIGKILL");
    },
    async restart() {
      if (stopped) throw new Error("the Kafka broker was stopped; start a new one");
      await halt("SIGTERM");
      await launch();
    },
  };
}

function serverProperties(p: { dataDir: string; port: number; controllerPort: number; partitions: number }): string {
  const lines = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": `1@127.0.0.1:${p.controllerPort}`,
    "listeners": `PLAINTEXT://127.0.0.1:${p.port},CONTROLLER://127.0.0.1:${p.controllerPort}`,
    "advertised.listeners": `PLAINTEXT://127.0.0.1:${p.port}`,
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "log.dirs": join(p.dataDir, "logs"),
    "num.partitions": String(p.partitions),
    "default.replication.factor": "1",
    "min.insync.replicas": "1",
    "auto.create.topics.enable": "true",
    "offsets.topic.replication.factor": "1",
    // The internal topics have 50 partitions by default, which makes a first consumer group or
    // transaction wait for 50 partitions to be created; 5 is plenty on one node.
    "offsets.topic.num.partitions": "5",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "5",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "group.initial.rebalance.delay.ms": "0",
    // After a kill(), the broker that comes back cannot register until the controller drops the old
    // registration's session (DUPLICATE_BROKER_REGISTRATION): 9 s by default.
    "broker.session.timeout.ms": "5000",
    "broker.heartbeat.interval.ms": "1000",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "num.recovery.threads.per.data.dir": "1",
    "log.retention.hours": "168",
  };
  return Object.entries(lines).map(([key, value]) => `${key}=${value}\n`).join("");
}

/** A random KRaft cluster id, as Kafka's Uuid.randomUuid() makes one: 16 random bytes in URL-safe base64. */
function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (!id.startsWith("-") && id !== "AAAAAAAAAAAAAAAAAAAAAA" && id !== "AAAAAAAAAAAAAAAAAAAAAQ") return id;
  }
}

// C1 only: the broker is ready in about half the time on a small, busy machine (measured 3.7-7 s against
// 7-13 s with C2 on 2 CPUs), and a test broker is not CPU-bound. KAFKA_OPTS="-XX:TieredStopAtLevel=4"
// brings C2 back.
const jvmOptions = [
  "-Xms128m", "-Xmx512m", "-XX:TieredStopAtLevel=1",
  "-Djava.awt.headless=true",
  "-Dorg.slf4j.simpleLogger.showDateTime=true",
  "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS",
];

async function format(classpath: string, properties: string, logFile: string): Promise<void> {
  const args = ["-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", classpath, "kafka.tools.StorageTool", "format", "-t", clusterId(), "-c", properties];
  const { code, output } = await run("java", args);
  writeFileSync(logFile, `# kafka-runner: kafka-storage ${args.slice(5).join(" ")}\n${output}\n`, { flag: "a" });
  if (code !== 0) throw new Error(`formatting Kafka's storage failed (exit ${code}):\n${tail(output, 30)}`);
}

function spawnBroker(classpath: string, properties: string, logFile: string): ChildProcess {
  // KAFKA_OPTS (as Kafka's own scripts read it) adds JVM options, after and so over the defaults.
  const extra = (process.env.KAFKA_OPTS ?? "").split(/\s+/).filter(Boolean);
  const gc = extra.some((option) => /^-XX:\+Use\w+GC$/.test(option)) ? [] : ["-XX:+UseG1GC"];
  return spawnDaemon(["java", ...jvmOptions, ...gc, ...extra, "-cp", classpath, "kafka.Kafka", properties], logFile);
}

async function waitReady(child: ChildProcess, port: number, logFile: string): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    if (exited(child)) {
      throw new Error(`the Kafka broker exited (${child.exitCode ?? child.signalCode}) before it was ready; log ${logFile}:\n${logTail(logFile)}`);
    }
    try {
      const metadata = await requestMetadata(port);
      if (metadata.brokers > 0 && metadata.controllerId >= 0) return;
      last = `metadata lists ${metadata.brokers} broker(s), controller ${metadata.controllerId}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`the Kafka broker did not answer on 127.0.0.1:${port} within ${readyTimeoutMs / 1000} s (${last}); log ${logFile}:\n${logTail(logFile)}`);
}

/**
 * Sends a Metadata v4 request for no topics (v4 is in every Kafka from 1.0 to 4.x; 4.0 dropped v0-v3)
 * and reads how many live brokers and which controller the answer lists.
 */
export function requestMetadata(port: number, host = "127.0.0.1", timeoutMs = 2_000): Promise<{ brokers: number; controllerId: number }> {
  return new Promise((resolveAnswer, reject) => {
    const clientId = Buffer.from("formsvc-kafka-runner");
    const body = Buffer.alloc(2 + 2 + 4 + 2 + clientId.length + 4 + 1);
    let at = 0;
    at = body.writeInt16BE(3, at); // api_key: Metadata
    at = body.writeInt16BE(4, at); // api_version
    at = body.writeInt32BE(1, at); // correlation_id
    at = body.writeInt16BE(clientId.length, at);
    at += clientId.copy(body, at);
    at = body.writeInt32BE(0, at); // topics: an empty array (none)
    body.writeInt8(0, at); // allow_auto_topic_creation
    const frame = Buffer.concat([Buffer.alloc(4), body]);
    frame.writeInt32BE(body.length, 0);

    const socket = connect({ host, port });
    let received = Buffer.alloc(0);
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.setTimeout(timeoutMs, () => fail(new Error("Metadata request timed out")));
    socket.once("error", fail);
    socket.once("connect", () => socket.write(frame));
    socket.once("close", () => fail(new Error("connection closed before a Metadata answer")));
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4 || received.length < 4 + received.readInt32BE(0)) return;
      try {
        let p = 4 + 4; // size, correlation_id
        p += 4; // throttle_time_ms
        const brokers = received.readInt32BE(p);
        p += 4;
        for (let i = 0; i < brokers; i++) {
          p += 4; // node_id
          p += 2 + received.readInt16BE(p); // host
          p += 4; // port
          const rack = received.readInt16BE(p);
          p += 2 + Math.max(rack, 0);
        }
        const clusterIdLength = received.readInt16BE(p);
        p += 2 + Math.max(clusterIdLength, 0);
        const controllerId = received.readInt32BE(p);
        socket.removeAllListeners("close");
        socket.destroy();
        resolveAnswer({ brokers, controllerId });
      } catch (err) {
        fail(err as Error);
      }
    });
  });
}

async function main(argv: string[]): Promise<void> {
  const options: KafkaOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--port") options.port = Number(value);
    else if (flag === "--data-dir") options.dataDir = value;
    else if (flag === "--partitions") options.partitions = Number(value);
    else if (flag === "--log") options.log = value;
    else if (flag === "--version") options.version = value;
    else {
      process.stderr.write("usage: node deploy/kafka/kafka-runner.ts [--port N] [--data-dir DIR] [--partitions N] [--log FILE] [--version X.Y.Z]\n");
      process.exit(2);
    }
    i++;
  }
  const kafka = await startKafka(options);
  process.stdout.write(`KAFKA_BROKERS=${kafka.brokers}\n`);
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    kafka.stop().then(() => process.exit(0), (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    });
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
  setInterval(() => {}, 1 << 30); // the broker is unref'd: stay up until a signal
}

if (import.meta.main) {
  main(process.argv.slice(2)).catch((err: Error) => {
    process.stderr.write(`kafka-runner: ${err.message}\n`);
    process.exit(1);
  });
}
