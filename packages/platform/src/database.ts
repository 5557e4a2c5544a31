import { MikroORM, type EntitySchema, type MigrationObject } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import pg from "pg";

export { MikroORM };

export interface DatabaseOptions {
  databaseUrl: string;
  /** The Postgres schema this service owns; no other service reads it. */
  schema: string;
  entities: EntitySchema<any, any>[];
  migrations: MigrationObject[];
  poolSize?: number;
}

/**
 * Opens the service's own MikroORM instance on its own schema and applies its migrations.
 * Replicas starting together serialise on an advisory lock, so each migration runs once.
 */
export async function openDatabase(options: DatabaseOptions): Promise<MikroORM> {
  await migrate(options);
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
