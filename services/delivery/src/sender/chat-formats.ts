// Bodies for chats' incoming webhooks: a webhook whose `format` is slack or discord is sent, instead of the
// standard body, a message made from it: the form's name, the answers by label (option texts, files as
// links) and a link to the response in the app. Made at each attempt from the stored standard body, so
// every attempt of a delivery sends the same bytes. Limits are the chats' documented ones:
// Slack Block Kit (https://api.slack.com/reference/block-kit/blocks): at most 50 blocks, a header's text
// 150 characters, a section's fields 10 of 2000; Discord embeds
// (https://discord.com/developers/docs/resources/message#embed-object-embed-limits): a title of 256, a
// description of 4096, 25 fields (name 256, value 1024, never empty), 6000 characters in all.
import { answerText } from "@formsvc/form-document/block-types";
import { formUrl, responseUrl } from "@formsvc/platform/app-links.ts";
import type { WebhookFormat } from "@formsvc/platform/webhook-headers.ts";
import type { FormData, PayloadField, ResponseData, WebhookPayload } from "./payload.ts";

/** What both chats show, before their own shapes and limits. */
interface ChatMessage {
  /** The notification's one line (Slack's `text`, Discord's description). */
  summary: string;
  title: string;
  answers: { label: string; text: string; links: { name: string; url: string }[] }[];
  /** The response (or form) in the app; absent without a public URL. */
  link?: { text: string; url: string };
  at: string;
}

const emptyAnswer = "—";

const eventSummaries: Record<string, (formName: string) => string> = {
  FORM_RESPONSE: (name) => `New response to "${name}"`,
  FORM_RESPONSE_PARTIAL: (name) => `Partial response to "${name}"`,
  FORM_PUBLISHED: (name) => `"${name}" was published`,
  FORM_CLOSED: (name) => `"${name}" was closed`,
  FORM_DELETED: (name) => `"${name}" was moved to the Trash`,
};

function answerOf(field: PayloadField): ChatMessage["answers"][number] {
  const options = new Map((field.options ?? []).map((o) => [o.id, o.text]));
  const files = field.files ?? [];
  const text = answerText(field.type, field.value, { optionText: (id) => options.get(id), fileNames: files.map((f) => f.name) });
  return { label: field.label || field.questionId, text, links: files.map((f) => ({ name: f.name, url: f.url })) };
}

function chatMessage(payload: WebhookPayload & { test?: true }, publicUrl: string | undefined): ChatMessage {
  const data = payload.data;
  const summary = (payload.test ? "[Test] " : "") + (eventSummaries[payload.eventType] ?? ((name: string) => `${payload.eventType}: "${name}"`))(data.formName);
  const response = "responseId" in data ? (data as ResponseData) : undefined;
  const link =
    publicUrl === undefined
      ? undefined
      : response
        ? { text: "View response", url: responseUrl(publicUrl, data.formId, response.responseId) }
        : { text: "Open form", url: formUrl(publicUrl, (data as FormData).formId) };
  return { summary, title: data.formName, answers: response ? response.fields.map(answerOf) : [], link, at: payload.createdAt };
}

/** `text` cut to `max` characters, an ellipsis marking the cut. */
function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

// --- Slack ---

/** Slack's mrkdwn treats these three as markup (https://api.slack.com/reference/surfaces/formatting#escaping). */
const slackEscape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const slackLimits = { blocks: 50, header: 150, fieldsPerSection: 10, field: 2000, text: 3000 } as const;

function slackBody(message: ChatMessage): object {
  const fields = message.answers.map((answer) => {
    const links = answer.links.map((l) => `<${l.url}|${slackEscape(l.name).replaceAll("|", "¦")}>`).join(", ");
    return { type: "mrkdwn", text: clip(`*${slackEscape(answer.label)}*\n${links || slackEscape(answer.text) || emptyAnswer}`, slackLimits.field) };
  });
  const sections: object[] = [];
  // Header, context and the link's actions take three blocks; the rest hold the answers, 10 to a section.
  const room = (slackLimits.blocks - 3) * slackLimits.fieldsPerSection;
  for (let at = 0; at < Math.min(fields.length, room); at += slackLimits.fieldsPerSection) {
    sections.push({ type: "section", fields: fields.slice(at, Math.min(at + slackLimits.fieldsPerSection, room)) });
  }
  const more = fields.length > room ? ` (${fields.length - room} more answers in the app)` : "";
  return {
    text: clip(message.summary, slackLimits.text),
    blocks: [
      { type: "header", text: { type: "plain_text", text: clip(message.title || message.summary, slackLimits.header) } },
      { type: "context", elements: [{ type: "mrkdwn", text: clip(slackEscape(message.summary + more), slackLimits.text) }] },
      ...sections,
      ...(message.link ? [{ type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: message.link.text }, url: message.link.url }] }] : []),
    ],
  };
}

// --- Discord ---

const discordLimits = { title: 256, description: 4096, fields: 25, name: 256, value: 1024, total: 6000 } as const;

function discordBody(message: ChatMessage): object {
  const title = clip(message.title || message.summary, discordLimits.title);
  let used = title.length + message.summary.length + 60;
  const fields: { name: string; value: string; inline: false }[] = [];
  for (const answer of message.answers) {
    const links = answer.links.map((l) => `[${l.name.replaceAll(/[[\]]/g, "")}](${l.url})`).join(", ");
    const field = { name: clip(answer.label || emptyAnswer, discordLimits.name), value: clip(links || answer.text || emptyAnswer, discordLimits.value), inline: false as const };
    if (fields.length === discordLimits.fields || used + field.name.length + field.value.length > discordLimits.total) break;
    used += field.name.length + field.value.length;
    fields.push(field);
  }
  const left = message.answers.length - fields.length;
  const description = clip(message.summary + (left > 0 ? ` (${left} more answers in the app)` : ""), discordLimits.description);
  return {
    // Answers are the respondent's text: they mention nobody (no @everyone from a form).
    allowed_mentions: { parse: [] },
    embeds: [{ title, description, ...(message.link ? { url: message.link.url } : {}), timestamp: message.at, fields }],
  };
}

/** The body a webhook of `format` is sent for the standard body `body` (returned as it is for standard). */
export function formatBody(format: WebhookFormat | string, body: string, publicUrl: string | undefined): string {
  if (format !== "slack" && format !== "discord") return body;
  const message = chatMessage(JSON.parse(body) as WebhookPayload & { test?: true }, publicUrl);
  return JSON.stringify(format === "slack" ? slackBody(message) : discordBody(message));
}
