// Requests to the form service's REST API through n8n's authenticated request helper.
'use strict';

const credentialType = 'formServiceApi';

/** The API's JSON answer for `path` under the instance's /api/v1 (a 4xx or 5xx is thrown by n8n). */
async function api(context, method, path, { qs, body } = {}) {
  const { baseUrl } = await context.getCredentials(credentialType);
  return context.helpers.httpRequestWithAuthentication.call(context, credentialType, {
    method,
    url: `${String(baseUrl).replace(/\/+$/, '')}/api/v1${path}`,
    qs,
    body,
    json: true,
  });
}

/** Whether a request failed with 404 (n8n's errors carry the status as httpCode, axios' as response.status). */
function isNotFound(err) {
  return String(err?.httpCode ?? err?.response?.status ?? err?.statusCode ?? '') === '404';
}

/** Every item of a cursor-paged list (`nextCursor`), or the first `limit`. */
async function pagedList(context, path, qs, limit) {
  const items = [];
  let cursor;
  do {
    const page = await api(context, 'GET', path, { qs: { ...qs, limit: Math.min(limit ?? 500, 500), ...(cursor ? { cursor } : {}) } });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && (limit === undefined || items.length < limit));
  return limit === undefined ? items : items.slice(0, limit);
}

module.exports = { api, credentialType, isNotFound, pagedList };
