// A subscriber's webhook goes with the API key that subscribed it, so a deleted key or tool leaves no hook
// behind (formbricks#4635). Identity's trigger tells every key's deletion (and its person's) on
// apiKeyChangesChannel; a notice sent while nobody listened is lost, so each time listening starts (the
// first time too) every key that holds subscriptions is checked with identity.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { asCaller } from "@formsvc/platform/caller.ts";
import { qualifiedTable, type MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { NoticeHolder } from "@formsvc/platform/pg-notices.ts";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { WebhookEntity } from "./entities/index.ts";

export interface KeySubscriptionsDeps {
  orm: MikroORM;
  /** Asked, as each person, which of their keys still exist. */
  identity: Pick<Client<typeof IdentityService>, "listApiKeys">;
  logger?: Logger;
}

export interface KeySubscriptions extends NoticeHolder {
  /** A notice of apiKeyChangesChannel: `key:<id>` or `user:<id>`. */
  changed(notice: string): void;
  /** Deletes the subscriptions of deleted keys (those of one key or person, or all); answers how many went. */
  sweep(only?: { key?: string; user?: string }): Promise<number>;
}

export function keySubscriptions(deps: KeySubscriptionsDeps): KeySubscriptions {
  const table = qualifiedTable(deps.orm, WebhookEntity);
  const connection = () => deps.orm.em.getConnection();

  /** The ids of `user`'s keys; none once the person is gone; undefined when identity could not tell. */
  async function liveKeys(user: string): Promise<Set<string> | undefined> {
    try {
      const { apiKeys } = await deps.identity.listApiKeys({ email: "" }, asCaller(user));
      return new Set(apiKeys.map((key) => key.id));
    } catch (err) {
      // Identity answers an unknown caller (a deleted person) so.
      if (ConnectError.from(err).code === Code.Unauthenticated) return new Set();
      deps.logger?.warn({ err, user }, "checking the keys of subscribed webhooks failed; the next notice or restart checks again");
      return undefined;
    }
  }

  async function sweep(only: { key?: string; user?: string } = {}): Promise<number> {
    const where = only.key ? `and "subscribed_by_key" = ?` : only.user ? `and "subscribed_by_user" = ?` : "";
    const pairs = await connection().execute<{ key: string; user: string }[]>(
      `select distinct "subscribed_by_key" as "key", "subscribed_by_user" as "user" from ${table} where "subscribed_by_key" is not null ${where}`,
      only.key ? [only.key] : only.user ? [only.user] : [],
      "all",
    );
    const keysByUser = new Map<string, string[]>();
    for (const { key, user } of pairs) keysByUser.set(user, [...(keysByUser.get(user) ?? []), key]);
    let deleted = 0;
    for (const [user, keys] of keysByUser) {
      const live = await liveKeys(user);
      if (!live) continue;
      const gone = keys.filter((key) => !live.has(key));
      if (gone.length === 0) continue;
      const rows = await connection().execute<{ id: string }[]>(
        `delete from ${table} where "subscribed_by_key" in (${gone.map(() => "?").join(", ")}) returning "id"`,
        gone,
        "all",
      );
      deleted += rows.length;
      deps.logger?.info({ user, keys: gone.length, webhooks: rows.length }, "webhooks of deleted API keys deleted");
    }
    return deleted;
  }

  const sweepLogged = (only?: { key?: string; user?: string }) => {
    sweep(only).catch((err: unknown) => deps.logger?.warn({ err }, "deleting the webhooks of deleted API keys failed"));
  };

  return {
    sweep,
    changed(notice) {
      const [kind, id] = [notice.slice(0, notice.indexOf(":")), notice.slice(notice.indexOf(":") + 1)];
      if (kind === "key") sweepLogged({ key: id });
      else if (kind === "user") sweepLogged({ user: id });
    },
    listening: () => sweepLogged(),
    // Nothing is held: the sweep when listening starts again covers what was missed meanwhile.
    lost: () => {},
  };
}
