// Test plumbing: throwaway databases on the machine's real Postgres, and the check that a service's
// migrations are applied exactly once. Imported by tests only.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { openDatabase, type DatabaseOptions } from "../database.ts";

/** The Postgres server tests create their databases on, as a connection string to a database that exists. */
export const adminDatabaseUrl =
  process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  name: string;
  /** Connection string of the new database, on the server of `adminDatabaseUrl`. */
  databaseUrl: string;
  /** Drops the database, closing any connection still open to it. */
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminDatabaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database named `<prefix>_<random hex>`. */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`create database "${name}"`));
  const url = new URL(adminDatabaseUrl);
  url.pathname = `/${name}`;
  return {
    name,
    databaseUrl: url.toString(),
    drop: async () => {
      await admin((c) => c.query(`drop database if exists "${name}" with (force)`));
    },
  };
}

/**
 * Opens the database again, as a second replica would, and asserts that the migrations recorded in
 * the service's schema are exactly `expected`: each applied once, none again by the second opening.
 */
export async function assertMigrationsApplyOnce(options: DatabaseOptions, expected: string[]): Promise<void> {
  const second = await openDatabase(options);
  try {
    const rows = await second.em.getConnection().execute(`select name from "${options.schema}"."mikro_orm_migrations"`);
    assert.deepEqual(
      rows.map((r) => r.name),
      expected,
    );
  } finally {
    await second.close(true);
  }
}
