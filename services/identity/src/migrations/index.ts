import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261122000000_initial } from "./Migration20261122000000_initial.ts";
import { Migration20261210000000_passwords } from "./Migration20261210000000_passwords.ts";

/** The identity schema's migrations, oldest first. Never edit one that has shipped; add another. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261122000000_initial", class: Migration20261122000000_initial },
  { name: "Migration20261210000000_passwords", class: Migration20261210000000_passwords },
];
