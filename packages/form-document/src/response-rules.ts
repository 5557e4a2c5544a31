// What respondents are told when a response rule of issue 31 stops them, in one place: the submissions
// service refuses with these messages and the hosted page shows the same words.

/** Why a single-use link does not open a form (or none was given where one is required). */
export const linkProblems = {
  missing: "This form can be answered only through a personal single-use link. Please use the link you were sent.",
  unknown: "This link is not valid for this form. Please check that you copied all of it.",
  used: "This link has already been used to answer the form; each link takes one response.",
  expired: "This link has expired.",
  revoked: "This link has been withdrawn by the form's owner.",
} as const;

export type LinkProblem = keyof typeof linkProblems;

/** Why a completion of a form with a proof-of-work captcha (settings.proofOfWork) is refused. */
export const captchaProblems = {
  missing: "Please wait until the check that you are not a robot has finished, then send the form again.",
  invalid: "The check that you are not a robot failed. Please reload the page and try again.",
  expired: "The check that you are not a robot has expired. Please reload the page and try again.",
  replayed: "This check was already used for a response. Please reload the page to answer again.",
} as const;

/** Most links one CreateResponseLinks call mints. */
export const maxLinksPerCall = 1000;
