// "New Response (polling)": the fallback where the instance cannot reach Zapier's hooks (or Zapier cannot
// be let in): the form's completed responses, newest first, paged by cursor. Zapier keeps the ids seen.
'use strict';
const { api } = require('../api');
const { itemOfSubmission } = require('../items');
const { formField, outputFields, sample } = require('./response-fields');

module.exports = {
  key: 'new_response_polling',
  noun: 'Response',
  display: { label: 'New Response (Polling)', description: 'Checks a form for newly completed responses every few minutes.' },
  operation: {
    inputFields: [formField],
    canPaginate: true,
    perform: async (z, bundle) => {
      const formId = encodeURIComponent(bundle.inputData.formId);
      const cursor = bundle.meta.page ? await z.cursor.get() : undefined;
      const [form, page] = await Promise.all([
        api(z, bundle, 'GET', `/forms/${formId}`),
        api(z, bundle, 'GET', `/forms/${formId}/submissions`, { params: { filter: 'completed', limit: 50, ...(cursor ? { cursor } : {}) } }),
      ]);
      // The next page's cursor, kept by Zapier between page requests; the last page has none to keep.
      if (page.nextCursor) await z.cursor.set(page.nextCursor);
      return page.items.map((submission) => itemOfSubmission(submission, form));
    },
    sample,
    outputFields,
  },
};
