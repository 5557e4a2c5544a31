import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261122000000_initial } from "./Migration20261122000000_initial.ts";
import { Migration20261215000000_outbox } from "./Migration20261215000000_outbox.ts";
import { Migration20270110000000_response_count_revision } from "./Migration20270110000000_response_count_revision.ts";
import { Migration20270120000000_form_change_notices } from "./Migration20270120000000_form_change_notices.ts";
import { Migration20261127000200_delete_responses_after_days } from "./Migration20261127000200_delete_responses_after_days.ts";

/** The forms schema's migrations, oldest first. Never edit one that has shipped; add a new one. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261122000000_initial", class: Migration20261122000000_initial },
  { name: "Migration20261215000000_outbox", class: Migration20261215000000_outbox },
  { name: "Migration20270110000000_response_count_revision", class: Migration20270110000000_response_count_revision },
  { name: "Migration20270120000000_form_change_notices", class: Migration20270120000000_form_change_notices },
  // Written on 2026-11-27, after the ones above (whose names carry dates ahead of their writing): the order is this list's.
  { name: "Migration20261127000200_delete_responses_after_days", class: Migration20261127000200_delete_responses_after_days },
];
