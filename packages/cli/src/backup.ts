// `backup` and `restore`: the whole database and the local file store in one file, and back.
//
// The file is a gzipped tar: `manifest.json` first (what the file holds), then the database, then
// `files/` (DATA_DIR/files; with S3_BUCKET the bucket is the operator's to back up, and is not in it).
// - With DATABASE_URL: `database.dump`, a pg_dump (custom format) of every service's schema, taken in
//   one snapshot by one pg_dump, with a pg_dump whose major version is at least the server's.
// - With the embedded Postgres: `postgres/`, an online base backup of its cluster (the low-level backup
//   API, `pg_backup_start`/`pg_backup_stop`, with the WAL written meanwhile, kept by a temporary
//   replication slot), and `postgres-password`. The embedded Postgres ships no pg_dump, and no pg_dump of
//   its major version (17) is to be had on every machine; a base backup needs none and restores exactly.
// Either way `secret-key` (DATA_DIR's generated key, which signs file links and sessions) goes along
// when there is one, so links made before the backup still work after a restore.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, createReadStream, createWriteStream, existsSync, openSync, readFileSync, readSync, readdirSync, statSync } from "node:fs";
import { chmod, lstat, mkdir, open, readdir, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, relative, resolve, sep } from "node:path";
import { finished } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import pg from "pg";
import { serviceNames, type Config } from "@formsvc/platform/config.ts";
import { version } from "@formsvc/platform/version.ts";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "@formsvc/launcher/embedded-postgres.ts";
import { readTar, TarWriter } from "./tar.ts";

/** What `manifest.json` says about a backup. */
export interface Manifest {
  format: "formsvc-backup";
  formatVersion: 1;
  /** The release that made it (package.json's version). */
  version: string;
  createdAt: string;
  /** `pg_dump`: database.dump of `schemas`; `embedded-cluster`: postgres/, the embedded cluster. */
  database: "pg_dump" | "embedded-cluster";
  /** The Postgres server's version, e.g. "17.10". */
  serverVersion: string;
  /** The pg_dump that wrote database.dump, e.g. "15.20" (pg_dump only). */
  pgDumpVersion?: string;
  schemas: string[];
  /** `local`: files/ holds DATA_DIR/files; `s3`: the files are in the bucket, not in this file. */
  fileStore: "local" | "s3";
  files: number;
  fileBytes: number;
  secretKey: boolean;
}

export interface BackupResult {
  file: string;
  bytes: number;
  version: string;
  database: Manifest["database"];
  schemas: string[];
  files: number;
  /** Said when the file store is S3: the bucket is not in the file. */
  note?: string;
  seconds: number;
}

const s3Note = (bucket: string) =>
  `uploaded files are kept in the S3 bucket ${bucket} and are not in this file: back the bucket up yourself (versioning, replication or a copy of it)`;

/** The user the embedded Postgres is logged in to (packages/launcher/src/embedded-postgres.ts). */
const embeddedUser = "postgres";
/** The database the services share in the embedded Postgres (`embeddedDatabase` of packages/launcher/src/start.ts). */
const embeddedDatabase = "formsvc";

// ---------------------------------------------------------------------------------------------------
// Finding pg_dump and pg_restore

interface PgTool {
  path: string;
  major: number;
  version: string;
}

function toolVersion(path: string): PgTool | undefined {
  try {
    const out = execFileSync(path, ["--version"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const m = /\(PostgreSQL\)\s+(\d+)(?:\.(\d+))?/.exec(out);
    return m ? { path, major: Number(m[1]), version: m[2] ? `${m[1]}.${m[2]}` : m[1] } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The newest `name` (pg_dump or pg_restore) to be found: in PG_BIN_DIR when set (only there), else on PATH
 * and in Debian's and Homebrew's per-version directories.
 */
export function findPgTool(name: "pg_dump" | "pg_restore", env: NodeJS.ProcessEnv = process.env): PgTool | undefined {
  const candidates: string[] = [];
  if (env.PG_BIN_DIR) candidates.push(join(env.PG_BIN_DIR, name));
  else {
    for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean)) candidates.push(join(dir, name));
    for (const base of ["/usr/lib/postgresql", "/opt/homebrew/opt", "/usr/local/opt"]) {
      try {
        for (const entry of readdirSync(base)) candidates.push(join(base, entry, "bin", name));
      } catch {
        // not on this machine
      }
    }
  }
  const found = candidates.filter((path) => existsSync(path)).map(toolVersion).filter((t): t is PgTool => t !== undefined);
  return found.sort((a, b) => b.major - a.major)[0];
}

function needTool(name: "pg_dump" | "pg_restore", serverMajor: number, env: NodeJS.ProcessEnv): PgTool {
  const tool = findPgTool(name, env);
  const install = `install the PostgreSQL ${serverMajor} (or newer) client programs (Debian: postgresql-client-${serverMajor}), or set PG_BIN_DIR to the directory of a ${name} ${serverMajor} or newer`;
  if (!tool) throw new Error(`no ${name} found${env.PG_BIN_DIR ? ` in PG_BIN_DIR (${env.PG_BIN_DIR})` : " on PATH"}: ${install}`);
  if (tool.major < serverMajor) {
    throw new Error(`${name} ${tool.version} (${tool.path}) cannot ${name === "pg_dump" ? "dump" : "restore into"} a PostgreSQL ${serverMajor} server: ${install}`);
  }
  return tool;
}

/** libpq's environment for a connection string, the password kept out of the command line (and `ps`). */
function libpqEnv(databaseUrl: string, env: NodeJS.ProcessEnv): { dbname: string; env: NodeJS.ProcessEnv } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = "";
  return { dbname: url.toString(), env: { ...env, ...(password ? { PGPASSWORD: password } : {}) } };
}

/**
 * A path the operator typed: from the directory they ran `npm run` in (npm runs the script in the
 * repository's root and says where it was called from in INIT_CWD).
 */
function operatorPath(path: string, env: NodeJS.ProcessEnv): string {
  return resolve(env.INIT_CWD || process.cwd(), path);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${command.split(sep).at(-1)} failed (${signal ?? `code ${code}`}): ${stderr.trim().split("\n").slice(-5).join("; ")}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// The embedded Postgres

const clusterDirOf = (dataDir: string) => join(dataDir, "postgres");

/** The pid and port of the embedded Postgres running on DATA_DIR's cluster, from its postmaster.pid. */
export function runningEmbeddedPostgres(dataDir: string): { pid: number; port: number } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(join(clusterDirOf(dataDir), "postmaster.pid"), "utf8").split("\n");
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return undefined;
  }
  return { pid, port };
}

/** What a base backup leaves out of a cluster (PostgreSQL's "Making a Base Backup Using the Low Level API"). */
const clusterSkips = new Set(["postmaster.pid", "postmaster.opts", "backup_label", "backup_label.old", "tablespace_map"]);
const clusterEmptied = new Set(["pg_wal", "pg_replslot", "pg_stat_tmp", "pg_dynshmem", "pg_notify", "pg_serial", "pg_snapshots", "pg_subtrans"]);

async function addTree(tar: TarWriter, root: string, prefix: string, skip: (rel: string, isDir: boolean) => "skip" | "empty" | "keep"): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  const walk = async (dir: string) => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
      throw err;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const entry of entries) {
      const path = join(dir, entry.name);
      const rel = relative(root, path).split(sep).join("/");
      let st;
      try {
        st = await lstat(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw err;
      }
      const decision = skip(rel, st.isDirectory());
      if (decision === "skip" || entry.name.startsWith("pgsql_tmp")) continue;
      if (st.isDirectory()) {
        await tar.directory(`${prefix}/${rel}`, st.mode, st.mtimeMs / 1000);
        if (decision !== "empty") await walk(path);
      } else if (st.isFile()) {
        if (await tar.file(`${prefix}/${rel}`, path, st.size, st.mode, st.mtimeMs / 1000)) {
          files++;
          bytes += st.size;
        }
      } else if (st.isSymbolicLink()) {
        throw new Error(`${path} is a symbolic link (a tablespace or a moved pg_wal?): a backup of such a cluster is not supported`);
      }
    }
  };
  await walk(root);
  return { files, bytes };
}

async function connectEmbedded(dataDir: string, port: number, database = embeddedDatabase): Promise<pg.Client> {
  const password = readFileSync(join(dataDir, "postgres-password"), "utf8").trim();
  const client = new pg.Client({ host: "127.0.0.1", port, user: embeddedUser, password, database, application_name: "formsvc backup" });
  await client.connect();
  return client;
}

/** An online base backup of the embedded cluster into `tar` under postgres/. */
async function backupEmbeddedCluster(tar: TarWriter, dataDir: string, client: pg.Client): Promise<void> {
  const clusterDir = clusterDirOf(dataDir);
  // The WAL from the backup's start on is kept until this session ends, whatever checkpoints run meanwhile.
  await client.query("select pg_create_physical_replication_slot($1, true, true)", [`formsvc_backup_${process.pid}_${randomBytes(3).toString("hex")}`]);
  const started = await client.query<{ lsn: string; segment: string }>(
    "select lsn::text, pg_walfile_name(lsn) as segment from pg_backup_start($1, true) as lsn",
    [`formsvc ${version} backup`],
  );
  let stopped: { segment: string; labelfile: string; spcmapfile: string | null };
  try {
    await tar.directory("postgres", 0o700);
    await addTree(tar, clusterDir, "postgres", (rel, isDir) => {
      const [top, ...rest] = rel.split("/");
      if (rest.length === 0 && !isDir && clusterSkips.has(top)) return "skip";
      if (clusterEmptied.has(top)) return rest.length === 0 ? "empty" : "skip";
      return "keep";
    });
  } finally {
    const res = await client.query<{ segment: string; labelfile: string; spcmapfile: string | null }>(
      "select pg_walfile_name(lsn) as segment, labelfile, spcmapfile from pg_backup_stop(false)",
    );
    stopped = res.rows[0];
  }
  await tar.buffer("postgres/backup_label", stopped.labelfile, 0o600);
  if (stopped.spcmapfile) await tar.buffer("postgres/tablespace_map", stopped.spcmapfile, 0o600);
  // The WAL from the start's segment to the stop's (pg_backup_stop switched segments, so the stop's is whole on disk).
  const walDir = join(clusterDir, "pg_wal");
  const first = started.rows[0].segment;
  const timeline = first.slice(0, 8);
  const segments = readdirSync(walDir)
    .filter((name) => /^[0-9A-F]{24}$/.test(name) && name.startsWith(timeline) && name >= first && name <= stopped.segment)
    .sort();
  if (segments[0] !== first) throw new Error(`the WAL segment ${first}, where the backup starts, is gone from ${walDir}: try again`);
  for (const name of segments) {
    const st = statSync(join(walDir, name));
    await tar.file(`postgres/pg_wal/${name}`, join(walDir, name), st.size, 0o600, st.mtimeMs / 1000);
  }
  for (const name of readdirSync(walDir).filter((n) => n.endsWith(".history"))) {
    await tar.buffer(`postgres/pg_wal/${name}`, readFileSync(join(walDir, name)), 0o600);
  }
}

// ---------------------------------------------------------------------------------------------------
// Backup

function listFiles(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.isFile()) {
        files++;
        bytes += statSync(join(d, e.name)).size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

async function serverMajorOf(client: pg.Client): Promise<number> {
  return (await client.query<{ n: number }>("select current_setting('server_version_num')::int / 10000 as n")).rows[0].n;
}

async function serviceSchemas(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>("select nspname as name from pg_namespace where nspname = any($1) order by nspname", [[...serviceNames]]);
  return rows.map((r) => r.name);
}

/** `npm run -s cli -- backup --out FILE`: while the system runs (or not). */
export async function backup(config: Config, out: string, env: NodeJS.ProcessEnv = process.env): Promise<BackupResult> {
  const began = performance.now();
  const file = operatorPath(out, env);
  const filesDir = join(config.dataDir, "files");
  const secretKeyFile = join(config.dataDir, "secret-key");
  const hasSecretKey = existsSync(secretKeyFile);
  const local = config.s3 === undefined;

  let client: pg.Client;
  let embedded: EmbeddedPostgres | undefined;
  let pgDump: PgTool | undefined;
  if (config.databaseUrl) {
    client = new pg.Client({ connectionString: config.databaseUrl, application_name: "formsvc backup" });
    await client.connect();
  } else {
    if (!existsSync(join(clusterDirOf(config.dataDir), "PG_VERSION"))) {
      throw new Error(`there is no embedded database under ${config.dataDir} (DATA_DIR) to back up, and DATABASE_URL is not set`);
    }
    let running = runningEmbeddedPostgres(config.dataDir);
    if (!running) {
      // The system is stopped: start its Postgres for the backup alone.
      embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, database: "postgres" });
      running = { pid: embedded.process.pid!, port: embedded.port };
    }
    client = await connectEmbedded(config.dataDir, running.port);
  }
  const partial = `${file}.partial-${process.pid}`;
  let dumpDir: string | undefined;
  let gzip: ReturnType<typeof createGzip> | undefined;
  try {
    const serverVersion = (await client.query<{ v: string }>("select current_setting('server_version') as v")).rows[0].v.split(" ")[0];
    const serverMajor = await serverMajorOf(client);
    const schemas = await serviceSchemas(client);
    if (schemas.length === 0) throw new Error("the database holds none of the services' schemas: nothing to back up (has the system ever started on it?)");
    if (config.databaseUrl) pgDump = needTool("pg_dump", serverMajor, env);
    const counted = local ? listFiles(filesDir) : { files: 0, bytes: 0 };
    const manifest: Manifest = {
      format: "formsvc-backup",
      formatVersion: 1,
      version,
      createdAt: new Date().toISOString(),
      database: config.databaseUrl ? "pg_dump" : "embedded-cluster",
      serverVersion,
      ...(pgDump ? { pgDumpVersion: pgDump.version } : {}),
      schemas,
      fileStore: local ? "local" : "s3",
      files: counted.files,
      fileBytes: counted.bytes,
      secretKey: hasSecretKey,
    };

    await mkdir(dirname(file), { recursive: true });
    gzip = createGzip({ level: 6 });
    const sink = createWriteStream(partial, { mode: 0o600 });
    const written = finished(gzip.pipe(sink));
    written.catch(() => {}); // awaited below; a failure before then is the one reported
    const tar = new TarWriter(gzip);
    await tar.buffer("manifest.json", JSON.stringify(manifest, null, 2) + "\n", 0o644);
    if (pgDump) {
      // One pg_dump is one transaction: every schema from the same snapshot.
      dumpDir = await makeTempDir();
      const dumpFile = join(dumpDir, "database.dump");
      const { dbname, env: pgEnv } = libpqEnv(config.databaseUrl!, env);
      await run(pgDump.path, ["--format=custom", "--file", dumpFile, ...schemas.flatMap((s) => ["--schema", s]), "--dbname", dbname], pgEnv);
      const st = statSync(dumpFile);
      await tar.file("database.dump", dumpFile, st.size, 0o600, st.mtimeMs / 1000);
    } else {
      await backupEmbeddedCluster(tar, config.dataDir, client);
      await tar.buffer("postgres-password", readFileSync(join(config.dataDir, "postgres-password")), 0o600);
    }
    if (hasSecretKey) await tar.buffer("secret-key", readFileSync(secretKeyFile), 0o600);
    if (local) {
      await tar.directory("files", 0o755);
      await addTree(tar, filesDir, "files", () => "keep");
    }
    await tar.finish();
    gzip.end();
    await written;
    await rename(partial, file);
    return {
      file,
      bytes: statSync(file).size,
      version,
      database: manifest.database,
      schemas,
      files: counted.files,
      ...(config.s3 ? { note: s3Note(config.s3.bucket) } : {}),
      seconds: Number(((performance.now() - began) / 1000).toFixed(2)),
    };
  } finally {
    gzip?.destroy();
    await client.end().catch(() => {});
    await embedded?.stop();
    await rm(partial, { force: true });
    if (dumpDir) await rm(dumpDir, { recursive: true, force: true });
  }
}

async function makeTempDir(): Promise<string> {
  const dir = join(tmpdir(), `formsvc-backup-${process.pid}-${randomBytes(4).toString("hex")}`);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

// ---------------------------------------------------------------------------------------------------
// Restore

export interface RestoreResult {
  restored: string;
  version: string;
  createdAt: string;
  database: Manifest["database"];
  schemas: string[];
  files: number;
  note?: string;
  seconds: number;
}

/** The entries, a file that is not gzip said so plainly. */
async function* notGzip<T>(entries: AsyncGenerator<T>, file: string): AsyncGenerator<T> {
  try {
    yield* entries;
  } catch (err) {
    if (String((err as NodeJS.ErrnoException).code).startsWith("Z_")) throw new Error(`${file} is not a formsvc backup (not a gzipped tar), or it is damaged: ${(err as Error).message}`);
    throw err;
  }
}

/** A pg_dump custom-format archive starts with "PGDMP". */
function isBareDump(file: string): boolean {
  const fd = openSync(file, "r");
  try {
    const head = Buffer.alloc(5);
    readSync(fd, head, 0, 5, 0);
    return head.toString("latin1") === "PGDMP";
  } finally {
    closeSync(fd);
  }
}

async function refuseWhileConnected(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      "select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'",
    );
    if (Number(rows[0].n) > 0) {
      throw new Error(`${rows[0].n} other sessions are connected to the database (is the system running?): stop every process of the system before a restore`);
    }
  } finally {
    await client.end();
  }
}

/** Drops every service's schema, then pg_restore puts the dump's back in one transaction. */
async function restoreDump(databaseUrl: string, dumpFile: string, schemas: string[], dumpMajor: number, env: NodeJS.ProcessEnv): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const pgRestore = needTool("pg_restore", Math.max(await serverMajorOf(client), dumpMajor), env);
    // Everything of the services goes, whatever a later release added: the backup's schemas come back as they were.
    const dropped = [...new Set([...schemas, ...serviceNames])];
    await client.query(`drop schema if exists ${dropped.map((s) => client.escapeIdentifier(s)).join(", ")} cascade`);
    const { dbname, env: pgEnv } = libpqEnv(databaseUrl, env);
    await run(pgRestore.path, ["--exit-on-error", "--single-transaction", "--no-owner", "--no-privileges", "--dbname", dbname, dumpFile], pgEnv);
  } finally {
    await client.end();
  }
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/).slice(0, 3).map(Number);
  const pb = b.split(/[.+-]/).slice(0, 3).map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

/** A path inside `root` for an archive name, or an error for one that would leave it. */
function inside(root: string, name: string): string {
  const path = resolve(root, name);
  if (path !== root && !path.startsWith(root + sep)) throw new Error(`the backup file names ${name}, outside where it restores to`);
  return path;
}

async function writeEntry(path: string, chunks: AsyncGenerator<Buffer>, mode: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const handle = await open(path, "w", mode & 0o777 || 0o600);
  try {
    for await (const chunk of chunks) await handle.write(chunk);
  } finally {
    await handle.close();
  }
  await chmod(path, mode & 0o777 || 0o600);
}

/**
 * `npm run -s cli -- restore --from FILE --yes`: with the system stopped, puts the backup back: the
 * embedded cluster under DATA_DIR, or the services' schemas in DATABASE_URL (dropped, then pg_restore);
 * then DATA_DIR/files and the generated secret key.
 */
export async function restore(config: Config, from: string, env: NodeJS.ProcessEnv = process.env): Promise<RestoreResult> {
  const began = performance.now();
  const file = operatorPath(from, env);
  if (!existsSync(file)) throw new Error(`${file} does not exist`);
  const local = config.s3 === undefined;

  // Refuse while the system runs: its services hold connections to the database (DATABASE_URL) or its
  // embedded Postgres is up (npm start).
  if (config.databaseUrl) {
    await refuseWhileConnected(config.databaseUrl);
    if (isBareDump(file)) {
      // A pg_dump (custom format) of the services' schemas alone, as the Kubernetes CronJob writes it.
      await restoreDump(config.databaseUrl, file, [...serviceNames], 0, env);
      return {
        restored: file,
        version,
        createdAt: statSync(file).mtime.toISOString(),
        database: "pg_dump",
        schemas: [...serviceNames],
        files: 0,
        note: "the file is a pg_dump of the database alone: uploaded files were not in it",
        seconds: Number(((performance.now() - began) / 1000).toFixed(2)),
      };
    }
  } else {
    const running = runningEmbeddedPostgres(config.dataDir);
    if (running) throw new Error(`the embedded Postgres under ${config.dataDir} is running (pid ${running.pid}): stop the system (npm start) before a restore`);
    if (isBareDump(file)) throw new Error(`${file} is a pg_dump of a Postgres server's database: restore it with DATABASE_URL set to that server's database`);
  }

  await mkdir(config.dataDir, { recursive: true });
  const staging = join(config.dataDir, `.restore-${process.pid}-${randomBytes(3).toString("hex")}`);
  await mkdir(staging, { mode: 0o700 });
  let manifest: Manifest | undefined;
  try {
    const gunzip = createGunzip();
    const entries = readTar(createReadStream(file).pipe(gunzip));
    for await (const entry of notGzip(entries, file)) {
      if (!manifest) {
        if (entry.name !== "manifest.json") throw new Error(`${file} is not a formsvc backup (it does not start with manifest.json)`);
        manifest = JSON.parse((await entry.buffer()).toString("utf8")) as Manifest;
        if (manifest.format !== "formsvc-backup") throw new Error(`${file} is not a formsvc backup`);
        if (compareVersions(manifest.version, version) > 0) {
          throw new Error(`the backup was made by formsvc ${manifest.version}, newer than this one (${version}): restore it with ${manifest.version} or later`);
        }
        if (manifest.database === "embedded-cluster" && config.databaseUrl) {
          throw new Error("the backup holds the embedded Postgres's cluster: restore it without DATABASE_URL (into DATA_DIR's embedded database)");
        }
        if (manifest.database === "pg_dump" && !config.databaseUrl) {
          throw new Error("the backup holds a pg_dump of a Postgres server: restore it with DATABASE_URL set to a server's database");
        }
        continue;
      }
      const path = inside(staging, entry.name);
      if (entry.type === "directory") await mkdir(path, { recursive: true, mode: entry.mode & 0o777 || 0o700 });
      else await writeEntry(path, entry.chunks(), entry.mode);
    }
    if (!manifest) throw new Error(`${file} is empty`);

    if (manifest.database === "pg_dump") {
      const dumpFile = join(staging, "database.dump");
      if (!existsSync(dumpFile)) throw new Error(`${file} holds no database.dump`);
      await restoreDump(config.databaseUrl!, dumpFile, manifest.schemas, Number(manifest.pgDumpVersion?.split(".")[0] ?? 0), env);
    } else {
      const stagedCluster = join(staging, "postgres");
      if (!existsSync(join(stagedCluster, "PG_VERSION"))) throw new Error(`${file} holds no embedded cluster (postgres/)`);
      await chmod(stagedCluster, 0o700);
      const clusterDir = clusterDirOf(config.dataDir);
      await rm(clusterDir, { recursive: true, force: true });
      await rename(stagedCluster, clusterDir);
      await rename(join(staging, "postgres-password"), join(config.dataDir, "postgres-password"));
    }
    if (existsSync(join(staging, "secret-key"))) await rename(join(staging, "secret-key"), join(config.dataDir, "secret-key"));
    if (local && manifest.fileStore === "local") {
      const filesDir = join(config.dataDir, "files");
      await rm(filesDir, { recursive: true, force: true });
      if (existsSync(join(staging, "files"))) await rename(join(staging, "files"), filesDir);
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }

  if (manifest.database === "embedded-cluster") {
    // Start it once: Postgres replays the backup's WAL to a consistent state now rather than at the next
    // npm start, and a damaged backup is told here.
    const postgres = await startEmbeddedPostgres({ dataDir: config.dataDir, database: "postgres" });
    try {
      const client = await connectEmbedded(config.dataDir, postgres.port, "postgres");
      await client.end();
    } finally {
      await postgres.stop();
    }
  }
  const note =
    manifest.fileStore === "s3"
      ? "the backup was made with S3_BUCKET: its files are in the bucket, not in the backup; restore the bucket to the same moment"
      : !local
        ? "S3_BUCKET is set: the backup's local files were not put into the bucket; they are left out"
        : undefined;
  return {
    restored: file,
    version: manifest.version,
    createdAt: manifest.createdAt,
    database: manifest.database,
    schemas: manifest.schemas,
    files: manifest.files,
    ...(note ? { note } : {}),
    seconds: Number(((performance.now() - began) / 1000).toFixed(2)),
  };
}
