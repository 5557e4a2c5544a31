import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261123000000_initial } from "./Migration20261123000000_initial.ts";
import { Migration20261201000000_outbox_published_at } from "./Migration20261201000000_outbox_published_at.ts";
import { Migration20261202000000_outbox_txid } from "./Migration20261202000000_outbox_txid.ts";
import { Migration20261203000000_outbox_trace_parent } from "./Migration20261203000000_outbox_trace_parent.ts";

/** The submissions schema's migrations, oldest first. Never edit one that has shipped; add a new one. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261123000000_initial", class: Migration20261123000000_initial },
  { name: "Migration20261201000000_outbox_published_at", class: Migration20261201000000_outbox_published_at },
  { name: "Migration20261202000000_outbox_txid", class: Migration20261202000000_outbox_txid },
  { name: "Migration20261203000000_outbox_trace_parent", class: Migration20261203000000_outbox_trace_parent },
];
