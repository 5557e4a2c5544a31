// Who may answer a form (issue 31) as the hosted pages see it, and how a refusal reads. Each refusal is a
// problem code (response-rules.ts: linkUsed, passwordRequired, emailCodeWrong, captchaInvalid ...): a JSON
// endpoint answers it as `code` beside the English `error`; a page shows the code's text from its
// catalogue (messages/*.json, keyed by the codes).
// - Single-use links: a form with settings.requireSingleUseLink is opened only by a usable link's token,
//   `?t=TOKEN`, which the page carries on to every save (render-form.ts). Submissions binds: it checks the
//   token on each save and uses it up with the completion; the page only asks first.
// - A password (access-password.ts) and a confirmed email (access-email.ts), asked before the questions.
import type { Client } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import type { Request } from "express";
import type { FormSettings } from "@formsvc/form-document";
import { isRefusalCode, refusals, type RefusalCode } from "@formsvc/form-document/response-rules";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { errorCode, HttpError } from "../http-errors.ts";
import type { PageTexts } from "./page-messages.ts";

/** A refusal as the gateway throws it: its English message and its code (403 unless said). */
export function refusal(code: RefusalCode, status = 403): HttpError {
  return new HttpError(status, refusals[code], {}, [], code);
}

/** The refusal code of an error (the gateway's own, or a service's ErrorInfo), if it is one. */
export function refusalCodeOf(err: unknown): RefusalCode | undefined {
  const code = err instanceof HttpError ? err.code : err instanceof ConnectError ? errorCode(err) : undefined;
  return code && isRefusalCode(code) ? code : undefined;
}

/** A refusal's words in the page's language; an error that is no refusal, by its own message. */
export function refusalText(texts: PageTexts, err: unknown): string {
  const code = typeof err === "string" ? err : refusalCodeOf(err);
  if (code && isRefusalCode(code)) return texts.text(code);
  return err instanceof ConnectError ? err.rawMessage : err instanceof Error ? err.message : String(err);
}

/** The token of `?t=` (its first value when repeated); "" without one. */
export function linkTokenOf(req: Request): string {
  const raw = req.query.t;
  const value = Array.isArray(raw) ? raw[0] : raw;
  return typeof value === "string" ? value.slice(0, 200) : "";
}

/** Why the page may not be shown to this request for its single-use link, if it may not. A form without the setting needs nothing. */
export async function linkRefusal(submissions: Client<typeof SubmissionsService>, formId: string, settings: FormSettings, req: Request): Promise<RefusalCode | undefined> {
  if (!settings.requireSingleUseLink) return undefined;
  const token = linkTokenOf(req);
  if (!token) return "linkMissing";
  const { problem, code } = await submissions.checkResponseLink({ formId, token });
  if (!problem) return undefined;
  // A submissions older than the codes says only the message.
  return isRefusalCode(code) ? code : "linkUnknown";
}
