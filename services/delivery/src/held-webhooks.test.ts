import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  DisableWebhookResponseSchema,
  GetWebhookForDeliveryResponseSchema,
  ListEnabledWebhooksResponseSchema,
  WebhookGoneResponseSchema,
  WebhookSchema,
  type Webhook,
} from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { HeldWebhooks, type DeliveryWebhooksClient } from "./held-webhooks.ts";

/** Webhooks in memory, counting what it is asked. */
function fakeWebhooks(hooks: Webhook[]) {
  const asked = { byId: 0, list: 0, disable: 0, gone: 0 };
  const client: DeliveryWebhooksClient = {
    async getWebhookForDelivery(req) {
      asked.byId++;
      const webhook = hooks.find((h) => h.id === req.id);
      if (!webhook) throw new ConnectError("webhook not found", Code.NotFound);
      return create(GetWebhookForDeliveryResponseSchema, { webhook });
    },
    async listEnabledWebhooks(req) {
      asked.list++;
      return create(ListEnabledWebhooksResponseSchema, { webhooks: hooks.filter((h) => h.formId === req.formId && h.enabled && h.eventTypes.includes(req.eventType!)) });
    },
    async disableWebhook(req) {
      asked.disable++;
      const webhook = hooks.find((h) => h.id === req.id)!;
      webhook.enabled = false;
      return create(DisableWebhookResponseSchema, { webhook });
    },
    async webhookGone(req) {
      asked.gone++;
      const at = hooks.findIndex((h) => h.id === req.id);
      const [webhook] = hooks.splice(at, 1);
      return create(WebhookGoneResponseSchema, { deleted: true, formId: webhook.formId });
    },
  };
  return { client, asked };
}

const hook = (id: string, formId: string, init: MessageInitShape<typeof WebhookSchema> = {}) =>
  create(WebhookSchema, { id, formId, url: `https://hooks.example.com/${id}`, secret: "whsec_new", enabled: true, eventTypes: ["FORM_RESPONSE"], ...init });

function listening(now?: () => Date) {
  const held = new HeldWebhooks({ now });
  held.listening();
  return held;
}

describe("HeldWebhooks", () => {
  it("asks once per webhook and per form's subscriptions, then answers from memory", async () => {
    const { client, asked } = fakeWebhooks([hook("w1", "f1"), hook("w2", "f1"), hook("w3", "f2")]);
    const webhooks = listening().around(client);
    for (let i = 0; i < 3; i++) {
      assert.equal((await webhooks.getWebhookForDelivery({ id: "w1" })).webhook?.url, "https://hooks.example.com/w1");
      assert.deepEqual((await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" })).webhooks.map((w) => w.id), ["w1", "w2"]);
    }
    assert.deepEqual(asked, { byId: 1, list: 1, disable: 0, gone: 0 });
  });

  it("a notice drops the webhook and its form's subscriptions, not other forms'", async () => {
    const hooks = [hook("w1", "f1"), hook("w3", "f2")];
    const { client, asked } = fakeWebhooks(hooks);
    const held = listening();
    const webhooks = held.around(client);
    await webhooks.getWebhookForDelivery({ id: "w1" });
    for (const formId of ["f1", "f2"]) await webhooks.listEnabledWebhooks({ formId, eventType: "FORM_RESPONSE" });
    hooks[0].url = "https://hooks.example.com/moved";
    hooks.push(hook("w4", "f1"));
    held.changed("f1 w1");
    held.changed("f1 w4");
    assert.equal((await webhooks.getWebhookForDelivery({ id: "w1" })).webhook?.url, "https://hooks.example.com/moved");
    assert.deepEqual((await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" })).webhooks.map((w) => w.id), ["w1", "w4"]);
    await webhooks.listEnabledWebhooks({ formId: "f2", eventType: "FORM_RESPONSE" });
    assert.deepEqual(asked, { byId: 2, list: 3, disable: 0, gone: 0 });
  });

  it("a webhook it disables is asked again at once; nothing is held while the notices are lost", async () => {
    const { client, asked } = fakeWebhooks([hook("w1", "f1")]);
    const held = listening();
    const webhooks = held.around(client);
    await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" });
    await webhooks.getWebhookForDelivery({ id: "w1" });
    await webhooks.disableWebhook({ id: "w1", reason: "410 Gone" });
    assert.equal((await webhooks.getWebhookForDelivery({ id: "w1" })).webhook?.enabled, false);
    assert.deepEqual((await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" })).webhooks, []);
    held.lost();
    for (let i = 0; i < 2; i++) await webhooks.getWebhookForDelivery({ id: "w1" });
    assert.deepEqual(asked, { byId: 4, list: 2, disable: 1, gone: 0 });
  });

  it("a webhook it reports gone is asked again at once", async () => {
    const { client, asked } = fakeWebhooks([hook("w1", "f1"), hook("w2", "f1")]);
    const webhooks = listening().around(client);
    await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" });
    await webhooks.getWebhookForDelivery({ id: "w1" });
    await webhooks.webhookGone({ id: "w1", reason: "the receiver answered 410 Gone" });
    await assert.rejects(webhooks.getWebhookForDelivery({ id: "w1" }), (err: ConnectError) => err.code === Code.NotFound);
    assert.deepEqual((await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" })).webhooks.map((w) => w.id), ["w2"]);
    assert.deepEqual(asked, { byId: 2, list: 2, disable: 0, gone: 1 });
  });

  it("stops signing with a rotated-out secret when its overlap ends, as webhooks would answer then", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const previousSecretExpiresAt = timestampFromDate(new Date("2026-01-02T00:00:00Z"));
    const { client } = fakeWebhooks([hook("w1", "f1", { previousSecret: "whsec_old", previousSecretExpiresAt })]);
    const webhooks = listening(() => now).around(client);
    assert.equal((await webhooks.getWebhookForDelivery({ id: "w1" })).webhook?.previousSecret, "whsec_old");
    assert.equal((await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" })).webhooks[0].previousSecret, "whsec_old");
    now = new Date("2026-01-02T00:00:00Z");
    assert.equal((await webhooks.getWebhookForDelivery({ id: "w1" })).webhook?.previousSecret, "");
    assert.equal((await webhooks.listEnabledWebhooks({ formId: "f1", eventType: "FORM_RESPONSE" })).webhooks[0].previousSecret, "");
  });
});
