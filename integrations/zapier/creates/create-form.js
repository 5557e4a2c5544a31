// "Create Form": a draft form in a workspace (the API cannot publish; that is done in the app).
'use strict';
const { api } = require('../api');

module.exports = {
  key: 'create_form',
  noun: 'Form',
  display: { label: 'Create Form', description: 'Creates a draft form in a workspace.' },
  operation: {
    inputFields: [
      { key: 'workspaceId', label: 'Workspace', required: true, dynamic: 'workspace.id.name' },
      { key: 'name', label: 'Name', required: true },
    ],
    perform: async (z, bundle) => {
      const form = await api(z, bundle, 'POST', '/forms', { body: { workspaceId: bundle.inputData.workspaceId, name: bundle.inputData.name } });
      return { id: form.id, name: form.name, status: form.status, version: form.version };
    },
    sample: { id: 'F1a2B3c4D5e6F7g8', name: 'Event sign-up', status: 'draft', version: 1 },
  },
};
