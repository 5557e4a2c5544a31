// SIGNUP's rule (the platform's config parses it): who may make an account in the app, by signing up or by
// following an invitation. The operator's CLI is not bound by it.
import type { SignUpPolicy } from "@formsvc/platform/config.ts";

/** Why `email` may not get an account `by` this way under `policy`; undefined when it may. */
export function signUpRefusal(policy: SignUpPolicy, email: string, by: "sign-up" | "invitation"): string | undefined {
  if (policy.mode === "open") return undefined;
  if (policy.mode === "invite-only") return by === "sign-up" ? "sign-up is by invitation only: ask someone in a workspace here to invite you" : undefined;
  // Exactly the listed domains: a subdomain is another organisation's as often as not.
  if (policy.domains.includes(email.slice(email.lastIndexOf("@") + 1))) return undefined;
  const list = policy.domains.join(", ");
  return by === "sign-up" ? `sign-up is open to addresses at ${list} only` : `invitations go to addresses at ${list} only`;
}
