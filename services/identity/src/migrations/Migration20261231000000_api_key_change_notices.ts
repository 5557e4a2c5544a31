import { Migration } from "@mikro-orm/migrations";

/**
 * Every replica holds verified API keys in memory: a key's deletion (or a change of its hash or owner),
 * and its user's deletion or change of the fields AuthenticateApiKey answers, notify
 * `identity_api_key_changes` from the changing transaction, so the notice goes out only when it commits.
 * Triggers rather than calls in the handlers: a cascade or an operator's SQL is told as well.
 */
export class Migration20261231000000_api_key_change_notices extends Migration {
  override up(): void {
    this.addSql(`create or replace function "identity"."notify_api_key_change"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('identity_api_key_changes', 'key:' || old."id");
        return null;
      end $$`);
    this.addSql(`create trigger "api_keys_notify_change" after delete or update of "key_hash", "user_id" on "identity"."api_keys"
                 for each row execute function "identity"."notify_api_key_change"()`);
    this.addSql(`create or replace function "identity"."notify_api_key_user_change"() returns trigger language plpgsql as $$
      begin
        perform pg_notify('identity_api_key_changes', 'user:' || old."id");
        return null;
      end $$`);
    this.addSql(`create trigger "users_notify_api_key_change" after delete or update of "email", "name" on "identity"."users"
                 for each row execute function "identity"."notify_api_key_user_change"()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "users_notify_api_key_change" on "identity"."users"`);
    this.addSql(`drop function if exists "identity"."notify_api_key_user_change"()`);
    this.addSql(`drop trigger if exists "api_keys_notify_change" on "identity"."api_keys"`);
    this.addSql(`drop function if exists "identity"."notify_api_key_change"()`);
  }
}
