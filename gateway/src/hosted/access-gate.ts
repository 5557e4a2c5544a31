// What a form asks before its questions (issue 31): its password (settings.password, access-password.ts),
// then an email address confirmed by a mailed code (settings.requireEmailVerification; submissions mails
// the code, keeps the verification and binds it to the response). Plain HTML forms, so the same steps
// work with and without JavaScript; each endpoint also takes JSON for clients of their own:
//   POST /f/:formId/password       {password}                  -> {passed: true} + the pass cookie
//   POST /f/:formId/email          {email}                     -> {verificationId} (the code is mailed)
//   POST /f/:formId/email/confirm  {verificationId, code}      -> {email} + the verification cookie
// Saves (responses, uploads) without them are refused 403 with code passwordRequired or emailRequired.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { parseCookie, stringifySetCookie } from "cookie";
import express, { type Request, type Response, type Router } from "express";
import type { FormSettings } from "@formsvc/form-document";
import type { FormAccess } from "@formsvc/proto/forms/v1/forms_pb.js";
import type { SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { HttpError } from "../http-errors.ts";
import { rateLimit } from "../rate-limit/rate-limit-middleware.ts";
import type { RateLimitStore } from "../rate-limit/sliding-window.ts";
import { formCookiePath, formPasswords } from "./access-password.ts";
import { refusal, refusalCodeOf, refusalText } from "./access-rules.ts";
import type { PageTexts } from "./page-messages.ts";
import { escapeHtml } from "./html-text.ts";
import { renderGatePage, type FormInfo } from "./render-form.ts";

/** A form as a gate's page shows it: in the respondent's language, with what the gateway keeps of its secrets. */
export interface GateForm {
  formId: string;
  settings: FormSettings;
  access: Pick<FormAccess, "passwordHash" | "captchaSecret">;
  info: FormInfo & { texts: PageTexts };
}

export interface AccessGateDeps {
  submissions: Client<typeof SubmissionsService>;
  /** SECRET_KEY: what passes are signed with. */
  secret?: string;
  store: RateLimitStore;
  /** The form of a request to one of its pages (`:formId`), in the request's language. */
  formOf(req: Request): Promise<GateForm>;
  /** Sends a page with the form's headers. */
  send(res: Response, status: number, html: string, settings: FormSettings): void;
}

const emailCookie = "hf_email";
/** How long a confirmed address stays in the browser (submissions takes it for a day). */
const emailCookieSeconds = 24 * 3600;
/** Tries of a password a minute, per address and form. */
const passwordTriesPerMinute = 10;
/** Codes asked for a minute per address (submissions also caps them per address mailed to). */
const codeMailsPerMinute = 10;
/** Codes entered a minute per address (each verification takes 5 wrong ones). */
const codeTriesPerMinute = 20;

const bodies = [express.urlencoded({ extended: false, limit: "8kb", parameterLimit: 20 }), express.json({ limit: "8kb" })];
const field = (req: Request, name: string): string => {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" ? value.slice(0, 500) : "";
};
/** This request's query string ("?..." or ""): the form's own link, kept through the steps (its `t`, `lang`, hidden fields). */
const searchOf = (req: Request) => {
  const at = req.originalUrl.indexOf("?");
  return at < 0 ? "" : req.originalUrl.slice(at);
};

export function accessGate(deps: AccessGateDeps) {
  const passwords = formPasswords(deps.secret);
  const byAddressAndForm = (_res: Response, req: Request) => `${req.ip ?? "unknown"} ${String(req.params.formId)}`;
  const byAddress = (_res: Response, req: Request) => req.ip ?? "unknown";
  const verificationOf = (req: Request) => {
    const id = parseCookie(req.headers.cookie ?? "")[emailCookie] ?? "";
    return id.length <= 100 ? id : "";
  };
  const needsPassword = (req: Request, gate: Pick<GateForm, "formId" | "access">) => gate.access.passwordHash !== "" && !passwords.passed(req, gate.formId, gate.access.passwordHash);

  const form = (gate: GateForm, req: Request, step: string, inner: string, error?: string) => {
    const t = gate.info.texts.text;
    const summary = error ? `<div class="hf-summary" role="alert" tabindex="-1"><p>${escapeHtml(error)}</p></div>\n` : "";
    const action = `${formCookiePath(req, gate.formId)}/${step}${searchOf(req)}`;
    return `<form class="hf-form" method="post" action="${escapeHtml(action)}" accept-charset="utf-8" aria-labelledby="hf-title">\n${summary}${inner}\n<div class="hf-nav"><button type="submit" class="hf-submit">${escapeHtml(t("continue"))}</button></div>\n</form>`;
  };
  const input = (id: string, label: string, attrs: string) =>
    `<div class="hf-q"><label class="hf-label" for="${id}">${escapeHtml(label)}</label>\n<input id="${id}" ${attrs}></div>`;

  const passwordPage = (gate: GateForm, req: Request, error?: string) => {
    const t = gate.info.texts.text;
    return renderGatePage(
      gate.info,
      form(gate, req, "password", `<p>${escapeHtml(t("passwordRequired"))}</p>\n${input("hf-password", t("passwordLabel"), 'type="password" name="password" autocomplete="current-password" maxlength="200" required autofocus')}`, error),
    );
  };
  const emailPage = (gate: GateForm, req: Request, error?: string, email = "") => {
    const t = gate.info.texts.text;
    return renderGatePage(
      gate.info,
      form(gate, req, "email", `<p>${escapeHtml(t("emailRequired"))}</p>\n${input("hf-email", t("emailLabel"), `type="email" name="email" autocomplete="email" maxlength="254" value="${escapeHtml(email)}" required autofocus`)}`, error),
    );
  };
  const codePage = (gate: GateForm, req: Request, verificationId: string, email: string, error?: string) => {
    const t = gate.info.texts.text;
    const again = `<p><a href="${escapeHtml(`${formCookiePath(req, gate.formId)}${searchOf(req)}`)}">${escapeHtml(t("emailNewCode"))}</a></p>`;
    const inner = `<p>${escapeHtml(t("emailCodeSent", { email }))}</p>
<input type="hidden" name="verificationId" value="${escapeHtml(verificationId)}"><input type="hidden" name="email" value="${escapeHtml(email)}">
${input("hf-code", t("emailCodeLabel"), 'type="text" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" maxlength="7" required autofocus')}
${again}`;
    return renderGatePage(gate.info, form(gate, req, "email/confirm", inner, error));
  };

  /** On to the form itself: its page, with the link it was opened by. */
  const backToForm = (req: Request, res: Response, gate: GateForm) => res.redirect(303, `${formCookiePath(req, gate.formId)}${searchOf(req)}`);

  return {
    /** Sends the page of the first step the respondent has not taken (password, then email), if any: true when it did. */
    async pageGate(req: Request, res: Response, gate: GateForm): Promise<boolean> {
      if (needsPassword(req, gate)) deps.send(res, 200, passwordPage(gate, req), gate.settings);
      else if (gate.settings.requireEmailVerification && !verificationOf(req)) deps.send(res, 200, emailPage(gate, req), gate.settings);
      else return false;
      return true;
    },

    /**
     * Throws the 403 a save of this form gets without its password's pass or a confirmed address; answers the
     * email verification to send on ("" when the form asks for none). Submissions checks the verification.
     */
    saveAccess(req: Request, formId: string, settings: FormSettings, access: GateForm["access"]): string {
      if (needsPassword(req, { formId, access })) throw refusal("passwordRequired");
      if (!settings.requireEmailVerification) return "";
      const verification = verificationOf(req);
      if (!verification) throw refusal("emailRequired");
      return verification;
    },

    /** Whether the request may read the form's questions (its password's pass, when it has one). */
    readAccess(req: Request, formId: string, access: GateForm["access"]): void {
      if (needsPassword(req, { formId, access })) throw refusal("passwordRequired");
    },

    routes(router: Router): void {
      router.post("/:formId/password", rateLimit(deps.store, "form-password", passwordTriesPerMinute, byAddressAndForm), ...bodies, async (req, res) => {
        const json = Boolean(req.is("application/json"));
        const gate = await deps.formOf(req);
        if (!gate.access.passwordHash) {
          if (json) throw new HttpError(404, "this form has no password");
          return backToForm(req, res, gate);
        }
        const passed = await passwords.enter(req, res, gate.formId, gate.access.passwordHash, field(req, "password"));
        if (json) {
          if (!passed) throw refusal("passwordWrong");
          res.json({ passed: true });
        } else if (passed) backToForm(req, res, gate);
        else deps.send(res, 403, passwordPage(gate, req, gate.info.texts.text("passwordWrong")), gate.settings);
      });

      router.post("/:formId/email", rateLimit(deps.store, "form-email", codeMailsPerMinute, byAddress), ...bodies, async (req, res) => {
        const json = Boolean(req.is("application/json"));
        const gate = await deps.formOf(req);
        if (!gate.settings.requireEmailVerification) {
          if (json) throw new HttpError(404, "this form does not ask to confirm an email address");
          return backToForm(req, res, gate);
        }
        if (needsPassword(req, gate)) throw refusal("passwordRequired");
        const email = field(req, "email").trim();
        try {
          const { verificationId } = await deps.submissions.startEmailVerification({ formId: gate.formId, email });
          if (json) return void res.json({ verificationId });
          deps.send(res, 200, codePage(gate, req, verificationId, email), gate.settings);
        } catch (err) {
          const t = gate.info.texts.text;
          if (json || !(err instanceof ConnectError)) throw err;
          if (err.code === Code.InvalidArgument) return deps.send(res, 400, emailPage(gate, req, t("enterEmail"), email), gate.settings);
          if (err.code === Code.ResourceExhausted) return deps.send(res, 429, emailPage(gate, req, t("tooManyAttempts"), email), gate.settings);
          if (refusalCodeOf(err)) return deps.send(res, 403, emailPage(gate, req, refusalText(gate.info.texts, err), email), gate.settings);
          throw err;
        }
      });

      router.post("/:formId/email/confirm", rateLimit(deps.store, "form-email-code", codeTriesPerMinute, byAddress), ...bodies, async (req, res) => {
        const json = Boolean(req.is("application/json"));
        const gate = await deps.formOf(req);
        const verificationId = field(req, "verificationId").slice(0, 100);
        try {
          const { email } = await deps.submissions.confirmEmailVerification({ formId: gate.formId, verificationId, code: field(req, "code").slice(0, 20) });
          res.append(
            "Set-Cookie",
            stringifySetCookie({ name: emailCookie, value: verificationId, path: formCookiePath(req, gate.formId), maxAge: emailCookieSeconds, httpOnly: true, sameSite: "lax", secure: req.secure }),
          );
          if (json) return void res.json({ email });
          backToForm(req, res, gate);
        } catch (err) {
          const code = refusalCodeOf(err);
          if (json || !code) throw err;
          const text = refusalText(gate.info.texts, err);
          // A code that can no longer be right: the address is asked again, for a new code.
          if (code === "emailCodeWrong") deps.send(res, 403, codePage(gate, req, verificationId, field(req, "email"), text), gate.settings);
          else deps.send(res, 403, emailPage(gate, req, text, field(req, "email")), gate.settings);
        }
      });
    },
  };
}

export type AccessGate = ReturnType<typeof accessGate>;
