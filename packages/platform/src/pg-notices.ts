import pg from "pg";
import type { Logger } from "./logger.ts";

// The channels one service's triggers notify and another's replicas listen on (the sender's migration
// creates the trigger, the listener's server.ts listens).
/** Forms' trigger: the form's id, when anything a submit reads changes (submissions holds open forms). */
export const formChangesChannel = "forms_form_changes";
/** Identity's trigger: a workspace's id, when it or one of its memberships changes or goes (forms holds callers' workspaces). */
export const workspaceChangesChannel = "identity_workspace_changes";
/**
 * Identity's trigger: `key:<id>` when an API key is deleted or its hash or owner changes, `user:<id>` when its
 * person goes or changes (identity's replicas hold verified keys; webhooks deletes what a deleted key subscribed).
 */
export const apiKeyChangesChannel = "identity_api_key_changes";
/** Webhooks' trigger: `<formId> <webhookId>`, when a webhook is created, changed or deleted (delivery holds them). */
export const webhookChangesChannel = "webhooks_webhook_changes";

export interface NoticeListenerOptions {
  databaseUrl: string;
  /** The channel to LISTEN on; senders use `pg_notify(channel, payload)`, delivered when their transaction commits. */
  channel: string;
  logger: Logger;
  /** Each notice's payload, in commit order. */
  onNotice(payload: string): void;
  /** LISTEN is in place: every commit from now on is told. */
  onListening(): void;
  /** The connection is gone: notices may have been missed from now until the next onListening. */
  onLost(): void;
  /** Pause before connecting again after a loss (ms). */
  retryMs?: number;
  /**
   * How often the connection is asked `select 1` (ms): a connection that died without a word (a dropped
   * network path) is found within this and `checkTimeoutMs`, not only when TCP gives up.
   */
  checkIntervalMs?: number;
  checkTimeoutMs?: number;
}

export interface NoticeListener {
  /** Ends listening for good; onLost is not called. */
  stop(): Promise<void>;
}

/** The application_name of the connection listening on `channel`. */
export function noticeConnectionName(channel: string): string {
  return `listen:${channel}`;
}

/**
 * Listens on one Postgres channel over a connection of its own, connecting again after any loss. A loss
 * is told (onLost) before anything else happens, so whoever keeps state fresh by these notices can drop
 * it: a notice sent while nobody listened is never delivered later.
 */
export function listenForNotices(options: NoticeListenerOptions): NoticeListener {
  const retryMs = options.retryMs ?? 1000;
  const checkIntervalMs = options.checkIntervalMs ?? 5000;
  const checkTimeoutMs = options.checkTimeoutMs ?? 2000;
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let check: NodeJS.Timeout | undefined;

  const connect = async () => {
    const current = new pg.Client({
      connectionString: options.databaseUrl,
      // Named in pg_stat_activity, so an operator (or a test) can tell it from the pool's connections.
      application_name: noticeConnectionName(options.channel),
      keepAlive: true,
      query_timeout: checkTimeoutMs,
    });
    client = current;
    let lost = false;
    const lose = (reason: unknown) => {
      if (lost || stopped) return;
      lost = true;
      clearInterval(check);
      options.onLost();
      options.logger.warn({ channel: options.channel, error: reason instanceof Error ? reason.message : String(reason) }, "lost the Postgres notice connection: reconnecting");
      current.end().catch(() => {});
      retry = setTimeout(connect, retryMs);
    };
    current.on("error", lose);
    current.on("end", () => lose("the connection ended"));
    current.on("notification", (msg) => {
      if (msg.channel === options.channel) options.onNotice(msg.payload ?? "");
    });
    try {
      await current.connect();
      await current.query(`listen "${options.channel.replace(/"/g, '""')}"`);
    } catch (err) {
      lose(err);
      return;
    }
    if (stopped || lost) return;
    options.onListening();
    check = setInterval(() => {
      current.query("select 1").catch(lose);
    }, checkIntervalMs);
  };
  void connect();

  return {
    async stop() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(check);
      await client?.end().catch(() => {});
    },
  };
}

/** What a listener keeps fresh: told when it may hold copies and when it must drop them all. */
export interface NoticeHolder {
  listening(): void;
  lost(): void;
}

/** Keeps `holder`'s copies fresh by the notices on `channel`: it holds only while they are listened for. */
export function keepFreshByNotices(
  holder: NoticeHolder,
  options: Pick<NoticeListenerOptions, "databaseUrl" | "channel" | "logger" | "onNotice">,
): NoticeListener {
  return listenForNotices({ ...options, onListening: () => holder.listening(), onLost: () => holder.lost() });
}
