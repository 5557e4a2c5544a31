// "New Response" (instant): a REST hook. Switching the Zap on subscribes a webhook of the form with
// subscriber "zapier" (switching it on again answers the same webhook, never a second); switching it off
// deletes it. Samples are the form's latest real responses (GET /forms/:id/sample-events).
'use strict';
const { api } = require('../api');
const { itemOfEvent } = require('../items');
const { formField, outputFields, sample } = require('./response-fields');

module.exports = {
  key: 'new_response',
  noun: 'Response',
  display: { label: 'New Response', description: 'Triggers instantly when someone completes a form.' },
  operation: {
    type: 'hook',
    inputFields: [formField],
    performSubscribe: async (z, bundle) =>
      api(z, bundle, 'POST', '/webhooks', { body: { formId: bundle.inputData.formId, url: bundle.targetUrl, subscriber: 'zapier', eventTypes: ['FORM_RESPONSE'] } }),
    performUnsubscribe: async (z, bundle) => {
      // Gone already (its key deleted, or a 410 answered) is unsubscribed as well.
      const response = await z.request({
        url: `${String(bundle.authData.baseUrl).replace(/\/+$/, '')}/api/v1/webhooks/${encodeURIComponent(bundle.subscribeData.id)}`,
        method: 'DELETE',
        skipThrowForStatus: true,
      });
      if (response.status !== 204 && response.status !== 404) throw new z.errors.Error(`unsubscribing failed: HTTP ${response.status}`, 'ApiError', response.status);
      return {};
    },
    perform: async (z, bundle) => [itemOfEvent(bundle.cleanedRequest)],
    performList: async (z, bundle) =>
      (await api(z, bundle, 'GET', `/forms/${encodeURIComponent(bundle.inputData.formId)}/sample-events`, { params: { eventType: 'FORM_RESPONSE', limit: 3 } })).items.map(itemOfEvent),
    sample,
    outputFields,
  },
};
