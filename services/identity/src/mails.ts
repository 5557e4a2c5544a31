// The mails identity sends, in plain text and HTML. The links go to the app at PUBLIC_URL.
import { escapeHtml, type Mail } from "@formsvc/platform/mail.ts";
import { productName } from "@formsvc/platform/product.ts";

/** How long each kind of mailed link works. */
export const linkLifetimeMs = {
  "password-reset": 60 * 60 * 1000,
  "email-verification": 7 * 24 * 60 * 60 * 1000,
  invitation: 7 * 24 * 60 * 60 * 1000,
} as const;

export type LinkPurpose = keyof typeof linkLifetimeMs;

/** The app's page each link opens, with the token in the query. */
const linkPaths: Record<LinkPurpose, string> = {
  "password-reset": "/app/reset-password",
  "email-verification": "/app/verify-email",
  invitation: "/app/accept-invite",
};

export function linkUrl(publicUrl: string, purpose: LinkPurpose, token: string): string {
  return `${publicUrl}${linkPaths[purpose]}?token=${encodeURIComponent(token)}`;
}

/** A mail of a few paragraphs and one link, as text and as HTML. */
function linkMail(to: string, subject: string, paragraphs: string[], action: string, url: string, after: string): Mail {
  const text = [...paragraphs, `${action}: ${url}`, after].join("\n\n") + "\n";
  const html =
    `<!doctype html><html><body style="font-family: sans-serif; line-height: 1.5">` +
    paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`).join("") +
    `<p><a href="${escapeHtml(url)}">${escapeHtml(action)}</a></p>` +
    `<p style="color: #555">${escapeHtml(after)}</p></body></html>`;
  return { to, subject, text, html };
}

export function passwordResetMail(to: string, url: string): Mail {
  return linkMail(
    to,
    "Set a new password",
    [`Someone (we hope you) asked to set a new password for your ${productName} account.`],
    "Set a new password",
    url,
    "The link works once, within an hour. If you did not ask, ignore this mail: your password stays as it is.",
  );
}

export function verificationMail(to: string, name: string, url: string): Mail {
  return linkMail(
    to,
    "Confirm your email address",
    [`Welcome to ${productName}, ${name}.`, "Please confirm that this address is yours."],
    "Confirm my email address",
    url,
    "The link works once, within 7 days. If you did not sign up, ignore this mail.",
  );
}

export function invitationMail(to: string, inviter: string, workspace: string, url: string): Mail {
  return linkMail(
    to,
    `${inviter} invited you to ${workspace}`,
    [`${inviter} invited you to the workspace "${workspace}" on formsvc.`],
    "Accept the invitation",
    url,
    "The link works once, within 7 days, and signs you up if you have no account yet.",
  );
}
