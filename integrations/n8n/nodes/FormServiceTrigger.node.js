// Starts a workflow on a form's events. Activating the workflow subscribes a webhook (subscriber "n8n": a
// second activation answers the same webhook, never a duplicate); deactivating deletes it. Each request is
// checked against the webhook's secret (X-Service-Signature over the raw body) before it runs the workflow.
'use strict';
const { createHmac, timingSafeEqual } = require('node:crypto');
const { api, credentialType, isNotFound } = require('../lib/api');
const { itemOfEvent } = require('../lib/response-items');

const eventTypes = [
  { name: 'Response Completed', value: 'FORM_RESPONSE' },
  { name: 'Partial Response Saved', value: 'FORM_RESPONSE_PARTIAL' },
  { name: 'Form Published', value: 'FORM_PUBLISHED' },
  { name: 'Form Closed', value: 'FORM_CLOSED' },
  { name: 'Form Moved to Trash', value: 'FORM_DELETED' },
];

/** Whether `signature` is base64(HMAC-SHA256(raw body, secret)). */
function signedBy(secret, rawBody, signature) {
  if (!secret || typeof signature !== 'string') return false;
  const expected = Buffer.from(createHmac('sha256', secret).update(rawBody).digest('base64'));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

class FormServiceTrigger {
  constructor() {
    this.description = {
      displayName: 'Form Service Trigger',
      name: 'formServiceTrigger',
      icon: 'file:formsvc.svg',
      group: ['trigger'],
      version: 1,
      description: "Starts the workflow on a form's responses and changes",
      defaults: { name: 'Form Service Trigger' },
      inputs: [],
      outputs: ['main'],
      credentials: [{ name: credentialType, required: true }],
      webhooks: [{ name: 'default', httpMethod: 'POST', responseMode: 'onReceived', path: 'webhook' }],
      properties: [
        { displayName: 'Form Name or ID', name: 'formId', type: 'options', typeOptions: { loadOptionsMethod: 'getForms' }, default: '', required: true },
        { displayName: 'Events', name: 'events', type: 'multiOptions', options: eventTypes, default: ['FORM_RESPONSE'], required: true },
      ],
    };
    this.methods = {
      loadOptions: {
        async getForms() {
          const page = await api(this, 'GET', '/forms', { qs: { limit: 500 } });
          return page.items.map((form) => ({ name: form.name || form.id, value: form.id }));
        },
      },
    };
    this.webhookMethods = {
      default: {
        async checkExists() {
          const data = this.getWorkflowStaticData('node');
          if (!data.webhookId) return false;
          try {
            await api(this, 'GET', `/webhooks/${encodeURIComponent(data.webhookId)}`);
            return true;
          } catch (err) {
            if (!isNotFound(err)) throw err;
            // Deleted meanwhile (its key deleted, a 410 answered): subscribe again.
            delete data.webhookId;
            delete data.secret;
            return false;
          }
        },
        async create() {
          const data = this.getWorkflowStaticData('node');
          const webhook = await api(this, 'POST', '/webhooks', {
            body: { formId: this.getNodeParameter('formId'), url: this.getNodeWebhookUrl('default'), subscriber: 'n8n', eventTypes: this.getNodeParameter('events') },
          });
          data.webhookId = webhook.id;
          // An existing webhook answers with its secret masked: a new one is issued, shown whole once.
          data.secret = webhook.secret.includes('…') ? (await api(this, 'POST', `/webhooks/${encodeURIComponent(webhook.id)}/rotate-secret`)).secret : webhook.secret;
          return true;
        },
        async delete() {
          const data = this.getWorkflowStaticData('node');
          if (data.webhookId) {
            try {
              await api(this, 'DELETE', `/webhooks/${encodeURIComponent(data.webhookId)}`);
            } catch (err) {
              if (!isNotFound(err)) return false;
            }
          }
          delete data.webhookId;
          delete data.secret;
          return true;
        },
      },
    };
  }

  async webhook() {
    const request = this.getRequestObject();
    const { secret } = this.getWorkflowStaticData('node');
    if (!signedBy(secret, request.rawBody, request.headers['x-service-signature'])) {
      this.getResponseObject().status(401).json({ error: 'invalid signature' });
      return { noWebhookResponse: true };
    }
    const event = request.body;
    const json = 'responseId' in event.data ? itemOfEvent(event) : { eventId: event.eventId, eventType: event.eventType, ...event.data };
    return { workflowData: [[{ json }]] };
  }
}

module.exports = { FormServiceTrigger };
