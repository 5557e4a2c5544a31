// The English defaults of the settings texts a hosted page shows (without zod, so the app can read them): one
// left at its default is a system text, shown in the page's language; translations need none for it.
export { defaultThankYou } from "./theme.ts";
export const defaultSubmitLabel = "Submit";
export const defaultClosedMessage = "This form is closed.";
