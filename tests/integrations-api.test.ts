// What the API gives automation tools (n8n, Zapier, ...), against the whole running system: sample events
// with and without responses, one webhook per subscriber, a subscriber's webhook deleted on 410 Gone and
// with the API key that subscribed it, and WEBHOOK_ALLOWED_CIDRS (a listed loopback address reached, any
// other refused; loopback only).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { eventually } from "@formsvc/platform/testing/eventually.ts";
import { discordMessage, slackMessage } from "../services/delivery/src/testing/chat-shapes.ts";
import { privateUrlMessage } from "../services/webhooks/src/webhook-rules.ts";
import { startReceiver } from "./support/receiver.ts";
import { apiClient, createPublishedForm, createUserWithKey, startTestSystem, type TestSystem } from "./support/system.ts";

describe("the API for automation tools", () => {
  let sys: TestSystem;
  let user: Awaited<ReturnType<typeof createUserWithKey>>;
  let formId: string;
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  const receiver = async (answer?: Parameters<typeof startReceiver>[0]) => {
    const r = await startReceiver(answer);
    receivers.push(r);
    return r;
  };

  before(async () => {
    // No WEBHOOK_ALLOW_PRIVATE_URLS: only the listed loopback address may be reached.
    sys = await startTestSystem("integrations_api", { WEBHOOK_ALLOWED_CIDRS: "127.0.0.1/32", WEBHOOK_RETRY_SCHEDULE: "0.5" });
    user = await createUserWithKey(sys, "tools@example.com");
    formId = await createPublishedForm(sys, user, "Tool sign-up", [
      { id: "name", key: "name", type: "SHORT_TEXT", question: "Your name" },
      { id: "plan", key: "plan", type: "MULTIPLE_CHOICE", question: "Plan", options: [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }] },
    ]);
  });
  after(async () => {
    await sys?.stop();
    await Promise.all(receivers.map((r) => r.close()));
  });

  async function respond(answers: object) {
    const res = await fetch(`${sys.url}/f/${formId}/responses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ answers, completed: true }),
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { responseId: string }).responseId;
  }

  it("subscribes once per form, url and subscriber, delivers to a listed loopback address, and samples real events", async () => {
    const before = await user.api("GET", `/forms/${formId}/sample-events`);
    assert.equal(before.status, 200);
    assert.equal(before.body.items.length, 1);
    const [made] = before.body.items;
    assert.deepEqual([made.test, made.eventType], [true, "FORM_RESPONSE"]);
    assert.deepEqual(made.data.fields.map((f: { label: string }) => f.label), ["Your name", "Plan"]);

    const r = await receiver();
    const created = await user.api("POST", "/webhooks", { formId, url: r.url, subscriber: "zapier" });
    assert.equal(created.status, 201);
    assert.equal(created.body.subscriber, "zapier");
    const again = await user.api("POST", "/webhooks", { formId, url: r.url, subscriber: "zapier" });
    assert.equal(again.status, 200);
    assert.equal(again.body.id, created.body.id);
    assert.match(again.body.secret, /^whsec_…/, "the secret was shown at creation only");
    const listed = await user.api("GET", `/webhooks?formId=${formId}`);
    assert.deepEqual(listed.body.items.map((w: { id: string }) => w.id), [created.body.id]);

    const unlisted = await user.api("POST", "/webhooks", { formId, url: r.url.replace("127.0.0.1", "127.0.0.2"), subscriber: "zapier" });
    assert.equal(unlisted.status, 400);
    assert.equal(unlisted.body.error, privateUrlMessage);

    const responseId = await respond({ name: "Ada", plan: "pro" });
    await r.waitFor(1);
    const delivered = r.received[0].body;
    assert.equal(delivered.data.responseId, responseId);
    assert.deepEqual(delivered.data.fields[1].options, [{ id: "free", text: "Free" }, { id: "pro", text: "Pro" }]);

    const samples = await user.api("GET", `/forms/${formId}/sample-events?eventType=FORM_RESPONSE&limit=3`);
    assert.equal(samples.body.items.length, 1);
    const [sample] = samples.body.items;
    assert.equal(sample.eventId, `sample_${responseId}`);
    assert.equal(sample.test, undefined);
    assert.deepEqual(sample.data, delivered.data, "exactly the delivered body's data");

    const bad = await user.api("GET", `/forms/${formId}/sample-events?limit=11`);
    assert.equal(bad.status, 400);
    const foreign = await (await createUserWithKey(sys, "other@example.com")).api("GET", `/forms/${formId}/sample-events`);
    assert.equal(foreign.status, 404);
  });

  it("sends a slack-format webhook a Block Kit message, and a discord-format one an embed, in their documented shapes", async () => {
    const slack = await receiver();
    const discord = await receiver(() => ({ status: 204 }));
    assert.equal((await user.api("POST", "/webhooks", { formId, url: slack.url, format: "slack" })).status, 201);
    const discordHook = await user.api("POST", "/webhooks", { formId, url: discord.url, format: "discord" });
    assert.equal(discordHook.body.format, "discord");
    const responseId = await respond({ name: "Lin", plan: "free" });
    await Promise.all([slack.waitFor(1), discord.waitFor(1)]);
    const blocks = slackMessage.parse(slack.received[0].body).blocks;
    assert.ok(JSON.stringify(blocks).includes("*Plan*\\nFree"), "the option's text, by the question's label");
    const embed = discordMessage.parse(discord.received[0].body).embeds[0];
    assert.equal(new URL(embed.url ?? "").pathname, `/app/forms/${formId}/responses/${responseId}`, "a link to the response in the app (PUBLIC_URL)");
    assert.equal((await user.api("PATCH", `/webhooks/${discordHook.body.id}`, { format: "teams" })).status, 400);
  });

  it("deletes a subscriber's webhook when its receiver answers 410 Gone", async () => {
    const gone = await receiver(() => ({ status: 410 }));
    const hook = await user.api("POST", "/webhooks", { formId, url: gone.url, subscriber: "n8n" });
    assert.equal(hook.status, 201);
    await respond({ name: "Grace", plan: "free" });
    await gone.waitFor(1);
    await eventually(async () => (await user.api("GET", `/webhooks/${hook.body.id}`)).status === 404, 15_000, "the webhook deleted");
  });

  it("deletes the webhooks an API key subscribed when the key is deleted, and no others", async () => {
    const second = await sys.cli("key:create", "--email", "tools@example.com", "--name", "make");
    const api = apiClient(sys.url, second.key);
    const r = await receiver();
    const subscribed = await api("POST", "/webhooks", { formId, url: `${r.url}?make`, subscriber: "make" });
    const byHand = await api("POST", "/webhooks", { formId, url: `${r.url}?mine` });
    assert.deepEqual([subscribed.status, byHand.status], [201, 201]);
    await sys.cli("key:delete", "--id", second.id);
    await eventually(async () => (await user.api("GET", `/webhooks/${subscribed.body.id}`)).status === 404, 15_000, "the key's subscription deleted");
    assert.equal((await user.api("GET", `/webhooks/${byHand.body.id}`)).status, 200, "a webhook made by hand stays");
  });
});
