// What automation tools get: a response with its answers by question label as people read them (option
// texts, files as links), from a webhook body (hooks, samples) or a submission record (polling, searches).
// The same file in integrations/zapier/items.js and integrations/n8n/lib/response-items.js (each package is
// published alone; tests/n8n-nodes.test.ts keeps the two the same).
'use strict';

/** An answer's value as text: choices by their option texts, files by their links. */
function answerText(value, { options = [], files = [] } = {}) {
  if (files.length > 0) return files.map((f) => f.url).join(', ');
  const texts = new Map(options.map((o) => [o.id, o.text]));
  const values = Array.isArray(value) ? value : [value];
  if (options.length > 0) return values.filter((v) => v !== null && v !== undefined).map((v) => texts.get(String(v)) ?? String(v)).join(', ');
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** A webhook body (FORM_RESPONSE) as a Zap item; `id` is the response's, which Zapier de-duplicates by. */
function itemOfEvent(event) {
  const data = event.data;
  return {
    id: data.responseId,
    responseId: data.responseId,
    formId: data.formId,
    formName: data.formName,
    submittedAt: data.submittedAt,
    test: event.test === true,
    answers: Object.fromEntries(data.fields.map((f) => [f.label, answerText(f.value, f)])),
    hiddenFields: data.hiddenFields ?? {},
    respondentCountry: data.respondentCountry ?? null,
  };
}

/** The choice questions' options of a form document, by question key. */
function optionsByKey(document) {
  return Object.fromEntries((document.blocks ?? []).filter((b) => b.key && Array.isArray(b.options)).map((b) => [b.key, b.options]));
}

/** A submission record as a Zap item, option texts from `form`'s document. */
function itemOfSubmission(submission, form) {
  const options = optionsByKey(form.document);
  const answers = {};
  const hiddenFields = {};
  let respondentCountry = null;
  for (const [key, answer] of Object.entries(submission.answers)) {
    if (answer.type === 'HIDDEN_FIELDS') hiddenFields[answer.label] = answer.value;
    else if (answer.type === 'RESPONDENT_COUNTRY') respondentCountry = answer.value;
    else answers[answer.label] = answerText(answer.value, { options: options[key], files: answer.files });
  }
  return {
    id: submission.id,
    responseId: submission.id,
    formId: submission.formId,
    formName: form.name,
    submittedAt: submission.submittedAt,
    test: false,
    answers,
    hiddenFields,
    respondentCountry,
  };
}

module.exports = { itemOfEvent, itemOfSubmission };
