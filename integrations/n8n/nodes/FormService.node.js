// Forms and their responses as workflow items: list forms; get one response or list them (newest first,
// paged by cursor), with answers by question label and option texts.
'use strict';
const { api, credentialType, pagedList } = require('../lib/api');
const { itemOfSubmission } = require('../lib/response-items');

const filters = [
  { name: 'Completed', value: 'completed' },
  { name: 'Partial', value: 'partial' },
  { name: 'All', value: 'all' },
];

class FormService {
  constructor() {
    this.description = {
      displayName: 'Form Service',
      name: 'formService',
      icon: 'file:formsvc.svg',
      group: ['transform'],
      version: 1,
      subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
      description: 'Reads forms and their responses',
      defaults: { name: 'Form Service' },
      inputs: ['main'],
      outputs: ['main'],
      credentials: [{ name: credentialType, required: true }],
      properties: [
        {
          displayName: 'Resource',
          name: 'resource',
          type: 'options',
          noDataExpression: true,
          options: [
            { name: 'Form', value: 'form' },
            { name: 'Response', value: 'response' },
          ],
          default: 'response',
        },
        {
          displayName: 'Operation',
          name: 'operation',
          type: 'options',
          noDataExpression: true,
          displayOptions: { show: { resource: ['form'] } },
          options: [{ name: 'Get Many', value: 'getAll', action: 'Get many forms' }],
          default: 'getAll',
        },
        {
          displayName: 'Operation',
          name: 'operation',
          type: 'options',
          noDataExpression: true,
          displayOptions: { show: { resource: ['response'] } },
          options: [
            { name: 'Get', value: 'get', action: 'Get a response' },
            { name: 'Get Many', value: 'getAll', action: 'Get many responses' },
          ],
          default: 'getAll',
        },
        { displayName: 'Form ID', name: 'formId', type: 'string', default: '', required: true, displayOptions: { show: { resource: ['response'] } } },
        { displayName: 'Response ID', name: 'responseId', type: 'string', default: '', required: true, displayOptions: { show: { resource: ['response'], operation: ['get'] } } },
        { displayName: 'Filter', name: 'filter', type: 'options', options: filters, default: 'completed', displayOptions: { show: { resource: ['response'], operation: ['getAll'] } } },
        { displayName: 'Return All', name: 'returnAll', type: 'boolean', default: false, displayOptions: { show: { operation: ['getAll'] } } },
        {
          displayName: 'Limit',
          name: 'limit',
          type: 'number',
          typeOptions: { minValue: 1 },
          default: 50,
          displayOptions: { show: { operation: ['getAll'], returnAll: [false] } },
        },
      ],
    };
  }

  async execute() {
    const out = [];
    for (let i = 0; i < this.getInputData().length; i++) {
      const resource = this.getNodeParameter('resource', i);
      const operation = this.getNodeParameter('operation', i);
      const limit = operation === 'getAll' && !this.getNodeParameter('returnAll', i) ? this.getNodeParameter('limit', i) : undefined;
      if (resource === 'form') {
        for (const form of await pagedList(this, '/forms', {}, limit)) out.push({ json: form, pairedItem: { item: i } });
        continue;
      }
      const formId = encodeURIComponent(this.getNodeParameter('formId', i));
      const form = await api(this, 'GET', `/forms/${formId}`);
      const submissions =
        operation === 'get'
          ? [await api(this, 'GET', `/forms/${formId}/submissions/${encodeURIComponent(this.getNodeParameter('responseId', i))}`)]
          : await pagedList(this, `/forms/${formId}/submissions`, { filter: this.getNodeParameter('filter', i) }, limit);
      for (const submission of submissions) out.push({ json: itemOfSubmission(submission, form), pairedItem: { item: i } });
    }
    return [out];
  }
}

module.exports = { FormService };
