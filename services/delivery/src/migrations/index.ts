import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261125000000_initial } from "./Migration20261125000000_initial.ts";
import { Migration20261204000000_delivery_trace_parent } from "./Migration20261204000000_delivery_trace_parent.ts";
import { Migration20261215000000_failing_webhooks } from "./Migration20261215000000_failing_webhooks.ts";
import { Migration20261215000100_delivery_trigger } from "./Migration20261215000100_delivery_trigger.ts";
import { Migration20270201000000_deliveries_form_index } from "./Migration20270201000000_deliveries_form_index.ts";
import { Migration20261127000000_partitioned_deliveries } from "./Migration20261127000000_partitioned_deliveries.ts";

/** The delivery schema's migrations, oldest first. Never edit one that has shipped; add a new one. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261125000000_initial", class: Migration20261125000000_initial },
  { name: "Migration20261204000000_delivery_trace_parent", class: Migration20261204000000_delivery_trace_parent },
  { name: "Migration20261215000000_failing_webhooks", class: Migration20261215000000_failing_webhooks },
  { name: "Migration20261215000100_delivery_trigger", class: Migration20261215000100_delivery_trigger },
  { name: "Migration20270201000000_deliveries_form_index", class: Migration20270201000000_deliveries_form_index },
  // Written on 2026-11-27, after the ones above (whose names carry dates ahead of their writing): the order is this list's.
  { name: "Migration20261127000000_partitioned_deliveries", class: Migration20261127000000_partitioned_deliveries },
];
