// The connection: the instance's base URL and an API key, tested on GET /api/v1/users/me.
'use strict';

class FormServiceApi {
  constructor() {
    this.name = 'formServiceApi';
    this.displayName = 'Form Service API';
    this.documentationUrl = 'https://github.com/formsvc/formsvc#integrations';
    this.properties = [
      { displayName: 'Base URL', name: 'baseUrl', type: 'string', default: '', placeholder: 'https://forms.example.com', required: true },
      { displayName: 'API Key', name: 'apiKey', type: 'string', typeOptions: { password: true }, default: '', required: true },
    ];
    this.authenticate = { type: 'generic', properties: { headers: { Authorization: '=Bearer {{$credentials.apiKey}}' } } };
    this.test = { request: { baseURL: '={{$credentials.baseUrl.replace(/\\/+$/, "")}}/api/v1', url: '/users/me' } };
  }
}

module.exports = { FormServiceApi };
