// Who may answer a form (issue 31) as the hosted pages see it: a form with settings.requireSingleUseLink is
// opened only by a usable single-use link's token, `?t=TOKEN`, which the page then carries on to every save
// (render-form.ts puts it on the plain post's action and the script's responses URL). Submissions is what
// binds: it checks the token on each save and uses it up with the completion; the page only asks it first,
// so that a respondent without a usable link is told before answering anything.
import type { Client } from "@connectrpc/connect";
import type { Request } from "express";
import type { FormSettings } from "@formsvc/form-document";
import { captchaProblems, linkProblems } from "@formsvc/form-document/response-rules";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import type { MessageKey, PageTexts } from "./page-messages.ts";

/** The token of `?t=` (its first value when repeated); "" without one. */
export function linkTokenOf(req: Request): string {
  const raw = req.query.t;
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === "string" ? value.slice(0, 200) : "";
}

/**
 * Why the page may not be shown to this request, if it may not: what the respondent is told (403). A form
 * without the setting needs nothing.
 */
export async function accessRefusal(submissions: Client<typeof SubmissionsService>, formId: string, settings: FormSettings, req: Request): Promise<string | undefined> {
  if (!settings.requireSingleUseLink) return undefined;
  const token = linkTokenOf(req);
  if (!token) return linkProblems.missing;
  const { problem } = await submissions.checkResponseLink({ formId, token });
  return problem || undefined;
}

/** Each refusal's words on a page: the catalogues' (page-messages.ts), by the rule's own English message. */
const refusalKeys = new Map<string, MessageKey>([
  [linkProblems.missing, "linkMissing"],
  [linkProblems.unknown, "linkUnknown"],
  [linkProblems.used, "linkUsed"],
  [linkProblems.expired, "linkExpired"],
  [linkProblems.revoked, "linkRevoked"],
  [captchaProblems.missing, "captchaMissing"],
  [captchaProblems.invalid, "captchaInvalid"],
  [captchaProblems.expired, "captchaExpired"],
  [captchaProblems.replayed, "captchaReplayed"],
]);

/** A refusal (`linkProblems`, `captchaProblems`) in the page's language; any other message as it is. */
export function refusalText(texts: PageTexts, message: string): string {
  const key = refusalKeys.get(message);
  return key ? texts.text(key) : message;
}
