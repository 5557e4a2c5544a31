import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261122000000_initial } from "./Migration20261122000000_initial.ts";
import { Migration20261210000000_passwords } from "./Migration20261210000000_passwords.ts";
import { Migration20261223000000_idempotency_keys } from "./Migration20261223000000_idempotency_keys.ts";
import { Migration20261228000000_mail_and_email_links } from "./Migration20261228000000_mail_and_email_links.ts";
import { Migration20261230000000_workspace_roles } from "./Migration20261230000000_workspace_roles.ts";
import { Migration20261231000000_api_key_change_notices } from "./Migration20261231000000_api_key_change_notices.ts";
import { Migration20270120000000_workspace_change_notices } from "./Migration20270120000000_workspace_change_notices.ts";
import { Migration20261127000000_retention_indexes } from "./Migration20261127000000_retention_indexes.ts";
import { Migration20261128000000_invitation_ids } from "./Migration20261128000000_invitation_ids.ts";
import { Migration20261128000100_administrator } from "./Migration20261128000100_administrator.ts";
import { Migration20261128000200_oidc_sign_in } from "./Migration20261128000200_oidc_sign_in.ts";
import { Migration20261128000300_two_factor } from "./Migration20261128000300_two_factor.ts";
import { Migration20261128000400_audit_events } from "./Migration20261128000400_audit_events.ts";
import { Migration20261128000500_user_locale } from "./Migration20261128000500_user_locale.ts";

/** The identity schema's migrations, oldest first. Never edit one that has shipped; add another. */
export const migrations: MigrationObject[] = [
  { name: "Migration20261122000000_initial", class: Migration20261122000000_initial },
  { name: "Migration20261210000000_passwords", class: Migration20261210000000_passwords },
  { name: "Migration20261223000000_idempotency_keys", class: Migration20261223000000_idempotency_keys },
  { name: "Migration20261228000000_mail_and_email_links", class: Migration20261228000000_mail_and_email_links },
  { name: "Migration20261230000000_workspace_roles", class: Migration20261230000000_workspace_roles },
  { name: "Migration20261231000000_api_key_change_notices", class: Migration20261231000000_api_key_change_notices },
  { name: "Migration20270120000000_workspace_change_notices", class: Migration20270120000000_workspace_change_notices },
  // Written on 2026-11-27, after the ones above (whose names carry dates ahead of their writing): the order is this list's.
  { name: "Migration20261127000000_retention_indexes", class: Migration20261127000000_retention_indexes },
  { name: "Migration20261128000000_invitation_ids", class: Migration20261128000000_invitation_ids },
  { name: "Migration20261128000100_administrator", class: Migration20261128000100_administrator },
  { name: "Migration20261128000200_oidc_sign_in", class: Migration20261128000200_oidc_sign_in },
  { name: "Migration20261128000300_two_factor", class: Migration20261128000300_two_factor },
  { name: "Migration20261128000400_audit_events", class: Migration20261128000400_audit_events },
  { name: "Migration20261128000500_user_locale", class: Migration20261128000500_user_locale },
];
