import { Migration } from "@mikro-orm/migrations";
import { webhookChangesChannel } from "@formsvc/platform/pg-notices.ts";

/**
 * Delivery holds webhooks (and each form's subscribed webhooks) in memory on every replica, so neither an
 * event's fan-out nor an attempt asks webhooks anything: a webhook's creation, any change (URL, secret,
 * headers, event types, enabled) and its deletion notify `<formId> <webhookId>` from the changing
 * transaction, so the notice goes out only when it commits.
 */
export class Migration20270120000000_webhook_change_notices extends Migration {
  override up(): void {
    this.addSql(`create or replace function "webhooks"."notify_webhook_change"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'DELETE' then
          perform pg_notify('${webhookChangesChannel}', old."form_id" || ' ' || old."id");
        else
          perform pg_notify('${webhookChangesChannel}', new."form_id" || ' ' || new."id");
          if tg_op = 'UPDATE' and old."form_id" <> new."form_id" then
            perform pg_notify('${webhookChangesChannel}', old."form_id" || ' ' || old."id");
          end if;
        end if;
        return null;
      end $$`);
    this.addSql(`create trigger "webhooks_notify_change" after insert or update or delete on "webhooks"."webhooks"
                 for each row execute function "webhooks"."notify_webhook_change"()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "webhooks_notify_change" on "webhooks"."webhooks"`);
    this.addSql(`drop function if exists "webhooks"."notify_webhook_change"()`);
  }
}
