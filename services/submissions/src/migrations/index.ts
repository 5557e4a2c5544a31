import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261123000000_initial } from "./Migration20261123000000_initial.ts";
import { Migration20261201000000_outbox_published_at } from "./Migration20261201000000_outbox_published_at.ts";
import { Migration20261202000000_outbox_txid } from "./Migration20261202000000_outbox_txid.ts";
import { Migration20261203000000_outbox_trace_parent } from "./Migration20261203000000_outbox_trace_parent.ts";
import { Migration20261210000000_upload_quotas } from "./Migration20261210000000_upload_quotas.ts";
import { Migration20261220000000_sync_indexes } from "./Migration20261220000000_sync_indexes.ts";
import { Migration20261221000000_idempotency_keys } from "./Migration20261221000000_idempotency_keys.ts";
import { Migration20261222000000_calculated_field_problems } from "./Migration20261222000000_calculated_field_problems.ts";
import { Migration20261231000000_notifications } from "./Migration20261231000000_notifications.ts";
import { Migration20270101000000_outbox_event_type } from "./Migration20270101000000_outbox_event_type.ts";
import { Migration20270110000000_response_counts } from "./Migration20270110000000_response_counts.ts";
import { Migration20261127000100_retention } from "./Migration20261127000100_retention.ts";
import { Migration20261128000600_response_language } from "./Migration20261128000600_response_language.ts";
import { Migration20261128000700_insights } from "./Migration20261128000700_insights.ts";
import { Migration20261128001000_response_links } from "./Migration20261128001000_response_links.ts";
import { Migration20261128001100_email_verification } from "./Migration20261128001100_email_verification.ts";
import { Migration20261128001200_summary_counts } from "./Migration20261128001200_summary_counts.ts";

/** The submissions schema's migrations, oldest first. Never edit one that has shipped; add a new one. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261123000000_initial", class: Migration20261123000000_initial },
  { name: "Migration20261201000000_outbox_published_at", class: Migration20261201000000_outbox_published_at },
  { name: "Migration20261202000000_outbox_txid", class: Migration20261202000000_outbox_txid },
  { name: "Migration20261203000000_outbox_trace_parent", class: Migration20261203000000_outbox_trace_parent },
  { name: "Migration20261210000000_upload_quotas", class: Migration20261210000000_upload_quotas },
  { name: "Migration20261220000000_sync_indexes", class: Migration20261220000000_sync_indexes },
  { name: "Migration20261221000000_idempotency_keys", class: Migration20261221000000_idempotency_keys },
  { name: "Migration20261222000000_calculated_field_problems", class: Migration20261222000000_calculated_field_problems },
  { name: "Migration20261231000000_notifications", class: Migration20261231000000_notifications },
  { name: "Migration20270101000000_outbox_event_type", class: Migration20270101000000_outbox_event_type },
  { name: "Migration20270110000000_response_counts", class: Migration20270110000000_response_counts },
  // Written on 2026-11-27, after the ones above (whose names carry dates ahead of their writing): the order is this list's.
  { name: "Migration20261127000100_retention", class: Migration20261127000100_retention },
  { name: "Migration20261128000600_response_language", class: Migration20261128000600_response_language },
  { name: "Migration20261128000700_insights", class: Migration20261128000700_insights },
  { name: "Migration20261128001000_response_links", class: Migration20261128001000_response_links },
  { name: "Migration20261128001100_email_verification", class: Migration20261128001100_email_verification },
  { name: "Migration20261128001200_summary_counts", class: Migration20261128001200_summary_counts },
];
