// Links into the web app that messages carry (notification mails, chat webhooks): one place for its paths.

/** The app's page of one response. */
export function responseUrl(publicUrl: string, formId: string, responseId: string): string {
  return `${publicUrl}/app/forms/${encodeURIComponent(formId)}/responses/${encodeURIComponent(responseId)}`;
}

/** The app's page of a form (its editor). */
export function formUrl(publicUrl: string, formId: string): string {
  return `${publicUrl}/app/forms/${encodeURIComponent(formId)}/edit`;
}
