// The proof-of-work captcha (issue 31): the ALTCHA protocol (v2), with no third party. A form with
// settings.proofOfWork gets a challenge from GET /f/:formId/captcha, signed with a key derived from SECRET_KEY
// (so every replica verifies every challenge) and bound to the form; the altcha widget, served from our own
// origin (/f/assets/altcha.js), solves it in the respondent's browser, and the completion carries the
// solution, which is verified here and then spent: the replay store keeps its signature until the challenge
// expires (Redis when REDIS_URL is set, so replicas share it; else this process's memory).
import { createHash, createHmac, randomBytes, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CappedMap, createChallenge, verifySolution, type Challenge, type Payload } from "altcha-lib";
import { deriveKey } from "altcha-lib/algorithms/pbkdf2";
import type { Request, RequestHandler, Response } from "express";
import type { Redis } from "ioredis";
import type { FormSettings } from "@formsvc/form-document";
import type { CaptchaProvider } from "@formsvc/form-document/response-rules";
import { HttpError } from "../http-errors.ts";
import { refusal } from "./access-rules.ts";
import { escapeHtml } from "./html-text.ts";

/** The widget's script (a classic script: the page's CSP allows scripts of our own origin only). */
const altchaScriptFile = join(dirname(fileURLToPath(import.meta.resolve("altcha"))), "altcha.umd.min.cjs");

/** PBKDF2 iterations of one try: the work factor says how many tries the browser makes on average. */
const iterationsPerTry = 100;
/** How long a challenge may be solved and its solution sent. */
const challengeLifetimeMs = 10 * 60_000;

/** Where spent solutions are kept until their challenge expires. */
export interface ReplayStore {
  /** Marks `key` spent for `ttlMs`; false when it already was. */
  spend(key: string, ttlMs: number): Promise<boolean>;
}

export function memoryReplayStore(maxSize = 100_000): ReplayStore {
  const spent = new CappedMap<string, number>({ maxSize });
  return {
    async spend(key, ttlMs) {
      const now = Date.now();
      const until = spent.get(key);
      if (until !== undefined && until > now) return false;
      spent.set(key, now + ttlMs);
      return true;
    },
  };
}

export function redisReplayStore(redis: Redis, prefix = "formsvc:captcha:"): ReplayStore {
  return {
    async spend(key, ttlMs) {
      return (await redis.set(`${prefix}${key}`, "1", "PX", Math.max(1, ttlMs), "NX")) === "OK";
    },
  };
}

export interface CaptchaDeps {
  /** The HMAC secret of challenges (derived from SECRET_KEY); one of this process's own when absent. */
  secret?: string;
  replays?: ReplayStore;
  /** Where third-party captcha tokens are verified, by provider (CAPTCHA_<PROVIDER>_VERIFY_URL; captcha-providers.ts). */
  verifyUrls?: Partial<Record<CaptchaProvider, string>>;
}

export function proofOfWork(deps: CaptchaDeps = {}) {
  const secret = deps.secret ? createHmac("sha256", deps.secret).update("formsvc altcha challenges").digest("hex") : randomBytes(32).toString("hex");
  const replays = deps.replays ?? memoryReplayStore();
  const script = readFileSync(altchaScriptFile);
  const scriptVersion = createHash("sha256").update(script).digest("hex").slice(0, 12);

  /** A fresh challenge for the form: the browser tries about `workFactor` × 3/4 counters of PBKDF2. */
  const challenge = (formId: string, workFactor: number): Promise<Challenge> =>
    createChallenge({
      algorithm: "PBKDF2/SHA-256",
      cost: iterationsPerTry,
      counter: randomInt(Math.floor(workFactor / 2), workFactor),
      deriveKey,
      expiresAt: new Date(Date.now() + challengeLifetimeMs),
      hmacSignatureSecret: secret,
      data: { formId },
    });

  return {
    /** GET /f/assets/altcha.js: the same bytes for every form, linked with their hash. */
    script: ((req, res) => {
      res.setHeader("Content-Type", "text/javascript; charset=utf-8");
      res.setHeader("X-Content-Type-Options", "nosniff");
      res.setHeader("Cache-Control", req.query.v === scriptVersion ? "public, max-age=31536000, immutable" : "public, max-age=300");
      res.send(script);
    }) satisfies RequestHandler,

    /** GET /f/:formId/captcha: a fresh challenge; a form without the setting has none (404). */
    async sendChallenge(res: Response, formId: string, settings: FormSettings): Promise<void> {
      if (!settings.proofOfWork) throw new HttpError(404, "this form has no captcha");
      res.setHeader("Cache-Control", "no-store");
      res.json(await challenge(formId, settings.proofOfWork.workFactor));
    },

    /**
     * Throws the 403 a completion gets without a valid, unspent solution of a challenge of this form
     * (`payload`: the widget's base64 JSON). A form without the setting needs none.
     */
    async check(formId: string, settings: FormSettings, payload: string | undefined): Promise<void> {
      if (!settings.proofOfWork) return;
      if (!payload) throw refusal("captchaMissing");
      let parsed: Payload;
      try {
        parsed = JSON.parse(Buffer.from(payload, "base64").toString("utf8")) as Payload;
      } catch {
        throw refusal("captchaInvalid");
      }
      if (!parsed?.challenge?.parameters || !parsed.solution || parsed.challenge.parameters.data?.formId !== formId) throw refusal("captchaInvalid");
      const result = await verifySolution({ challenge: parsed.challenge, solution: parsed.solution, deriveKey, hmacSignatureSecret: secret }).catch(() => undefined);
      if (!result?.verified) throw refusal(result?.expired ? "captchaExpired" : "captchaInvalid");
      const expiresAt = (parsed.challenge.parameters.expiresAt ?? 0) * 1000;
      if (!(await replays.spend(parsed.challenge.signature!, expiresAt - Date.now()))) throw refusal("captchaReplayed");
    },

    /** The widget in the form (before its buttons) and its script, for a form with the setting; else nothing. */
    widgetHtml(req: Request, formId: string, settings: FormSettings): string | undefined {
      if (!settings.proofOfWork) return undefined;
      const challengeUrl = `${req.baseUrl}/${encodeURIComponent(formId)}/captcha`;
      return `<altcha-widget challenge="${escapeHtml(challengeUrl)}" auto="onload" name="captcha"></altcha-widget>
<script src="${escapeHtml(`${req.baseUrl}/assets/altcha.js?v=${scriptVersion}`)}" defer></script>\n`;
    },
  };
}

export type ProofOfWork = ReturnType<typeof proofOfWork>;
