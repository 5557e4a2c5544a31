// The two rules that disable a webhook from what its receiver does (Standard Webhooks / Svix), applied
// after every attempt, automatic or by hand:
// - an answer whose rule says so (410 Gone, send-result.ts) disables it at once (webhooks deletes it
//   instead when an automation tool subscribed it: WebhookGone);
// - a webhook whose attempts have all failed for WEBHOOK_DISABLE_AFTER_FAILING_SECONDS (5 days) is
//   disabled: recordAttempt keeps since when it has been failing (one row per failing webhook, gone at its
//   next success, written in the attempt's own statement) and this compares at each failed attempt.
// Webhooks owns the switch (DisableWebhook); its deliveries then end "webhook disabled" when next due.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { MikroORM } from "@formsvc/platform/database.ts";
import type { Logger } from "@formsvc/platform/logger.ts";
import type { WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { webhooksCallTimeoutMs } from "../intake/accept-event.ts";
import { tablesOf } from "../entities/rows.ts";
import { disablesWebhook, type SendResult } from "../sender/send-result.ts";

export interface WebhookDisablingOptions {
  orm: MikroORM;
  webhooks: Pick<Client<typeof WebhooksService>, "disableWebhook" | "webhookGone">;
  logger?: Logger;
  /** WEBHOOK_DISABLE_AFTER_FAILING_SECONDS. */
  disableAfterFailingSeconds: number;
}

/** "5 days", "36 hours", "90 seconds": the failing period as a disabledReason states it. */
export function describePeriod(seconds: number): string {
  const units: [number, string][] = [
    [86_400, "day"],
    [3_600, "hour"],
    [60, "minute"],
    [1, "second"],
  ];
  const [size, name] = units.find(([size]) => seconds % size === 0) ?? [1, "second"];
  const n = seconds / size;
  return `${n} ${name}${n === 1 ? "" : "s"}`;
}

/**
 * Disables the attempt's webhook when a rule says so: its answer (410), or its failing period
 * (`failingSince`, as recordAttempt noted it) older than the setting. Returns the reason it was disabled
 * for, if it was. A failure to disable is logged, not thrown: the attempt is recorded already, and the
 * next failed attempt asks again.
 */
export async function applyDisablingRules(
  options: WebhookDisablingOptions,
  webhookId: string,
  result: SendResult,
  failingSince: Date | null | undefined,
  now: Date = new Date(),
): Promise<string | undefined> {
  const overdue = failingSince && now.getTime() - failingSince.getTime() >= options.disableAfterFailingSeconds * 1000;
  const goneReason = disablesWebhook(result);
  const reason = goneReason ?? (overdue ? `every delivery attempt failed for ${describePeriod(options.disableAfterFailingSeconds)}` : undefined);
  if (!reason) return undefined;
  try {
    const call = { id: webhookId, reason };
    const disable = () => options.webhooks.disableWebhook(call, { timeoutMs: webhooksCallTimeoutMs });
    if (goneReason) {
      await options.webhooks.webhookGone(call, { timeoutMs: webhooksCallTimeoutMs }).catch((err: unknown) => {
        // A webhooks service from before WebhookGone (a rolling upgrade): the webhook is disabled, as then.
        if (ConnectError.from(err).code !== Code.Unimplemented) throw err;
        return disable();
      });
    } else await disable();
    // Enabled again later, it starts a new failing period.
    const { failingWebhooks } = tablesOf(options.orm);
    await options.orm.em.getConnection().execute(`delete from ${failingWebhooks} where "webhook_id" = ?`, [webhookId], "run");
    options.logger?.warn({ webhookId, reason }, "webhook disabled");
    return reason;
  } catch (err) {
    options.logger?.warn({ webhookId, reason, err }, "disabling the webhook failed; the next failed attempt tries again");
    return undefined;
  }
}
