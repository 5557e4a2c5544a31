// The webhooks service in memory, for delivery's unit tests: webhooks and their owners, answering
// ListEnabledWebhooks, GetWebhookForDelivery, DisableWebhook, WebhookGone and GetWebhook with the codes and messages
// webhooks answers, and noting the calls it was given. Imported by tests only.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { callerHeader } from "@formsvc/platform/caller.ts";
import { WebhookSchema, WebhooksService, type Webhook } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";

export class FakeWebhooks {
  readonly hooks = new Map<string, { webhook: Webhook; owner: string }>();
  /** Calls seen, by method. */
  readonly calls: { method: string; caller: string | null; id: string }[] = [];
  /** When set, GetWebhookForDelivery fails with this code. */
  failWith: Code | undefined;
  readonly client: Client<typeof WebhooksService>;

  constructor() {
    this.client = createClient(
      WebhooksService,
      createRouterTransport((router) =>
        router.service(WebhooksService, {
          listEnabledWebhooks: (req, ctx) => {
            this.calls.push({ method: "listEnabledWebhooks", caller: ctx.requestHeader.get(callerHeader), id: req.formId });
            if (this.failWith !== undefined) throw new ConnectError("webhooks down", this.failWith);
            const eventType = req.eventType || "FORM_RESPONSE";
            return { webhooks: [...this.hooks.values()].map((h) => h.webhook).filter((w) => w.formId === req.formId && w.enabled && w.eventTypes.includes(eventType)) };
          },
          getWebhookForDelivery: (req, ctx) => {
            this.calls.push({ method: "getWebhookForDelivery", caller: ctx.requestHeader.get(callerHeader), id: req.id });
            if (this.failWith !== undefined) throw new ConnectError("webhooks down", this.failWith);
            const found = this.hooks.get(req.id);
            if (!found) throw new ConnectError("webhook not found", Code.NotFound);
            return { webhook: found.webhook };
          },
          disableWebhook: (req) => {
            this.calls.push({ method: "disableWebhook", caller: null, id: req.id });
            const found = this.hooks.get(req.id);
            if (!found) throw new ConnectError("webhook not found", Code.NotFound);
            if (found.webhook.enabled) {
              found.webhook.enabled = false;
              found.webhook.disabledReason = req.reason;
            }
            return { webhook: found.webhook };
          },
          webhookGone: (req) => {
            this.calls.push({ method: "webhookGone", caller: null, id: req.id });
            const found = this.hooks.get(req.id);
            if (!found) throw new ConnectError("webhook not found", Code.NotFound);
            if (found.webhook.subscriber) {
              this.hooks.delete(req.id);
              return { deleted: true, formId: found.webhook.formId };
            }
            if (found.webhook.enabled) {
              found.webhook.enabled = false;
              found.webhook.disabledReason = req.reason;
            }
            return { deleted: false, formId: found.webhook.formId };
          },
          getWebhook: (req, ctx) => {
            const caller = ctx.requestHeader.get(callerHeader);
            this.calls.push({ method: "getWebhook", caller, id: req.id });
            if (!caller) throw new ConnectError("this call needs a caller", Code.Unauthenticated);
            const found = this.hooks.get(req.id);
            if (!found || found.owner !== caller) throw new ConnectError("webhook not found", Code.NotFound);
            return { webhook: { ...found.webhook, secret: "" } };
          },
        }),
      ),
    );
  }

  add(init: {
    id: string;
    formId?: string;
    url: string;
    secret?: string;
    previousSecret?: string;
    headers?: Record<string, string>;
    enabled?: boolean;
    owner?: string;
    eventTypes?: string[];
    subscriber?: string;
    format?: string;
  }): Webhook {
    const webhook = create(WebhookSchema, {
      id: init.id,
      formId: init.formId ?? "form_1",
      url: init.url,
      secret: init.secret ?? "",
      previousSecret: init.previousSecret ?? "",
      headers: init.headers ?? {},
      eventTypes: init.eventTypes ?? ["FORM_RESPONSE"],
      enabled: init.enabled ?? true,
      subscriber: init.subscriber ?? "",
      format: init.format ?? "standard",
    });
    this.hooks.set(init.id, { webhook, owner: init.owner ?? "user-ada" });
    return webhook;
  }

  remove(id: string): void {
    this.hooks.delete(id);
  }

  clear(): void {
    this.hooks.clear();
    this.calls.length = 0;
    this.failWith = undefined;
  }
}
