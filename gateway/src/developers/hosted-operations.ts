// The public JSON endpoints of hosted forms (gateway/src/hosted/routes.ts), described for the reference:
// what they take and answer, for people who build their own front end. No key; limited per address.
import { z } from "zod";
import { answerValueSchema } from "@formsvc/api-records/schemas";
import { formDocumentSchema, idPattern, maxUploadBytes } from "@formsvc/form-document";
import type { ApiRoute } from "../routes/route.ts";
import { responseBodySchema } from "../hosted/routes.ts";

export interface HostedOperation extends Pick<ApiRoute, "method" | "path" | "operationId" | "summary" | "description" | "params" | "body" | "errors" | "success"> {
  tag: "Hosted forms";
  bodyType?: "application/json" | "multipart/form-data";
  /** Needs no key. */
  public: true;
  /** Takes an `Idempotency-Key` header (and may answer 422). */
  idempotent?: true;
}

const formParamsSchema = z.object({ formId: z.string().regex(idPattern).describe("The form's id, as in its link /f/{formId}") });

const definitionSchema = z
  .object({
    formId: z.string(),
    name: z.string(),
    version: z.number().int().min(0).describe("Send it back with the answers: they are checked against this version"),
    document: formDocumentSchema,
  })
  .meta({ id: "PublicFormDefinition" });

const uploadSchema = z
  .object({
    uploadId: z.string().describe("Put it in the FILE or SIGNATURE answer's array"),
    name: z.string(),
    size: z.number().int().min(0).describe("Bytes"),
    contentType: z.string(),
  })
  .meta({ id: "Upload", examples: [{ uploadId: "Up4Jx7Lq2Wc9Ns1D", name: "cv.pdf", size: 48213, contentType: "application/pdf" }] });

const savedResponseSchema = z
  .object({
    responseId: z.string().describe("Send it with the next page's answers to add to the same response"),
    completed: z.boolean(),
    calculated: z
      .record(z.string(), answerValueSchema)
      .optional()
      .describe("On completion, the calculated fields the thank-you screen recalls (`{{name}}`), by name, to fill it in; no others"),
  })
  .meta({ id: "SavedResponse", examples: [{ responseId: "R8kq2Vn0cXs7LmPa", completed: true }] });

const hostedResponseBodySchema = responseBodySchema.meta({
  id: "HostedResponseBody",
  description:
    "Answers by question key: the value shapes of AnswerValue (option ids for choices, upload ids for FILE and " +
    "SIGNATURE). `completed: false` saves a partial response (one page of a multi-page form); `responseId` continues it.",
  examples: [{ version: 2, answers: { q_name: "Ada Lovelace", q_email: "ada@example.com" }, hidden: { utm_source: "newsletter" }, completed: true }],
});

export const hostedOperations: HostedOperation[] = [
  {
    method: "get",
    path: "/f/:formId/definition",
    operationId: "getPublicForm",
    tag: "Hosted forms",
    public: true,
    summary: "A published form's definition",
    description:
      "Drafts, forms in the Trash and unknown ids are a 404. A closed form is answered too: posting to it is a 409. A form with a " +
      "password answers only with its pass (403 `passwordRequired`).",
    params: formParamsSchema,
    success: { status: 200, description: "The form's current version and document", schema: definitionSchema },
    errors: [403],
  },
  {
    method: "post",
    path: "/f/:formId/uploads",
    operationId: "uploadFile",
    tag: "Hosted forms",
    public: true,
    summary: "Upload one file for a FILE or SIGNATURE question",
    description: `One file in the multipart field \`file\`, at most ${maxUploadBytes / 1024 / 1024} MiB. The upload is kept when a response names its id.`,
    params: formParamsSchema,
    body: z.object({ file: z.file().describe("The file's bytes") }),
    bodyType: "multipart/form-data",
    idempotent: true,
    success: { status: 200, description: "The stored upload", schema: uploadSchema },
    errors: [403, 409],
  },
  {
    method: "post",
    path: "/f/:formId/responses",
    operationId: "submitResponse",
    tag: "Hosted forms",
    public: true,
    summary: "Save a response, partial or complete",
    description:
      "Answers are checked against the form version sent (the current one when absent). Problems are a 400 whose " +
      "`fields` name each answer's problem by its key (`hidden:<name>` for a hidden field); `error` says them all in one " +
      "line. A closed form or an already completed response is a 409. A form with `settings.requireSingleUseLink` takes a save " +
      "only with a usable single-use link's token as the query's `t` (`?t=TOKEN`, minted by `POST /api/v1/forms/:id/links`): " +
      "without one, or with one unknown, expired, revoked or already used for a completed response, it is a 403 saying which; " +
      "a completion uses the token up. A form with `settings.password` takes saves (and uploads, and its definition) only with " +
      "the pass cookie `POST /f/:formId/password` sets, one with `settings.requireEmailVerification` only with the cookie " +
      "`POST /f/:formId/email/confirm` sets (403 `passwordRequired`, `emailRequired`); one with `settings.captcha` takes a " +
      "completion only with the provider's widget token as `captcha`, which the server verifies with the provider (403 " +
      "`captchaMissing`, `captchaInvalid`; 503 `captchaUnavailable` when the provider cannot be asked). Each refusal's `code` says which rule.",
    params: formParamsSchema,
    body: hostedResponseBodySchema,
    success: { status: 200, description: "The saved response", schema: savedResponseSchema },
    errors: [403, 409],
    idempotent: true,
  },
  {
    method: "post",
    path: "/f/:formId/password",
    operationId: "enterFormPassword",
    tag: "Hosted forms",
    public: true,
    summary: "Give a form's password (settings.password)",
    description:
      "A right password sets `hf_pass`, an HttpOnly cookie on the form's path that opens its saves, uploads and definition for two " +
      "hours (or until the owner changes the password); a wrong one is a 403 `passwordWrong`. Ten tries a minute per address and form: " +
      "more are a 429. Also takes the hosted page's plain form post (urlencoded), answered with pages. A form without a password is a 404.",
    params: formParamsSchema,
    body: z.object({ password: z.string().max(200) }).meta({ id: "FormPasswordBody" }),
    success: { status: 200, description: "The pass cookie is set", schema: z.object({ passed: z.literal(true) }).meta({ id: "FormPasswordPassed" }) },
    errors: [403, 404],
  },
  {
    method: "post",
    path: "/f/:formId/email",
    operationId: "startEmailVerification",
    tag: "Hosted forms",
    public: true,
    summary: "Mail a code to confirm the respondent's address (settings.requireEmailVerification)",
    description:
      "Mails a 6-digit code, good for 10 minutes and 5 tries, to the address; answers the verification's id, which " +
      "`POST /f/:formId/email/confirm` takes with the code. An address that already completed a response of the form is a 403 " +
      "`emailUsed`; an address that is none, a 400; too many codes for one address, a 429. A form without the setting is a 404.",
    params: formParamsSchema,
    body: z.object({ email: z.string().max(254) }).meta({ id: "EmailVerificationBody" }),
    success: {
      status: 200,
      description: "The code is mailed",
      schema: z.object({ verificationId: z.string().describe("A secret: send it back with the code") }).meta({ id: "EmailVerificationStarted" }),
    },
    errors: [403, 404],
  },
  {
    method: "post",
    path: "/f/:formId/email/confirm",
    operationId: "confirmEmailVerification",
    tag: "Hosted forms",
    public: true,
    summary: "Confirm the respondent's address by the mailed code",
    description:
      "The right code sets `hf_email`, an HttpOnly cookie on the form's path that its saves need (for a day, and for one completed " +
      "response): the address is stored with the response (`verifiedEmail` on the submission and the webhook payload). A wrong code is a " +
      "403 `emailCodeWrong`; an expired one `emailCodeExpired`; after 5 wrong tries `emailCodeAttempts` (ask for a new code).",
    params: formParamsSchema,
    body: z.object({ verificationId: z.string().max(100), code: z.string().max(20) }).meta({ id: "EmailVerificationConfirmBody" }),
    success: { status: 200, description: "The address is confirmed", schema: z.object({ email: z.string() }).meta({ id: "EmailVerificationConfirmed" }) },
    errors: [403],
  },
  {
    method: "get",
    path: "/f/:formId/captcha",
    operationId: "getCaptchaChallenge",
    tag: "Hosted forms",
    public: true,
    summary: "A proof-of-work challenge for a form with settings.proofOfWork",
    description:
      "An ALTCHA (v2, PBKDF2/SHA-256) challenge signed by the server and bound to the form, valid 10 minutes; the altcha widget " +
      "(served at `/f/assets/altcha.js`) solves it. Send its base64 payload as `captcha` with the completion: a completion without a " +
      "valid one, or with one already used, is a 403. A form without the setting is a 404.",
    params: formParamsSchema,
    success: {
      status: 200,
      description: "The challenge, as the widget takes it",
      schema: z
        .object({
          parameters: z.object({ algorithm: z.string(), nonce: z.string(), salt: z.string(), cost: z.number(), keyLength: z.number(), keyPrefix: z.string() }).loose(),
          signature: z.string(),
        })
        .meta({ id: "CaptchaChallenge" }),
    },
    errors: [],
  },
];
