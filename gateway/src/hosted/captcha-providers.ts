// Third-party captchas with the owner's keys (issue 31): Cloudflare Turnstile, hCaptcha and reCAPTCHA. A
// form with settings.captcha gets the provider's widget (its script only on such a form's page, which the
// page's CSP then allows) and each completion's token is verified by us at the provider's verify endpoint
// (CAPTCHA_<PROVIDER>_VERIFY_URL, the provider's own by default) with the form's secret key, as each
// provider documents it: a form-encoded POST of secret, response and remoteip, answered {"success": bool}.
import type { Request } from "express";
import type { FormSettings } from "@formsvc/form-document";
import type { CaptchaProvider } from "@formsvc/form-document/response-rules";
import { defaultCaptchaVerifyUrls } from "@formsvc/platform/config.ts";
import { refusal } from "./access-rules.ts";
import { escapeHtml } from "./html-text.ts";

interface Provider {
  /** The widget's script, loaded only by the page of a form using it. */
  script: string;
  /** The class of the element the script turns into the widget. */
  widgetClass: string;
  /** The form field the widget fills with its token. */
  tokenField: string;
  /** What the page's CSP allows for the widget, by directive. */
  csp: { "script-src": string[]; "frame-src": string[]; "style-src"?: string[]; "connect-src"?: string[] };
}

export const captchaProviderInfo: Record<CaptchaProvider, Provider> = {
  turnstile: {
    script: "https://challenges.cloudflare.com/turnstile/v0/api.js",
    widgetClass: "cf-turnstile",
    tokenField: "cf-turnstile-response",
    csp: { "script-src": ["https://challenges.cloudflare.com"], "frame-src": ["https://challenges.cloudflare.com"] },
  },
  hcaptcha: {
    script: "https://js.hcaptcha.com/1/api.js",
    widgetClass: "h-captcha",
    tokenField: "h-captcha-response",
    csp: {
      "script-src": ["https://hcaptcha.com", "https://*.hcaptcha.com"],
      "frame-src": ["https://hcaptcha.com", "https://*.hcaptcha.com"],
      "style-src": ["https://hcaptcha.com", "https://*.hcaptcha.com"],
      "connect-src": ["https://hcaptcha.com", "https://*.hcaptcha.com"],
    },
  },
  recaptcha: {
    script: "https://www.google.com/recaptcha/api.js",
    widgetClass: "g-recaptcha",
    tokenField: "g-recaptcha-response",
    csp: {
      "script-src": ["https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/"],
      "frame-src": ["https://www.google.com/recaptcha/", "https://recaptcha.google.com/recaptcha/"],
    },
  },
};

/** The sources a form's page adds to a CSP directive for its captcha's widget; none without one. */
export function captchaCspSources(settings: Partial<Pick<FormSettings, "captcha">>, directive: keyof Provider["csp"]): string[] {
  return settings.captcha ? (captchaProviderInfo[settings.captcha.provider].csp[directive] ?? []) : [];
}

/** How long the gateway waits for a provider's verify endpoint. */
const verifyTimeoutMs = 10_000;

export function thirdPartyCaptcha(verifyUrls: Partial<Record<CaptchaProvider, string>> = {}) {
  return {
    /** The widget before the form's buttons, and its provider's script; nothing for a form without settings.captcha. */
    widgetHtml(settings: FormSettings): string | undefined {
      if (!settings.captcha) return undefined;
      const provider = captchaProviderInfo[settings.captcha.provider];
      // data-hf-captcha-field tells the page's script which field holds the token (form-page.js).
      return `<div class="${provider.widgetClass}" data-sitekey="${escapeHtml(settings.captcha.siteKey)}" data-hf-captcha-field="${provider.tokenField}"></div>
<script src="${escapeHtml(provider.script)}" async defer></script>\n`;
    },

    /** The token of a plain post: the widget's own field (the page's script sends it as `captcha`). */
    tokenOfFields(settings: FormSettings, fields: Record<string, unknown>): string | undefined {
      if (!settings.captcha) return undefined;
      const value = fields[captchaProviderInfo[settings.captcha.provider].tokenField] ?? fields.captcha;
      const token = Array.isArray(value) ? value[0] : value;
      return typeof token === "string" ? token : undefined;
    },

    /**
     * Throws the 403 a completion gets without a token the provider verifies for the form's secret key (503
     * when the provider cannot be asked). A form without settings.captcha needs none.
     */
    async check(settings: FormSettings, secret: string, token: string | undefined, req: Request): Promise<void> {
      if (!settings.captcha) return;
      if (!token) throw refusal("captchaMissing");
      if (token.length > 4096) throw refusal("captchaInvalid");
      const provider = settings.captcha.provider;
      const body = new URLSearchParams({ secret, response: token });
      if (req.ip) body.set("remoteip", req.ip);
      let answer: { success?: unknown; "error-codes"?: unknown };
      try {
        const res = await fetch(verifyUrls[provider] ?? defaultCaptchaVerifyUrls[provider], {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body,
          signal: AbortSignal.timeout(verifyTimeoutMs),
        });
        if (!res.ok) throw new Error(`verify endpoint answered ${res.status}`);
        answer = (await res.json()) as typeof answer;
      } catch {
        throw refusal("captchaUnavailable", 503);
      }
      if (answer?.success === true) return;
      const codes = Array.isArray(answer?.["error-codes"]) ? answer["error-codes"] : [];
      throw refusal(codes.includes("timeout-or-duplicate") ? "captchaExpired" : "captchaInvalid");
    },
  };
}

export type ThirdPartyCaptcha = ReturnType<typeof thirdPartyCaptcha>;
