// The mails of a completed response, in plain text and HTML: the notification to the form's people
// (with a link to the response in the app) and the receipt to the respondent (a copy of their answers).
// Answers are shown as people read them: option texts for choices, file names for files (no links:
// a file link would need signing, and a receipt is no place for one).
import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { answerText as answerTextOf, questionTypes } from "@formsvc/form-document/block-types";
import { responseUrl } from "@formsvc/platform/app-links.ts";
import { escapeHtml, type Mail } from "@formsvc/platform/mail.ts";
import type { ResponseCompleted, ResponseField } from "@formsvc/proto/events/v1/events_pb.js";

const noAnswer = "(no answer)";

/** One field's answer as text. */
export function answerText(field: ResponseField): string {
  const value = field.value ? toJson(ValueSchema, field.value) : null;
  // A matrix's rows and columns read as their texts, as options do.
  const texts = new Map([...field.options, ...field.rows, ...field.columns].map((o) => [o.id, o.text]));
  const text = answerTextOf(field.type, value, { optionText: (id) => texts.get(id), fileNames: field.files.map((f) => f.name) });
  return text === "" ? noAnswer : text;
}

/** The questions and answers as text lines and as an HTML table. */
function answersBlock(event: ResponseCompleted): { text: string; html: string } {
  const rows = event.fields.map((field) => ({ label: field.label || field.questionId, answer: answerText(field) }));
  const text = rows.map((r) => `${r.label}\n${r.answer.replace(/^/gm, "  ")}`).join("\n\n");
  const html =
    `<table cellpadding="6" style="border-collapse: collapse">` +
    rows
      .map(
        (r) =>
          `<tr><th align="left" valign="top" style="border-bottom: 1px solid #ddd">${escapeHtml(r.label)}</th>` +
          `<td style="border-bottom: 1px solid #ddd; white-space: pre-wrap">${escapeHtml(r.answer)}</td></tr>`,
      )
      .join("") +
    `</table>`;
  return { text, html };
}

const page = (body: string) => `<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">${body}</body></html>`;

/** The mail telling a form's owner or member of a completed response. */
export function notificationMail(to: string, event: ResponseCompleted, publicUrl: string): Mail {
  const answers = answersBlock(event);
  const url = responseUrl(publicUrl, event.formId, event.responseId);
  const intro = `A response to "${event.formName}" was completed.`;
  const after = "You receive this mail because the form's settings name you under Notifications.";
  return {
    to,
    subject: `New response: ${event.formName}`,
    text: `${intro}\n\n${answers.text}\n\nSee it in the app: ${url}\n\n${after}\n`,
    html: page(
      `<p>${escapeHtml(intro)}</p>${answers.html}<p><a href="${escapeHtml(url)}">See it in the app</a></p><p style="color: #555">${escapeHtml(after)}</p>`,
    ),
  };
}

/** The receipt: a copy of the respondent's answers, to the address they gave. */
export function receiptMail(to: string, event: ResponseCompleted): Mail {
  const answers = answersBlock(event);
  const intro = `Thank you for answering "${event.formName}". A copy of your answers:`;
  const after = "You receive this mail because this address was given as yours in the form.";
  return {
    to,
    subject: `Your answers: ${event.formName}`,
    text: `${intro}\n\n${answers.text}\n\n${after}\n`,
    html: page(`<p>${escapeHtml(intro)}</p>${answers.html}<p style="color: #555">${escapeHtml(after)}</p>`),
  };
}

/**
 * The respondent's address: their answer to the receipt's question, when it is an EMAIL question and the
 * answer looks like one address (no spaces or line breaks, one @, no longer than an EMAIL answer may be).
 */
export function receiptAddress(event: ResponseCompleted, questionId: string): string | undefined {
  const field = event.fields.find((f) => f.questionId === questionId);
  if (!field || field.type !== "EMAIL" || field.value?.kind.case !== "stringValue") return undefined;
  const address = field.value.kind.value.trim();
  return address.length <= questionTypes.EMAIL.maxLength && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address) ? address : undefined;
}
