// What respondents are told when a response rule of issue 31 stops them, in one place. Each refusal has a
// problem code: the services and the gateway refuse with the code (a 403 JSON error's `code`, an RPC error's
// google.rpc.ErrorInfo reason) and its English message below; the hosted page shows the code's text from its
// catalogues (gateway/src/hosted/messages), whose keys are these codes.
export const refusals = {
  // Single-use links (settings.requireSingleUseLink).
  linkMissing: "This form can be answered only through a personal single-use link. Please use the link you were sent.",
  linkUnknown: "This link is not valid for this form. Please check that you copied all of it.",
  linkUsed: "This link has already been used to answer the form; each link takes one response.",
  linkExpired: "This link has expired.",
  linkRevoked: "This link has been withdrawn by the form's owner.",
  // Captchas: the proof of work (settings.proofOfWork) and a third party's (settings.captcha).
  captchaMissing: "Please wait until the check that you are not a robot has finished, then send the form again.",
  captchaInvalid: "The check that you are not a robot failed. Please reload the page and try again.",
  captchaExpired: "The check that you are not a robot has expired. Please reload the page and try again.",
  captchaReplayed: "This check was already used for a response. Please reload the page to answer again.",
  captchaUnavailable: "The check that you are not a robot could not be completed just now. Please try again in a minute.",
  // A password (settings.password).
  passwordRequired: "This form is protected by a password. Please enter it before answering.",
  passwordWrong: "That password is not right. Please try again.",
  // Email verification (settings.requireEmailVerification).
  emailRequired: "Please confirm your email address before answering this form.",
  emailCodeWrong: "That code is not right. Please check the code in the email and try again.",
  emailCodeExpired: "That code has expired. Please ask for a new one.",
  emailCodeAttempts: "That code was tried too often. Please ask for a new one.",
  emailUsed: "This email address has already been used to answer this form.",
} as const;

export type RefusalCode = keyof typeof refusals;

/** Whether `code` is one of ours (a code from an older or newer service may not be). */
export function isRefusalCode(code: string): code is RefusalCode {
  return Object.hasOwn(refusals, code);
}

/** The ErrorInfo domain of the services' refusals. */
export const refusalDomain = "formsvc.response-rules";

/** Why a single-use link does not open a form (or none was given where one is required). */
export type LinkProblem = "linkMissing" | "linkUnknown" | "linkUsed" | "linkExpired" | "linkRevoked";

/** The providers of settings.captcha, whose widget the page loads and whose verify endpoint the gateway asks. */
export const captchaProviders = ["turnstile", "hcaptcha", "recaptcha"] as const;
export type CaptchaProvider = (typeof captchaProviders)[number];

/** Most links one CreateResponseLinks call mints. */
export const maxLinksPerCall = 1000;
