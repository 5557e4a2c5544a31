// Webhook configuration held in memory, so an event's fan-out and each attempt ask webhooks nothing in the
// steady state. Webhooks' trigger notifies `<formId> <webhookId>` whenever a webhook is created, changed or
// deleted (when that commits); every delivery replica then drops what it holds of the webhook and of its
// form's subscriptions. What is held is kept only while the notices are listened for (NoticeKeptCache).
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { CallOptions, Client } from "@connectrpc/connect";
import { NoticeKeptCache } from "@formsvc/platform/notice-kept-cache.ts";
import {
  GetWebhookForDeliveryResponseSchema,
  ListEnabledWebhooksResponseSchema,
  type Webhook,
  type WebhooksService,
} from "@formsvc/proto/webhooks/v1/webhooks_pb.js";

export type DeliveryWebhooksClient = Pick<Client<typeof WebhooksService>, "getWebhookForDelivery" | "listEnabledWebhooks" | "disableWebhook" | "webhookGone">;

interface Subscription {
  formId: string;
  webhooks: Webhook[];
}

/** The held copy as webhooks would answer it at `now`: a rotated-out secret stops signing when its overlap ends. */
function asOf(webhook: Webhook, now: Date): Webhook {
  const expiresAt = webhook.previousSecretExpiresAt && timestampDate(webhook.previousSecretExpiresAt);
  if (!webhook.previousSecret || (expiresAt && expiresAt > now)) return webhook;
  return { ...webhook, previousSecret: "" };
}

export class HeldWebhooks {
  readonly #byId: NoticeKeptCache<Webhook>;
  /** Enabled webhooks by `<formId> <eventType>`. */
  readonly #subscriptions: NoticeKeptCache<Subscription>;
  readonly #now: () => Date;

  constructor(options: { maxEntries?: number; now?: () => Date } = {}) {
    this.#byId = new NoticeKeptCache({ maxEntries: options.maxEntries });
    this.#subscriptions = new NoticeKeptCache({ maxEntries: options.maxEntries });
    this.#now = options.now ?? (() => new Date());
  }

  /** A notice from webhooks: `<formId> <webhookId>`; anything else drops everything. */
  changed(notice: string): void {
    const [formId, webhookId] = notice.split(" ");
    if (!formId || !webhookId) {
      this.#byId.forgetAll();
      this.#subscriptions.forgetAll();
      return;
    }
    this.#forget(formId, webhookId);
  }

  /** Drops a webhook and its form's subscriptions (a form id of "" drops no subscription). */
  #forget(formId: string, webhookId: string): void {
    this.#byId.forget(webhookId);
    if (formId) this.#subscriptions.forgetWhere((subscription) => subscription.formId === formId);
  }

  listening(): void {
    this.#byId.listening();
    this.#subscriptions.listening();
  }

  lost(): void {
    this.#byId.lost();
    this.#subscriptions.lost();
  }

  /** `client` with its two delivery reads answered from here when held. */
  around(client: DeliveryWebhooksClient): DeliveryWebhooksClient {
    const byId = this.#byId;
    const subscriptions = this.#subscriptions;
    const now = this.#now;
    const forget = (formId: string, webhookId: string) => this.#forget(formId, webhookId);
    return {
      async getWebhookForDelivery(req, options?: CallOptions) {
        const webhook = await byId.read(req.id ?? "", async () => (await client.getWebhookForDelivery(req, options)).webhook);
        return create(GetWebhookForDeliveryResponseSchema, { webhook: webhook && asOf(webhook, now()) });
      },
      async listEnabledWebhooks(req, options?: CallOptions) {
        const held = await subscriptions.read(`${req.formId ?? ""} ${req.eventType ?? ""}`, async () => ({
          formId: req.formId ?? "",
          webhooks: (await client.listEnabledWebhooks(req, options)).webhooks,
        }));
        return create(ListEnabledWebhooksResponseSchema, { webhooks: held!.webhooks.map((w) => asOf(w, now())) });
      },
      async disableWebhook(req, options?: CallOptions) {
        const answer = await client.disableWebhook(req, options);
        // This replica stops at once; the others when the notice comes.
        forget(answer.webhook?.formId ?? "", req.id ?? "");
        return answer;
      },
      async webhookGone(req, options?: CallOptions) {
        const answer = await client.webhookGone(req, options);
        // Disabled or deleted, it is sent nothing more: its form's subscriptions are read again.
        forget(answer.formId, req.id ?? "");
        return answer;
      },
    };
  }
}
