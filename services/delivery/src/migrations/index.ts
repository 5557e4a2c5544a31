import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261125000000_initial } from "./Migration20261125000000_initial.ts";

/** The delivery schema's migrations, oldest first. Never edit one that has shipped; add a new one. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261125000000_initial", class: Migration20261125000000_initial },
];
