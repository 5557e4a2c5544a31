import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create, fromJson } from "@bufbuild/protobuf";
import { timestampFromDate, ValueSchema } from "@bufbuild/protobuf/wkt";
import { EventSchema, FormChangedSchema, ResponseCompletedSchema } from "@formsvc/proto/events/v1/events_pb.js";
import { discordMessage, slackMessage } from "../testing/chat-shapes.ts";
import { envelopeOf } from "@formsvc/platform/events.ts";
import { sampleEvent, testFileLinks } from "../testing/fixtures.ts";
import { formatBody } from "./chat-formats.ts";
import { serializePayload, testPayload } from "./payload.ts";

const publicUrl = "https://forms.example.com";
const standard = serializePayload(envelopeOf(sampleEvent({ responseId: "resp_chat" })), testFileLinks);

/** A response to a form of `count` questions whose answers are long and full of markup. */
function bigResponse(count: number): string {
  const fields = Array.from({ length: count }, (_, i) => ({
    questionId: `q${i}`,
    type: "LONG_TEXT",
    label: `Question ${i} <b>&</b> ${"x".repeat(300)}`,
    value: fromJson(ValueSchema, `@everyone <script> & ${"y".repeat(3000)}`),
  }));
  const event = create(ResponseCompletedSchema, { eventId: "evt_big", responseId: "resp_big", formId: "form_1", formName: "F".repeat(400), submittedAt: timestampFromDate(new Date()), fields });
  return serializePayload(envelopeOf(event), testFileLinks);
}

describe("chat formats", () => {
  it("leaves a standard webhook's body as it is", () => {
    assert.equal(formatBody("standard", standard, publicUrl), standard);
  });

  it("makes a Slack Block Kit message: the form's name, answers by label with option texts and file links, a link to the response", () => {
    const body = slackMessage.parse(JSON.parse(formatBody("slack", standard, publicUrl)));
    assert.equal(body.text, 'New response to "Event sign-up"');
    assert.deepEqual(body.blocks[0], { type: "header", text: { type: "plain_text", text: "Event sign-up" } });
    const fields = body.blocks.flatMap((b) => ("fields" in b && b.fields ? b.fields.map((f) => f.text) : []));
    assert.ok(fields.includes("*Interests*\nMusic, Art"), JSON.stringify(fields));
    assert.ok(fields.some((f) => /^\*CV\*\n<https:\/\/forms\.example\.com\/files\/[^|]+\|cv\.pdf>$/.test(f)), JSON.stringify(fields));
    assert.deepEqual(body.blocks.at(-1), {
      type: "actions",
      elements: [{ type: "button", text: { type: "plain_text", text: "View response" }, url: `${publicUrl}/app/forms/form_1/responses/resp_chat` }],
    });
  });

  it("makes a Discord embed that mentions nobody, the same answers in fields", () => {
    const body = discordMessage.parse(JSON.parse(formatBody("discord", standard, publicUrl)));
    assert.deepEqual(body.allowed_mentions, { parse: [] });
    const [embed] = body.embeds;
    assert.deepEqual([embed.title, embed.description, embed.url], ["Event sign-up", 'New response to "Event sign-up"', `${publicUrl}/app/forms/form_1/responses/resp_chat`]);
    assert.ok(embed.fields?.some((f) => f.name === "Interests" && f.value === "Music, Art"));
    assert.ok(embed.fields?.some((f) => f.name === "CV" && /^\[cv\.pdf\]\(https:\/\/forms\.example\.com\/files\//.test(f.value)));
  });

  it("keeps within each chat's limits however many and long the answers, escaping Slack's markup", () => {
    const big = bigResponse(600);
    const slack = slackMessage.parse(JSON.parse(formatBody("slack", big, publicUrl)));
    assert.equal(slack.blocks.length, 50);
    assert.match(JSON.stringify(slack.blocks[1]), /130 more answers in the app/);
    assert.ok(!JSON.stringify(slack).includes("<script>"), "mrkdwn escaped");
    const discord = discordMessage.parse(JSON.parse(formatBody("discord", big, publicUrl)));
    assert.match(discord.embeds[0].description ?? "", /more answers in the app\)$/);
  });

  it("tells form events and test events apart, linking the form", () => {
    const changed = create(FormChangedSchema, { eventId: "evt_pub", formId: "form_1", workspaceId: "ws_1", formName: "Event sign-up", status: "published", version: 2, changedAt: timestampFromDate(new Date()) });
    const published = JSON.stringify(testPayload(create(EventSchema, { event: { case: "formPublished", value: changed } }), testFileLinks));
    const slack = slackMessage.parse(JSON.parse(formatBody("slack", published, publicUrl)));
    assert.equal(slack.text, '[Test] "Event sign-up" was published');
    const discord = discordMessage.parse(JSON.parse(formatBody("discord", published, undefined)));
    assert.deepEqual([discord.embeds[0].url, discord.embeds[0].fields], [undefined, []]);
  });
});
