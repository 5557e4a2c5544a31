// The bodies Slack's and Discord's incoming webhooks take, as their documentation states them, to check
// what delivery sends a local receiver against. Imported by tests only.
// Slack: https://api.slack.com/messaging/webhooks, https://api.slack.com/reference/block-kit/blocks and
// .../composition-objects#text. Discord: https://discord.com/developers/docs/resources/webhook#execute-webhook
// and https://discord.com/developers/docs/resources/message#embed-object (with its limits).
import { z } from "zod";

const plainText = (max: number) => z.strictObject({ type: z.literal("plain_text"), text: z.string().min(1).max(max), emoji: z.boolean().optional() });
const mrkdwn = (max: number) => z.strictObject({ type: z.literal("mrkdwn"), text: z.string().min(1).max(max), verbatim: z.boolean().optional() });
const https = z.string().max(3000).regex(/^https?:\/\//);

const slackBlock = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("header"), text: plainText(150), block_id: z.string().max(255).optional() }),
  z.strictObject({ type: z.literal("context"), elements: z.array(z.union([mrkdwn(3000), plainText(3000)])).min(1).max(10) }),
  z
    .strictObject({ type: z.literal("section"), text: mrkdwn(3000).optional(), fields: z.array(z.union([mrkdwn(2000), plainText(2000)])).min(1).max(10).optional() })
    .refine((s) => s.text || s.fields, "a section has text or fields"),
  z.strictObject({
    type: z.literal("actions"),
    elements: z.array(z.strictObject({ type: z.literal("button"), text: plainText(75), url: https, action_id: z.string().max(255).optional() })).min(1).max(25),
  }),
]);

/** A message of a Slack incoming webhook: `text` (the notification's fallback) and up to 50 Block Kit blocks. */
export const slackMessage = z.strictObject({ text: z.string().min(1).max(40_000), blocks: z.array(slackBlock).min(1).max(50) });

const embed = z
  .strictObject({
    title: z.string().max(256).optional(),
    description: z.string().max(4096).optional(),
    url: https.optional(),
    timestamp: z.iso.datetime({ offset: true }).optional(),
    color: z.number().int().min(0).max(0xffffff).optional(),
    fields: z.array(z.strictObject({ name: z.string().min(1).max(256), value: z.string().min(1).max(1024), inline: z.boolean().optional() })).max(25).optional(),
  })
  .refine(
    (e) => (e.title?.length ?? 0) + (e.description?.length ?? 0) + (e.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0) <= 6000,
    "an embed holds at most 6000 characters",
  );

/** The JSON body of Discord's Execute Webhook: here, embeds only (1 to 10), mentioning nobody. */
export const discordMessage = z.strictObject({
  allowed_mentions: z.strictObject({ parse: z.array(z.enum(["roles", "users", "everyone"])) }),
  embeds: z.array(embed).min(1).max(10),
});
