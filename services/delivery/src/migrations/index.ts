import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261125000000_initial } from "./Migration20261125000000_initial.ts";
import { Migration20261204000000_delivery_trace_parent } from "./Migration20261204000000_delivery_trace_parent.ts";

/** The delivery schema's migrations, oldest first. Never edit one that has shipped; add a new one. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261125000000_initial", class: Migration20261125000000_initial },
  { name: "Migration20261204000000_delivery_trace_parent", class: Migration20261204000000_delivery_trace_parent },
];
