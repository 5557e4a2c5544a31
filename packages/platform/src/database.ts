import { MikroORM, type EntitySchema, type MigrationObject } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import pg from "pg";
import { isDatabaseUnavailable } from "./database-unavailable.ts";

export { MikroORM };

export interface DatabaseOptions {
  databaseUrl: string;
  /** The Postgres schema this service owns; no other service reads it. */
  schema: string;
  entities: EntitySchema<any, any>[];
  migrations: MigrationObject[];
  poolSize?: number;
  /**
   * When given, a database that cannot be reached yet (see `isDatabaseUnavailable`) is waited for, with a
   * growing pause, and this is called before each wait; otherwise opening fails at once.
   */
  onWaitForDatabase?: (err: unknown, retryInMs: number) => void;
}

/**
 * Opens the service's own MikroORM instance on its own schema and applies its migrations.
 * Replicas starting together serialise on an advisory lock, so each migration runs once.
 */
export async function openDatabase(options: DatabaseOptions): Promise<MikroORM> {
  for (let retryInMs = 500; ; retryInMs = Math.min(retryInMs * 2, 5_000)) {
    try {
      await migrate(options);
      break;
    } catch (err) {
      if (!options.onWaitForDatabase || !isDatabaseUnavailable(err)) throw err;
      options.onWaitForDatabase(err, retryInMs);
      await new Promise((resolve) => setTimeout(resolve, retryInMs));
    }
  }
  return MikroORM.init({
    clientUrl: options.databaseUrl,
    schema: options.schema,
    entities: options.entities,
    pool: { min: 0, max: options.poolSize ?? 10 },
    allowGlobalContext: false,
    debug: false,
  });
}

async function migrate(options: DatabaseOptions): Promise<void> {
  const lock = new pg.Client({ connectionString: options.databaseUrl });
  // A connection dropped while migrating fails the query in flight; the event alone must not end the process.
  lock.on("error", () => {});
  await lock.connect();
  try {
    await lock.query("select pg_advisory_lock(hashtext($1))", [`formsvc:migrations:${options.schema}`]);
    await lock.query(`create schema if not exists "${options.schema}"`);
    const orm = await MikroORM.init({
      clientUrl: options.databaseUrl,
      schema: options.schema,
      entities: options.entities,
      extensions: [Migrator],
      migrations: {
        migrationsList: options.migrations,
        schema: options.schema,
        tableName: "mikro_orm_migrations",
        snapshot: false,
        silent: true,
      },
      pool: { min: 0, max: 1 },
      debug: false,
    });
    try {
      await orm.migrator.up();
    } finally {
      await orm.close(true);
    }
  } finally {
    await lock.end();
  }
}

/** `"<schema>"."<table>"` of one of the service's entities, for the raw SQL of hot paths. */
export function qualifiedTable(orm: MikroORM, entity: EntitySchema<any, any>): string {
  return `"${orm.config.get("schema") ?? "public"}"."${orm.getMetadata().get(entity).tableName}"`;
}

/** The readiness check of a service's database: one `select 1` through its own pool. */
export function databaseCheck(orm: MikroORM): () => Promise<unknown> {
  return () => orm.em.getConnection().execute("select 1");
}
