// backup and restore below the whole system: the embedded cluster's online base backup (under writes)
// into a fresh DATA_DIR, a server's pg_dump into a fresh database, and what each refuses.
// tests/backup-restore.test.ts does it to the running system and compares its API's answers.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import pg from "pg";
import { startEmbeddedPostgres } from "@formsvc/launcher/embedded-postgres.ts";
import { freePort } from "@formsvc/launcher/ports.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { version } from "@formsvc/platform/version.ts";
import { findPgTool } from "./backup.ts";
import { runCli } from "./main.ts";

const work = mkdtempSync(join(tmpdir(), "formsvc-backup-test-"));
// The embedded Postgres runs as the user `postgres` when the tests run as root: it must reach DATA_DIR.
chmodSync(work, 0o755);
after(() => rmSync(work, { recursive: true, force: true }));

async function cli(env: Record<string, string>, ...args: string[]): Promise<any> {
  const result = await runCli(args, { env: { PATH: process.env.PATH, DATABASE_URL: "", S3_BUCKET: "", ...env } });
  if (result.code !== 0) throw new Error(JSON.parse(result.stderr!).error);
  return JSON.parse(result.stdout!);
}

function someFiles(dataDir: string): Record<string, Buffer> {
  const files = { abc: randomBytes(70_000), [`f${"x".repeat(120)}`]: Buffer.from("a long name") };
  mkdirSync(join(dataDir, "files"), { recursive: true });
  for (const [name, bytes] of Object.entries(files)) writeFileSync(join(dataDir, "files", name), bytes);
  writeFileSync(join(dataDir, "secret-key"), "generated-key\n", { mode: 0o600 });
  return files;
}

function assertFiles(dataDir: string, files: Record<string, Buffer>): void {
  for (const [name, bytes] of Object.entries(files)) assert.ok(readFileSync(join(dataDir, "files", name)).equals(bytes), `files/${name} is back, byte for byte`);
  assert.equal(readFileSync(join(dataDir, "secret-key"), "utf8"), "generated-key\n", "the generated secret key is back");
}

/** Inserts one row into each of two schemas' tables per transaction until stopped: a consistent copy has as many of each. */
function pairWriter(client: pg.Client) {
  let stop = false;
  let pairs = 0;
  const done = (async () => {
    while (!stop) {
      await client.query("begin");
      await client.query("insert into identity.a (v) values ($1)", [pairs]);
      await client.query("insert into forms.b (v) values ($1)", [pairs]);
      await client.query("commit");
      pairs++;
    }
  })();
  return {
    get pairs() {
      return pairs;
    },
    stop: async () => {
      stop = true;
      await done;
    },
  };
}

const schemaSql = [
  "create schema identity",
  "create table identity.a (id bigserial primary key, v int not null)",
  "create schema forms",
  "create table forms.b (id bigserial primary key, v int not null) partition by range (id)",
  "create table forms.b_1 partition of forms.b for values from (0) to (1000000000)",
  `create or replace function forms.touch() returns trigger language plpgsql as $$ begin return new; end $$`,
  "create trigger touch before insert on forms.b for each row execute function forms.touch()",
];

async function counts(client: pg.Client) {
  const { rows } = await client.query<{ a: string; b: string; next: string }>(
    "select (select count(*) from identity.a) as a, (select count(*) from forms.b) as b, (select last_value from identity.a_id_seq) as next",
  );
  return { a: Number(rows[0].a), b: Number(rows[0].b), sequence: Number(rows[0].next) };
}

describe("backup and restore of the embedded Postgres (a base backup of its cluster)", () => {
  it("backs up a running cluster under writes, and restores it into a fresh DATA_DIR as it was at one moment", { timeout: 180_000 }, async (t) => {
    const source = join(work, "source");
    mkdirSync(source, { recursive: true });
    const files = someFiles(source);
    const postgres = await startEmbeddedPostgres({ dataDir: source, database: "formsvc", port: await freePort() });
    const client = new pg.Client({ connectionString: postgres.databaseUrl });
    await client.connect();
    let writer: ReturnType<typeof pairWriter> | undefined;
    let before: Awaited<ReturnType<typeof counts>> | undefined;
    const file = join(work, "embedded.tar.gz");
    try {
      for (const sql of schemaSql) await client.query(sql);
      await client.query("insert into identity.a (v) select g from generate_series(1, 5000) g");
      await client.query("insert into forms.b (v) select g from generate_series(1, 5000) g");
      before = await counts(client);
      writer = pairWriter(client);
      const out = await cli({ DATA_DIR: source }, "backup", "--out", file);
      const during = writer.pairs;
      await writer.stop();
      t.diagnostic(`backup: ${out.bytes} bytes in ${out.seconds} s, ${during} pairs written meanwhile`);
      assert.equal(out.file, file);
      assert.equal(out.bytes, readFileSync(file).length);
      assert.equal(out.database, "embedded-cluster");
      assert.deepEqual(out.schemas, ["forms", "identity"]);
      assert.equal(out.files, 2);
      assert.equal(out.version, version);

      const refused = await runCli(["restore", "--from", file, "--yes"], { env: { PATH: process.env.PATH, DATA_DIR: source, DATABASE_URL: "" } });
      assert.equal(refused.code, 1);
      assert.match(JSON.parse(refused.stderr!).error, /embedded Postgres .* is running .*stop the system/);
    } finally {
      await writer?.stop();
      await client.end();
      await postgres.stop();
    }

    const target = join(work, "target");
    const restored = await cli({ DATA_DIR: target }, "restore", "--from", file, "--yes");
    assert.equal(restored.database, "embedded-cluster");
    assert.equal(restored.version, version);
    assertFiles(target, files);
    const again = await startEmbeddedPostgres({ dataDir: target, database: "formsvc", port: await freePort() });
    const check = new pg.Client({ connectionString: again.databaseUrl });
    await check.connect();
    try {
      const after = await counts(check);
      assert.equal(after.a, after.b, "both tables from one moment: every pair whole, none half");
      assert.ok(after.a >= before!.a, `nothing from before the backup is missing (${after.a} >= ${before!.a})`);
      assert.ok(after.sequence >= after.a, "the sequence is past every id");
      await check.query("insert into forms.b (v) values (1)"); // the restored cluster takes writes
    } finally {
      await check.end();
      await again.stop();
    }
  });

  it("backs up a stopped system's cluster too (starting its Postgres for the backup)", { timeout: 120_000 }, async () => {
    const dataDir = join(work, "source");
    assert.ok(existsSync(join(dataDir, "postgres", "PG_VERSION")), "the cluster of the test before");
    const out = await cli({ DATA_DIR: dataDir }, "backup", "--out", join(work, "stopped.tar.gz"));
    assert.equal(out.database, "embedded-cluster");
    assert.ok(!existsSync(join(dataDir, "postgres", "postmaster.pid")), "its Postgres is stopped again");
  });
});

describe("backup and restore with DATABASE_URL (pg_dump of the services' schemas)", () => {
  const databases: TestDatabase[] = [];
  after(async () => {
    for (const db of databases) await db.drop();
  });

  it("restores the schemas exactly into another database, dropping what was added since, and refuses while others are connected", { timeout: 120_000 }, async (t) => {
    const [from, into] = [await createTestDatabase("formsvc_backup_from"), await createTestDatabase("formsvc_backup_into")];
    databases.push(from, into);
    const source = join(work, "dump-source");
    const files = someFiles(source);
    const client = new pg.Client({ connectionString: from.databaseUrl });
    await client.connect();
    const file = join(work, "dump.tar.gz");
    try {
      for (const sql of schemaSql) await client.query(sql);
      await client.query("insert into identity.a (v) select g from generate_series(1, 1000) g");
      await client.query("insert into forms.b (v) select g from generate_series(1, 1000) g");
      const writer = pairWriter(client);
      const out = await cli({ DATA_DIR: source, DATABASE_URL: from.databaseUrl }, "backup", "--out", file);
      await writer.stop();
      t.diagnostic(`backup: ${out.bytes} bytes in ${out.seconds} s`);
      assert.equal(out.database, "pg_dump");
      assert.deepEqual(out.schemas, ["forms", "identity"]);
    } finally {
      await client.end();
    }

    const target = join(work, "dump-target");
    const other = new pg.Client({ connectionString: into.databaseUrl });
    await other.connect();
    // What the target held before: a schema of a service the backup did not have yet, and rows to replace.
    await other.query("create schema webhooks; create table webhooks.w (id int); create schema identity; create table identity.old (id int)");
    const refused = await runCli(["restore", "--from", file, "--yes"], { env: { PATH: process.env.PATH, DATA_DIR: target, DATABASE_URL: into.databaseUrl } });
    assert.equal(refused.code, 1);
    assert.match(JSON.parse(refused.stderr!).error, /other sessions are connected .*stop every process/);
    await other.end();

    const restored = await cli({ DATA_DIR: target, DATABASE_URL: into.databaseUrl }, "restore", "--from", file, "--yes");
    assert.equal(restored.database, "pg_dump");
    assertFiles(target, files);
    const check = new pg.Client({ connectionString: into.databaseUrl });
    await check.connect();
    try {
      const got = await counts(check);
      assert.equal(got.a, got.b, "one snapshot: every pair whole");
      assert.ok(got.a >= 1000);
      const { rows } = await check.query("select nspname from pg_namespace where nspname in ('identity', 'forms', 'webhooks') order by 1");
      assert.deepEqual(rows.map((r) => r.nspname), ["forms", "identity"], "the services' schemas are the backup's, nothing else");
      const triggers = await check.query("select tgname from pg_trigger where tgname = 'touch'");
      assert.ok(triggers.rowCount! >= 1, "triggers and functions come back too");
    } finally {
      await check.end();
    }
  });

  it("restores a bare pg_dump of the services' schemas (what the Kubernetes CronJob writes)", { timeout: 60_000 }, async () => {
    const [from, into] = [await createTestDatabase("formsvc_bare_from"), await createTestDatabase("formsvc_bare_into")];
    databases.push(from, into);
    const client = new pg.Client({ connectionString: from.databaseUrl });
    await client.connect();
    for (const sql of schemaSql) await client.query(sql);
    await client.query("insert into identity.a (v) values (1), (2)");
    await client.end();
    const dump = join(work, "bare.dump");
    const pgDump = findPgTool("pg_dump")!;
    execFileSync(pgDump.path, ["--format=custom", "--schema=identity", "--schema=forms", "--file", dump, "--dbname", from.databaseUrl]);
    const restored = await cli({ DATA_DIR: join(work, "bare"), DATABASE_URL: into.databaseUrl }, "restore", "--from", dump, "--yes");
    assert.equal(restored.database, "pg_dump");
    assert.match(restored.note, /database alone/);
    const check = new pg.Client({ connectionString: into.databaseUrl });
    await check.connect();
    try {
      assert.deepEqual(await counts(check), { a: 2, b: 0, sequence: 2 });
    } finally {
      await check.end();
    }
    const embedded = await runCli(["restore", "--from", dump, "--yes"], { env: { PATH: process.env.PATH, DATA_DIR: join(work, "bare2"), DATABASE_URL: "" } });
    assert.match(JSON.parse(embedded.stderr!).error, /restore it with DATABASE_URL/);
  });

  it("says which pg_dump it needs when the one found is older than the server", async () => {
    const db = await createTestDatabase("formsvc_backup_old");
    databases.push(db);
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    await client.query("create schema identity");
    await client.end();
    const bin = join(work, "old-bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "pg_dump"), "#!/bin/sh\necho 'pg_dump (PostgreSQL) 9.6.24'\n", { mode: 0o755 });
    const result = await runCli(["backup", "--out", join(work, "never.tar.gz")], {
      env: { PATH: process.env.PATH, PG_BIN_DIR: bin, DATA_DIR: join(work, "old"), DATABASE_URL: db.databaseUrl },
    });
    assert.equal(result.code, 1);
    assert.match(JSON.parse(result.stderr!).error, /pg_dump 9\.6 .* cannot dump a PostgreSQL \d+ server: install the PostgreSQL \d+ \(or newer\) client programs/);
    assert.ok(!existsSync(join(work, "never.tar.gz")), "no file is left behind");
  });

  it("restore refuses without --yes, and a file that is not a backup", async () => {
    const noYes = await runCli(["restore", "--from", join(work, "dump.tar.gz")], { env: { PATH: process.env.PATH, DATA_DIR: join(work, "x"), DATABASE_URL: "" } });
    assert.equal(noYes.code, 1);
    assert.match(JSON.parse(noYes.stderr!).error, /add --yes/);
    const junk = join(work, "junk.tar.gz");
    writeFileSync(junk, "not a backup");
    const bad = await runCli(["restore", "--from", junk, "--yes"], { env: { PATH: process.env.PATH, DATA_DIR: join(work, "x"), DATABASE_URL: "" } });
    assert.equal(bad.code, 1);
    assert.match(JSON.parse(bad.stderr!).error, /not a formsvc backup \(not a gzipped tar\)/);
  });
});
