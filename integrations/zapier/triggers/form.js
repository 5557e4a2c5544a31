// The form picker (a hidden trigger feeding dynamic dropdowns): the forms the key's person can see.
'use strict';
const { api } = require('../api');

module.exports = {
  key: 'form',
  noun: 'Form',
  display: { label: 'Form', description: 'Lists forms for choosing one.', hidden: true },
  operation: {
    canPaginate: true,
    perform: async (z, bundle) => {
      const cursor = bundle.meta.page ? await z.cursor.get() : undefined;
      const page = await api(z, bundle, 'GET', '/forms', { params: { limit: 100, ...(cursor ? { cursor } : {}) } });
      // The next page's cursor, kept by Zapier between page requests; the last page has none to keep.
      if (page.nextCursor) await z.cursor.set(page.nextCursor);
      return page.items.map((form) => ({ id: form.id, name: form.name, status: form.status }));
    },
    sample: { id: 'F1a2B3c4D5e6F7g8', name: 'Event sign-up', status: 'published' },
  },
};
