// Webhooks that automation tools subscribe: one per form, url and subscriber; deleted when their receiver
// answers 410 Gone or the API key that subscribed them is deleted.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, createRouterTransport, type Client } from "@connectrpc/connect";
import { asCaller, callerHeader } from "@formsvc/platform/caller.ts";
import { openDatabase, type MikroORM } from "@formsvc/platform/database.ts";
import { createLogger } from "@formsvc/platform/logger.ts";
import { createTestDatabase, type TestDatabase } from "@formsvc/platform/testing/database.ts";
import { rejectsWith } from "@formsvc/platform/testing/rpc-assertions.ts";
import { ApiKeySchema, IdentityService, ListApiKeysResponseSchema } from "@formsvc/proto/identity/v1/identity_pb.js";
import { WebhookGoneResponseSchema, WebhooksService } from "@formsvc/proto/webhooks/v1/webhooks_pb.js";
import { FakeForms } from "../../forms/src/testing/fake-forms.ts";
import { entities } from "./entities/index.ts";
import { createWebhooksHandlers, routes } from "./handlers/webhooks-handlers.ts";
import { keySubscriptions, type KeySubscriptions } from "./key-subscriptions.ts";
import { migrations } from "./migrations/index.ts";

const alice = "user-alice";
const forms = new FakeForms();
forms.add({ id: "form-a", members: [alice] });
forms.add({ id: "form-b", members: [alice] });

/** Identity's ListApiKeys over the keys each person still has; a person not listed is gone. */
const liveKeys = new Map<string, string[]>();
let identityDown = false;
const identity: Pick<Client<typeof IdentityService>, "listApiKeys"> = {
  async listApiKeys(_req, options) {
    if (identityDown) throw new ConnectError("identity down", Code.Unavailable);
    const user = new Headers(options?.headers).get(callerHeader) ?? "";
    const keys = liveKeys.get(user);
    if (!keys) throw new ConnectError("unknown caller", Code.Unauthenticated);
    return create(ListApiKeysResponseSchema, { apiKeys: keys.map((id) => create(ApiKeySchema, { id, name: id, createdAt: timestampFromDate(new Date()) })) });
  },
};

let database: TestDatabase;
let orm: MikroORM;
let client: Client<typeof WebhooksService>;
let subscriptions: KeySubscriptions;
const url = "https://hooks.example.com/n8n/1";

const subscribe = (formId: string, init: { subscriber?: string; apiKeyId?: string; url?: string; format?: string } = {}) =>
  client.createWebhook({ formId, url, subscriber: "n8n", ...init }, asCaller(alice));
const ids = async () =>
  ((await orm.em.getConnection().execute(`select "id" from "webhooks"."webhooks" order by "created_at", "id"`, [], "all")) as { id: string }[]).map((r) => r.id);

before(async () => {
  database = await createTestDatabase("webhooks_subscribers_test");
  orm = await openDatabase({ databaseUrl: database.databaseUrl, schema: "webhooks", entities, migrations });
  const logger = createLogger("webhooks-test", "silent");
  client = createClient(WebhooksService, createRouterTransport((router) => routes(router, createWebhooksHandlers({ orm, forms: forms.client, logger }))));
  subscriptions = keySubscriptions({ orm, identity, logger });
});

after(async () => {
  await orm?.close(true);
  await database?.drop();
});

describe("a subscriber's webhook", () => {
  it("is made once per form, url and subscriber: a repeat answers it, its secret masked", async () => {
    const first = await subscribe("form-a", { apiKeyId: "key-1" });
    assert.equal(first.existing, false);
    assert.equal(first.webhook!.subscriber, "n8n");
    assert.match(first.webhook!.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    const again = await subscribe("form-a", { apiKeyId: "key-1" });
    assert.deepEqual([again.existing, again.webhook!.id], [true, first.webhook!.id]);
    assert.match(again.webhook!.secret, /^whsec_….{4}$/);
    // Another subscriber, another form or a hand-made webhook of the same URL is another webhook.
    const others = [await subscribe("form-a", { subscriber: "zapier" }), await subscribe("form-b"), await subscribe("form-a", { subscriber: "" })];
    assert.ok(others.every((o) => !o.existing));
    assert.equal(new Set([first.webhook!.id, ...others.map((o) => o.webhook!.id)]).size, 4);
    assert.equal((await subscribe("form-a", { subscriber: "" })).existing, false, "webhooks made by hand are never merged");
  });

  it("keeps a format (standard by default), changed by an update, and refuses an unknown one", async () => {
    const chat = (await subscribe("form-b", { subscriber: "", url: "https://hooks.slack.com/services/T0/B0/x", format: "slack" })).webhook!;
    assert.equal(chat.format, "slack");
    assert.equal((await subscribe("form-b", { subscriber: "", url: "https://hooks.example.com/plain" })).webhook!.format, "standard");
    assert.equal((await client.updateWebhook({ id: chat.id, format: "discord" }, asCaller(alice))).webhook!.format, "discord");
    await rejectsWith(subscribe("form-b", { subscriber: "", format: "teams" }), Code.InvalidArgument, "format: one of standard, slack, discord");
  });

  it("refuses a malformed subscriber", async () => {
    await rejectsWith(subscribe("form-a", { subscriber: "N8N Cloud" }), Code.InvalidArgument, /^subscriber: /);
  });

  it("is deleted when its receiver answers 410 Gone; a hand-made one is disabled", async () => {
    const tool = (await subscribe("form-b", { subscriber: "make", url: "https://hooks.example.com/make" })).webhook!;
    const byHand = (await subscribe("form-b", { subscriber: "", url: "https://hooks.example.com/mine" })).webhook!;
    assert.deepEqual(await client.webhookGone({ id: tool.id, reason: "the receiver answered 410 Gone" }), create(WebhookGoneResponseSchema, { deleted: true, formId: "form-b" }));
    await rejectsWith(client.getWebhookForDelivery({ id: tool.id }), Code.NotFound);
    const gone = await client.webhookGone({ id: byHand.id, reason: "the receiver answered 410 Gone" });
    assert.deepEqual([gone.deleted, gone.formId], [false, "form-b"]);
    const kept = (await client.getWebhookForDelivery({ id: byHand.id })).webhook!;
    assert.deepEqual([kept.enabled, kept.disabledReason], [false, "the receiver answered 410 Gone"]);
    await rejectsWith(client.webhookGone({ id: tool.id, reason: "gone" }), Code.NotFound);
  });

  it("goes with the API key that subscribed it: swept by its key, its person, or every key (as when listening starts)", async () => {
    liveKeys.set(alice, ["key-2", "key-3"]);
    const byKey2 = (await subscribe("form-a", { apiKeyId: "key-2", url: "https://hooks.example.com/k2" })).webhook!;
    const byKey3 = (await subscribe("form-a", { apiKeyId: "key-3", url: "https://hooks.example.com/k3" })).webhook!;
    const byHand = (await subscribe("form-a", { subscriber: "", apiKeyId: "key-2", url: "https://hooks.example.com/k2-hand" })).webhook!;
    // key-1 (the first test's) is not among alice's keys: the sweep takes its webhook too.
    liveKeys.set(alice, ["key-3"]);
    identityDown = true;
    assert.equal(await subscriptions.sweep({ key: "key-2" }), 0, "nothing goes while identity cannot tell");
    identityDown = false;
    assert.equal(await subscriptions.sweep({ key: "key-2" }), 1);
    const left = await ids();
    assert.ok(!left.includes(byKey2.id) && left.includes(byKey3.id) && left.includes(byHand.id), "only key-2's subscription went");
    assert.equal(await subscriptions.sweep(), 1, "key-1's subscription, found by the sweep over every key");
    assert.ok((await ids()).includes(byKey3.id));
    // Alice is deleted: every subscription of hers goes; her hand-made webhooks stay (forms' purge takes them).
    liveKeys.delete(alice);
    assert.equal(await subscriptions.sweep({ user: alice }), 1);
    assert.ok(!(await ids()).includes(byKey3.id) && (await ids()).includes(byHand.id));
  });
});
