// What the response triggers share: the form to watch, and the item's shape.
'use strict';

const formField = { key: 'formId', label: 'Form', required: true, dynamic: 'form.id.name', helpText: 'The form whose responses start the Zap.' };

const sample = {
  id: 'R9x8Y7w6V5u4T3s2',
  responseId: 'R9x8Y7w6V5u4T3s2',
  formId: 'F1a2B3c4D5e6F7g8',
  formName: 'Event sign-up',
  submittedAt: '2026-11-20T09:35:00.000Z',
  test: false,
  answers: { 'Your full name': 'Ada Lovelace', Plan: 'Pro' },
  hiddenFields: {},
  respondentCountry: 'GB',
};

const outputFields = [
  { key: 'responseId', label: 'Response ID' },
  { key: 'formId', label: 'Form ID' },
  { key: 'formName', label: 'Form name' },
  { key: 'submittedAt', label: 'Submitted at', type: 'datetime' },
  { key: 'respondentCountry', label: 'Respondent country' },
];

module.exports = { formField, sample, outputFields };
