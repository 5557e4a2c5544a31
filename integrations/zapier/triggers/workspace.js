// The workspace picker (hidden), for creating forms.
'use strict';
const { api } = require('../api');

module.exports = {
  key: 'workspace',
  noun: 'Workspace',
  display: { label: 'Workspace', description: 'Lists workspaces for choosing one.', hidden: true },
  operation: {
    perform: async (z, bundle) => (await api(z, bundle, 'GET', '/workspaces', { params: { limit: 100 } })).items.map((w) => ({ id: w.id, name: w.name })),
    sample: { id: 'Wk8Qm3Rz1TbX9aLc', name: 'Acme' },
  },
};
