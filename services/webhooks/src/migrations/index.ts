import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261124000000_initial } from "./Migration20261124000000_initial.ts";
import { Migration20261215000000_disabled_and_rotation } from "./Migration20261215000000_disabled_and_rotation.ts";
import { Migration20261215000100_event_types } from "./Migration20261215000100_event_types.ts";
import { Migration20270120000000_webhook_change_notices } from "./Migration20270120000000_webhook_change_notices.ts";
import { Migration20261128000900_subscribers } from "./Migration20261128000900_subscribers.ts";
import { Migration20261128000901_formats } from "./Migration20261128000901_formats.ts";

/** The webhooks schema's migrations, oldest first. Never edit one that has shipped; add a new one. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261124000000_initial", class: Migration20261124000000_initial },
  { name: "Migration20261215000000_disabled_and_rotation", class: Migration20261215000000_disabled_and_rotation },
  { name: "Migration20261215000100_event_types", class: Migration20261215000100_event_types },
  { name: "Migration20270120000000_webhook_change_notices", class: Migration20270120000000_webhook_change_notices },
  { name: "Migration20261128000900_subscribers", class: Migration20261128000900_subscribers },
  { name: "Migration20261128000901_formats", class: Migration20261128000901_formats },
];
