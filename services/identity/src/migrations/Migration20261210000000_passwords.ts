import { Migration } from "@mikro-orm/migrations";

/** Passwords of app sign-in: a scrypt hash, null for users who have none (made by the CLI). */
export class Migration20261210000000_passwords extends Migration {
  override up(): void {
    this.addSql(`alter table "identity"."users" add column "password_hash" text null`);
  }

  override down(): void {
    this.addSql(`alter table "identity"."users" drop column if exists "password_hash"`);
  }
}
