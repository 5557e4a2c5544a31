// The form service's Zapier app: key authentication tested on GET /api/v1/users/me, a form picker, an
// instant "New Response" trigger (REST hook, subscriber "zapier") with a polling fallback by cursor, a
// "Create Form" action and a "Find Response" search.
'use strict';
const { version: platformVersion } = require('zapier-platform-core');
const { version } = require('./package.json');
const { authorize, explainErrors } = require('./api');
const form = require('./triggers/form');
const workspace = require('./triggers/workspace');
const newResponse = require('./triggers/new-response');
const newResponsePolling = require('./triggers/new-response-polling');
const createForm = require('./creates/create-form');
const findResponse = require('./searches/find-response');

const authentication = {
  type: 'custom',
  fields: [
    { key: 'baseUrl', label: 'Base URL', required: true, type: 'string', helpText: 'Where your form service runs, e.g. `https://forms.example.com`.' },
    { key: 'apiKey', label: 'API key', required: true, type: 'password', helpText: 'Made in the app under Settings, API keys (starts with `fk-`).' },
  ],
  test: async (z, bundle) => {
    const response = await z.request({ url: `${String(bundle.authData.baseUrl).replace(/\/+$/, '')}/api/v1/users/me` });
    return response.data;
  },
  connectionLabel: (z, bundle) => bundle.inputData.email,
};

module.exports = {
  version,
  platformVersion,
  authentication,
  beforeRequest: [authorize],
  afterResponse: [explainErrors],
  triggers: { [form.key]: form, [workspace.key]: workspace, [newResponse.key]: newResponse, [newResponsePolling.key]: newResponsePolling },
  creates: { [createForm.key]: createForm },
  searches: { [findResponse.key]: findResponse },
};
