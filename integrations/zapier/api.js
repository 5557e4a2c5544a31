// Requests to the form service's REST API: the base URL and key the user connected with, a JSON body.
'use strict';

/** `path` under the instance's /api/v1 (the base URL as typed, a trailing slash or not). */
const apiUrl = (bundle, path) => `${String(bundle.authData.baseUrl).replace(/\/+$/, '')}/api/v1${path}`;

/** The API's answer as JSON; a 4xx or 5xx is thrown by z.request with the API's `{"error"}` message. */
async function api(z, bundle, method, path, { params, body } = {}) {
  const response = await z.request({
    url: apiUrl(bundle, path),
    method,
    params,
    ...(body === undefined ? {} : { body }),
  });
  return response.status === 204 ? null : response.data;
}

/** Adds the key to every request (the platform's middleware). */
const authorize = (request, z, bundle) => {
  request.headers = { ...request.headers, Authorization: `Bearer ${bundle.authData.apiKey}` };
  return request;
};

/** Turns the API's error answers into messages the Zap's user reads. */
const explainErrors = (response, z) => {
  // A request that reads error statuses itself (a 404 that is no error) gets them.
  if (response.request && response.request.skipThrowForStatus) return response;
  if (response.status === 401) throw new z.errors.RefreshAuthError('The API key is missing or was deleted: connect again with a new key.');
  if (response.status >= 400) {
    const message = response.data && typeof response.data.error === 'string' ? response.data.error : `HTTP ${response.status}`;
    throw new z.errors.Error(message, 'ApiError', response.status);
  }
  return response;
};

module.exports = { api, authorize, explainErrors };
