// "Find Response": one response of a form by its id, answers by label with option texts.
'use strict';
const { api } = require('../api');
const { itemOfSubmission } = require('../items');
const { formField, outputFields, sample } = require('../triggers/response-fields');

module.exports = {
  key: 'find_response',
  noun: 'Response',
  display: { label: 'Find Response', description: 'Finds a response of a form by its ID.' },
  operation: {
    inputFields: [formField, { key: 'responseId', label: 'Response ID', required: true }],
    perform: async (z, bundle) => {
      const formId = encodeURIComponent(bundle.inputData.formId);
      const response = await z.request({
        url: `${String(bundle.authData.baseUrl).replace(/\/+$/, '')}/api/v1/forms/${formId}/submissions/${encodeURIComponent(bundle.inputData.responseId)}`,
        skipThrowForStatus: true,
      });
      // Not found is an empty search, not an error.
      if (response.status === 404) return [];
      if (response.status >= 400) throw new z.errors.Error(response.data?.error ?? `HTTP ${response.status}`, 'ApiError', response.status);
      const form = await api(z, bundle, 'GET', `/forms/${formId}`);
      return [itemOfSubmission(response.data, form)];
    },
    sample,
    outputFields,
  },
};
