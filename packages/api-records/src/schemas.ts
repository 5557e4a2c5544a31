// The JSON shape of every record the gateway answers, once: the REST API's (which back the OpenAPI
// reference; the end-to-end tests parse real answers with them) and the app's, which add fields for the
// signed-in person. The mappers in index.ts return these types, and the app takes its types from here
// with type-only imports.
import { refusals, type RefusalCode } from "@formsvc/form-document/response-rules";
import { webhookFormats } from "@formsvc/platform/webhook-headers.ts";
import { z } from "zod";
import { defaultSettings, formDocumentSchema, formSettingsSchema, inputBlockTypes, typesAnswering } from "@formsvc/form-document";
import { eventTypeNames, eventTypes, formResponseEventType } from "@formsvc/platform/events.ts";

const timestamp = z.iso.datetime().describe("ISO 8601 UTC timestamp");
const id = z.string().describe("Random, URL-safe identifier");

export const errorSchema = z
  .object({
    error: z.string().describe("What went wrong, in words"),
    code: z
      .enum(Object.keys(refusals) as [RefusalCode, ...RefusalCode[]])
      .optional()
      .describe(
        "Why a hosted form refused a respondent (a 403 of its response rules; a 503 captchaUnavailable): a single-use link (linkMissing, linkUnknown, linkUsed, linkExpired, linkRevoked), the password (passwordRequired, passwordWrong), email verification (emailRequired, emailCodeWrong, emailCodeExpired, emailCodeAttempts, emailUsed) or the captcha (captchaMissing, captchaInvalid, captchaExpired, captchaReplayed, captchaUnavailable). Stable: show your own words for it",
      ),
    fields: z
      .array(
        z.object({
          key: z.string().describe("The answer's key (the question's key, `hidden:<name>` for a hidden field), or the field's path in the body"),
          message: z.string().describe("What is wrong with it"),
        }),
      )
      .optional()
      .describe("What is wrong, each by where it is: a respondent's answers by key (hosted form responses), a form document's logic rules by path (`document.logic[2].then[0]`), a form's theme colours and thank-you link by path (`settings.theme.accentColor`)"),
  })
  .meta({ id: "Error", examples: [{ error: "form not found" }] });

export const userSchema = z
  .object({ id, email: z.string(), name: z.string(), createdAt: timestamp })
  .meta({ id: "User", examples: [{ id: "Yc1uQ8bN3vKp0sTa", email: "ada@example.com", name: "Ada", createdAt: "2026-11-22T10:00:00.000Z" }] });

export const workspaceSchema = z
  .object({
    id,
    name: z.string(),
    plan: z.enum(["free", "pro"]),
    personal: z.boolean().describe("The workspace made for its owner at sign-up"),
    entitlements: z.object({ removeBranding: z.boolean().describe("Forms may set settings.branding to false") }),
    createdAt: timestamp,
  })
  .meta({
    id: "Workspace",
    examples: [
      {
        id: "Wk8Qm3Rz1TbX9aLc",
        name: "Ada's workspace",
        plan: "free",
        personal: true,
        entitlements: { removeBranding: false },
        createdAt: "2026-11-22T10:00:00.000Z",
      },
    ],
  });

/** The settings as a form answers them: every property present. */
const formSettings = formSettingsSchema.meta({ id: "FormSettings" });

export const formSchema = z
  .object({
    id,
    workspaceId: id,
    name: z.string(),
    status: z.enum(["draft", "published", "closed"]),
    document: formDocumentSchema,
    settings: formSettings,
    version: z.number().int().min(0).describe("Current version; each document change of a published form adds one"),
    responseCount: z.number().int().min(0).describe("Completed responses"),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({
    id: "Form",
    examples: [
      {
        id: "F1a2B3c4D5e6F7g8",
        workspaceId: "Wk8Qm3Rz1TbX9aLc",
        name: "Event sign-up",
        status: "published",
        document: {
          title: "Event sign-up",
          blocks: [
            { id: "b1", key: "q_name", type: "SHORT_TEXT", question: "Your full name", required: true },
            { id: "b2", key: "q_email", type: "EMAIL", question: "Email address", fieldName: "email" },
          ],
        },
        settings: defaultSettings,
        version: 2,
        responseCount: 14,
        createdAt: "2026-11-20T09:30:00.000Z",
        updatedAt: "2026-11-22T10:00:00.000Z",
      },
    ],
  });

/** Columns beyond the document's questions: one per hidden field, the respondent's country, one per calculated field. */
const extraQuestionTypes = ["HIDDEN_FIELDS", "RESPONDENT_COUNTRY", "CALCULATED_FIELD"] as const;

export const questionTypeSchema = z
  .enum([...inputBlockTypes, ...extraQuestionTypes])
  .meta({ id: "QuestionType", description: "An input block's type, or one of the extra columns HIDDEN_FIELDS, RESPONDENT_COUNTRY, CALCULATED_FIELD" });

export const questionSchema = z
  .object({
    id: z.string(),
    type: questionTypeSchema,
    label: z.string().describe("Column head: the field name where one is set, otherwise the question"),
    key: z.string().describe("Where the answer is filed in a submission; never changes"),
  })
  .meta({ id: "Question", examples: [{ id: "b1", type: "SHORT_TEXT", label: "Your full name", key: "q_name" }] });

/** An answer's value, whatever the question: what a webhook field carries (null when unanswered). */
export const answerValueSchema = z
  .xor([z.string(), z.number(), z.boolean(), z.array(z.string()), z.record(z.string(), z.union([z.string(), z.array(z.string())])), z.null()])
  .meta({
    id: "AnswerValue",
    description:
      "A string (text, email, phone, URL, DATE as YYYY-MM-DD, TIME as HH:MM, the chosen option's id for MULTIPLE_CHOICE and " +
      "DROPDOWN, hidden fields, the country), a number (NUMBER, RATING, LINEAR_SCALE, NPS), true (CONSENT), an array of strings (option ids for CHECKBOXES and " +
      "MULTI_SELECT, every option id in order for RANKING, upload ids for FILE and SIGNATURE), an object of row ids to " +
      "column ids (or arrays of them) for MATRIX, a number or string for CALCULATED_FIELD, or null when unanswered",
  });
/** The language a respondent answered in, on submissions and response events alike. */
const respondentLanguageSchema = z
  .string()
  .nullable()
  .describe(
    "The language the respondent answered in (BCP 47: the form's settings.language or one of its settings.languages); labels and option texts stay in the form's own language. null for responses stored before languages were recorded",
  );
/** The address a respondent confirmed (settings.requireEmailVerification): an extension, present only on such responses. */
const verifiedEmailSchema = z
  .string()
  .optional()
  .describe(
    "Extension: the email address the respondent confirmed by a mailed code before answering, present only on responses to a form with settings.requireEmailVerification",
  );
const eventIdSchema = z.string().describe("Stable across retries of one delivery: use it for idempotency");
const testFlagSchema = z.literal(true).optional().describe("Present on a test event (the test endpoint, the app); a response's answers are made up");
const payloadFieldsSchema = z.array(
        z.object({
          questionId: z.string(),
          type: questionTypeSchema,
          label: z.string().describe("The question text"),
          value: answerValueSchema,
          options: z
            .array(z.object({ id: z.string(), text: z.string() }))
            .optional()
            .describe("Choice questions only: every option, so an answer's ids can be read without another call"),
          rows: z
            .array(z.object({ id: z.string(), text: z.string() }))
            .optional()
            .describe("MATRIX only: every row (the value's keys)"),
          columns: z
            .array(z.object({ id: z.string(), text: z.string() }))
            .optional()
            .describe("MATRIX only: every column (the value's column ids)"),
          files: z
            .array(
              z.object({
                id: z.string(),
                name: z.string(),
                url: z.string().describe("Signed /files link, valid seven days from submittedAt"),
                mimeType: z.string(),
                size: z.number().int().min(0).describe("Bytes"),
              }),
            )
            .optional()
            .describe("FILE and SIGNATURE questions only, in the order of `value`"),
        }),
      );

/** The JSON POSTed to webhooks for each completed response (eventType FORM_RESPONSE). */
export const webhookPayloadSchema = z
  .object({
    eventId: eventIdSchema,
    eventType: z.literal(formResponseEventType),
    createdAt: timestamp,
    test: testFlagSchema,
    data: z.object({
      responseId: z.string(),
      formId: z.string(),
      formName: z.string(),
      submittedAt: timestamp,
      fields: payloadFieldsSchema,
      hiddenFields: z.record(z.string(), answerValueSchema).describe("Hidden field name → value"),
      calculatedFields: z.record(z.string(), answerValueSchema).describe("Calculated field name → value; null where the expression failed"),
      respondentCountry: z.string().nullable().describe("ISO 3166-1 alpha-2, or null when unknown"),
      language: respondentLanguageSchema,
      verifiedEmail: verifiedEmailSchema,
    }),
  })
  .meta({
    id: "WebhookPayload",
    examples: [
      {
        eventId: "evt_3x9Qm2Lr8TzKcV1a",
        eventType: "FORM_RESPONSE",
        createdAt: "2026-11-22T10:00:01.000Z",
        data: {
          responseId: "R8kq2Vn0cXs7LmPa",
          formId: "F1a2B3c4D5e6F7g8",
          formName: "Event sign-up",
          submittedAt: "2026-11-22T10:00:00.000Z",
          fields: [
            { questionId: "b1", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" },
            { questionId: "b2", type: "MULTIPLE_CHOICE", label: "Plan", value: "o1", options: [{ id: "o1", text: "Free" }, { id: "o2", text: "Pro" }] },
          ],
          hiddenFields: { utm_source: "newsletter" },
          calculatedFields: {},
          respondentCountry: "GB",
          language: "en",
        },
      },
    ],
  });

/** FORM_RESPONSE_PARTIAL: a respondent saved a partial response on reaching another page. */
export const partialWebhookPayloadSchema = z
  .object({
    eventId: eventIdSchema,
    eventType: z.literal(eventTypeNames.formResponsePartial),
    createdAt: timestamp.describe("When it was saved"),
    test: testFlagSchema,
    data: z.object({
      responseId: z.string().describe("The same id the completion's FORM_RESPONSE will carry"),
      formId: z.string(),
      formName: z.string(),
      savedAt: timestamp,
      page: z.number().int().min(1).describe("The page reached, from 1: one more than the page breaks before the furthest answered question"),
      fields: payloadFieldsSchema.describe("The answers so far (unanswered: null); calculated fields come with the completion"),
      hiddenFields: z.record(z.string(), answerValueSchema).describe("Hidden field name → value"),
      respondentCountry: z.string().nullable().describe("ISO 3166-1 alpha-2, or null when unknown"),
      language: respondentLanguageSchema,
      verifiedEmail: verifiedEmailSchema,
    }),
  })
  .meta({
    id: "PartialResponseWebhookPayload",
    examples: [
      {
        eventId: "evt_8Lq2Wc9Ns1Dx4Vb7",
        eventType: "FORM_RESPONSE_PARTIAL",
        createdAt: "2026-11-22T09:58:00.000Z",
        data: {
          responseId: "R8kq2Vn0cXs7LmPa",
          formId: "F1a2B3c4D5e6F7g8",
          formName: "Event sign-up",
          savedAt: "2026-11-22T09:58:00.000Z",
          page: 2,
          fields: [{ questionId: "b1", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" }],
          hiddenFields: {},
          respondentCountry: "GB",
          language: "en",
        },
      },
    ],
  });

/** FORM_PUBLISHED, FORM_CLOSED, FORM_DELETED: a form changed status or went to the Trash. */
export const formWebhookPayloadSchema = z
  .object({
    eventId: eventIdSchema,
    eventType: z.enum([eventTypeNames.formPublished, eventTypeNames.formClosed, eventTypeNames.formDeleted]),
    createdAt: timestamp.describe("When the form changed"),
    test: testFlagSchema,
    data: z.object({
      formId: z.string(),
      workspaceId: z.string(),
      formName: z.string(),
      status: z.enum(["draft", "published", "closed"]).describe("After the change; for FORM_DELETED the status it had when moved to the Trash"),
      version: z.number().int().describe("The form's current version"),
      changedAt: timestamp,
    }),
  })
  .meta({
    id: "FormWebhookPayload",
    examples: [
      {
        eventId: "evt_2Pd7Kx1Mq9Zr4Tn6",
        eventType: "FORM_CLOSED",
        createdAt: "2026-11-23T18:00:00.000Z",
        data: { formId: "F1a2B3c4D5e6F7g8", workspaceId: "Wk8Qm3Rz1TbX9aLc", formName: "Event sign-up", status: "closed", version: 3, changedAt: "2026-11-23T18:00:00.000Z" },
      },
    ],
  });

/** One answer of a submission, its value shaped by the question type (discriminated by `type`). */
const answerOf = <T extends readonly string[], V extends z.ZodType>(types: T, value: V) =>
  z.object({
    questionId: z.string(),
    type: z.enum(types),
    label: z.string().describe("The label in the version the respondent saw"),
    value,
  });
const fileLinkSchema = z.object({ name: z.string(), url: z.string().describe("Signed link, valid for seven days") });
export const answerSchema = z
  .discriminatedUnion("type", [
    answerOf(
      [...typesAnswering("text", "option"), "HIDDEN_FIELDS", "RESPONDENT_COUNTRY"],
      z.string().nullable().describe("The text; YYYY-MM-DD for DATE; HH:MM (24 hours) for TIME; the chosen option's id for MULTIPLE_CHOICE and DROPDOWN; null: skipped by the form's logic"),
    ),
    answerOf(typesAnswering("number", "steps"), z.number().nullable().describe("The number; the chosen step for RATING, LINEAR_SCALE and NPS; null: skipped by the form's logic")),
    answerOf(typesAnswering("consent"), z.literal(true).nullable().describe("true: agreed (an unticked box is no answer); null: skipped by the form's logic")),
    answerOf(typesAnswering("options"), z.array(z.string()).nullable().describe("The chosen options' ids; null: skipped by the form's logic")),
    answerOf(
      typesAnswering("grid"),
      z
        .record(z.string(), z.union([z.string(), z.array(z.string())]))
        .nullable()
        .describe("Row id → column id (→ column ids for a matrix with `multiple`), answered rows only; null: skipped by the form's logic"),
    ),
    answerOf(typesAnswering("ranking"), z.array(z.string()).nullable().describe("Every option's id once, first place first; null: skipped by the form's logic")),
    answerOf(typesAnswering("uploads"), z.array(z.string()).nullable().describe("Upload ids; null: skipped by the form's logic")).extend({
      files: z.array(fileLinkSchema).describe("The files, in the order of `value`"),
    }),
    answerOf(["CALCULATED_FIELD"], z.xor([z.number(), z.string(), z.null()]).describe("The expression's result")),
  ])
  .meta({ id: "Answer" });

export const submissionSchema = z
  .object({
    id,
    formId: id,
    version: z.number().int().describe("The form version the respondent saw"),
    completed: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
    submittedAt: timestamp.nullable().describe("When it was completed; null while partial"),
    language: respondentLanguageSchema,
    verifiedEmail: verifiedEmailSchema,
    answers: z.record(z.string().describe("The question's key"), answerSchema),
  })
  .meta({
    id: "Submission",
    examples: [
      {
        id: "R8kq2Vn0cXs7LmPa",
        formId: "F1a2B3c4D5e6F7g8",
        version: 2,
        completed: true,
        createdAt: "2026-11-22T10:00:00.000Z",
        updatedAt: "2026-11-22T10:00:00.000Z",
        submittedAt: "2026-11-22T10:00:00.000Z",
        language: "en",
        answers: {
          q_name: { questionId: "b1", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" },
          q_rating: { questionId: "b3", type: "RATING", label: "How did we do?", value: 5 },
          q_cv: {
            questionId: "b4",
            type: "FILE",
            label: "Upload your CV",
            value: ["Up4Jx7Lq2Wc9Ns1D"],
            files: [{ name: "cv.pdf", url: "https://forms.example.com/files/Up4Jx7Lq2Wc9Ns1D?expires=1795000000&signature=3q2-7w" }],
          },
          "meta:country": { questionId: "meta:country", type: "RESPONDENT_COUNTRY", label: "Respondent country", value: "GB" },
        },
      },
    ],
  });

export const webhookSchema = z
  .object({
    id,
    formId: id,
    url: z.string().describe("http(s) URL that receives the POSTs"),
    secret: z.string().nullable().describe("Signs each request's body (X-Service-Signature); null when none"),
    headers: z.record(z.string(), z.string()).describe("Sent with every request"),
    eventTypes: z.array(z.enum(eventTypes as [string, ...string[]])).describe("The events it receives"),
    subscriber: z
      .string()
      .nullable()
      .describe("Extension: the automation tool that subscribed it (`n8n`, `zapier`, ...); null for a webhook made by hand"),
    format: z
      .enum(webhookFormats)
      .describe("Extension: `standard` (the JSON event), or `slack` / `discord`: a chat message made from it, for their incoming-webhook URLs"),
    enabled: z.boolean(),
    disabledReason: z
      .string()
      .nullable()
      .describe(
        "Why the webhook is disabled: `disabled by its owner`, `the receiver answered 410 Gone`, or `every delivery attempt failed for 5 days`; null while enabled. PATCH `enabled: true` enables it again",
      ),
    disabledAt: timestamp.nullable().describe("When it was disabled; null while enabled"),
    previousSecretExpiresAt: timestamp
      .nullable()
      .describe("After a secret rotation: until when the previous secret still signs every delivery beside the new one; null otherwise"),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({
    id: "Webhook",
    examples: [
      {
        id: "Wh5Tz8Kq1Lm3Np7R",
        formId: "F1a2B3c4D5e6F7g8",
        url: "https://hooks.example.com/forms",
        secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        headers: { "X-Tenant": "acme" },
        eventTypes: ["FORM_RESPONSE"],
        subscriber: null,
        format: "standard",
        enabled: true,
        disabledReason: null,
        disabledAt: null,
        previousSecretExpiresAt: null,
        createdAt: "2026-11-20T09:35:00.000Z",
        updatedAt: "2026-11-20T09:35:00.000Z",
      },
    ],
  });

export const deliverySchema = z
  .object({
    id,
    webhookId: id,
    eventId: z.string().describe("The same on every attempt of this delivery"),
    status: z.enum(["pending", "retrying", "succeeded", "failed"]),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    lastStatusCode: z.number().int().nullable(),
    nextAttemptAt: timestamp.nullable().describe("When the next automatic attempt is due"),
    submissionId: z.string(),
    eventType: z.string(),
    trigger: z.enum(["event", "test"]).describe("`event`: an event of the form; `test`: sent with the test endpoint (never retried automatically)"),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({
    id: "DeliveryReceipt",
    examples: [
      {
        id: "Dl2Xc5Vb8Nm1Qw4E",
        webhookId: "Wh5Tz8Kq1Lm3Np7R",
        eventId: "evt_3x9Qm2Lr8TzKcV1a",
        status: "retrying",
        attempts: 1,
        lastError: "receiver answered 503",
        lastStatusCode: 503,
        nextAttemptAt: "2026-11-22T10:00:06.000Z",
        submissionId: "R8kq2Vn0cXs7LmPa",
        eventType: "FORM_RESPONSE",
        trigger: "event",
        createdAt: "2026-11-22T10:00:01.000Z",
        updatedAt: "2026-11-22T10:00:01.000Z",
      },
    ],
  });

export const attemptSchema = z
  .object({
    id,
    number: z.number().int(),
    statusCode: z.number().int().nullable().describe("null when no HTTP answer came"),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    responseBody: z.string().describe("At most 4 KiB of the receiver's answer"),
    manual: z.boolean().describe("Sent by hand with the retry endpoint"),
    createdAt: timestamp,
  })
  .meta({
    id: "DeliveryAttempt",
    examples: [
      {
        id: "At9Rt6Yu3Io0Pa2S",
        number: 1,
        statusCode: 503,
        durationMs: 42,
        error: "receiver answered 503",
        responseBody: "Service Unavailable",
        manual: false,
        createdAt: "2026-11-22T10:00:01.000Z",
      },
    ],
  });

// --- what /app/api answers beyond the API: the signed-in person's view --------------------------------

/** Every action the audit log records (the gateway's route→action table and sign-ins name them; the app labels them). */
export const auditActionNames = [
  "form.create",
  "form.update",
  "form.publish",
  "form.close",
  "form.reopen",
  "form.duplicate",
  "form.trash",
  "form.restore",
  "form.purge",
  "responses.export",
  "submission.delete",
  "link.create",
  "link.revoke",
  "webhook.create",
  "webhook.update",
  "webhook.delete",
  "webhook.rotate_secret",
  "webhook.test",
  "webhook.recover",
  "delivery.retry",
  "api_key.create",
  "api_key.delete",
  "workspace.create",
  "workspace.rename",
  "workspace.set_plan",
  "workspace.set_auto_join_domains",
  "workspace.require_two_factor",
  "member.invite",
  "member.revoke_invitation",
  "member.accept",
  "member.role_change",
  "member.remove",
  "session.sign_in",
  "session.sign_in_failed",
  "two_factor.enable",
  "two_factor.disable",
  "two_factor.recovery_codes",
] as const;
export type AuditActionName = (typeof auditActionNames)[number];

export const auditEventSchema = z
  .object({
    id,
    occurredAt: timestamp,
    workspaceId: z.string().nullable(),
    actor: z
      .object({
        type: z.enum(["user", "api_key", "system", "anonymous"]).describe("`user`: in the app; `api_key`: through the API; `system`: the operator or the service itself; `anonymous`: a failed sign-in"),
        userId: z.string().nullable().describe("The person (for an API key, its owner)"),
        apiKeyId: z.string().nullable().describe("The API key the request carried"),
      })
      .describe("Who did it"),
    address: z.string().nullable().describe("The client's address (behind a proxy TRUST_PROXY trusts, the one it forwarded)"),
    action: z.enum(auditActionNames).describe("What was done, `<record>.<verb>`"),
    target: z.object({ type: z.string().describe("form, webhook, api_key, invitation, member, workspace, submission, delivery, user"), id: z.string().nullable() }),
    changes: z
      .array(z.object({ field: z.string(), value: z.string().optional().describe("Only for harmless fields (names, statuses, roles, plans, a URL's host); never a secret, password, token, key or answer") }))
      .describe("The fields the request set"),
    requestId: z.string().nullable().describe("The request's X-Request-Id"),
  })
  .meta({
    id: "AuditEvent",
    examples: [
      {
        id: "Ev3kQ9mZ2bXc7LpA",
        occurredAt: "2026-11-28T09:30:00.000Z",
        workspaceId: "Wk8Qm3Rz1TbX9aLc",
        actor: { type: "api_key", userId: "Yc1uQ8bN3vKp0sTa", apiKeyId: "Kq2wE4rT6yU8iO0p" },
        address: "203.0.113.7",
        action: "form.update",
        target: { type: "form", id: "Fm5nB7vC9xZ1aS3d" },
        changes: [{ field: "name", value: "Event sign-up" }, { field: "document" }],
        requestId: "6f1c2b1e-7d0a-4a55-9d1e-0c2f5a8b9e21",
      },
    ],
  });

/** A form as the app shows it: with when it went to the Trash. */
export const appFormSchema = formSchema.extend({ trashedAt: timestamp.nullable() });

/** Owner (one, who made it; changes the plan), admin (manages members, deletes forms), member. */
export const roleSchema = z.enum(["owner", "admin", "member"]);

/** A workspace as the app shows it: with its owner and the signed-in person's role in it. */
export const appWorkspaceSchema = workspaceSchema.extend({
  ownerId: z.string(),
  owned: z.boolean(),
  role: roleSchema.nullable(),
  requireTwoFactor: z.boolean().describe("Members must sign in with a second factor"),
});

export const memberSchema = z.object({ user: userSchema, role: roleSchema.nullable(), joinedAt: timestamp.nullable() });

/** The signed-in person as /session and e-mail verification tell the app. */
export const sessionUserSchema = userSchema.extend({
  emailVerified: z.boolean(),
  administrator: z.boolean().describe("Administers the installation (the first account made): sees every user and workspace, sets plans"),
  twoFactorEnabled: z.boolean().describe("Signs in with a second factor (an authenticator app's codes)"),
  locale: z.string().nullable().describe("The language the person chose for the app (a BCP 47 tag); null: the browser's"),
});

/** What a mailed invitation invites to, before it is accepted. */
export const invitationSchema = z.object({
  email: z.string(),
  workspaceName: z.string(),
  inviterName: z.string(),
  role: roleSchema.nullable(),
  accountExists: z.boolean(),
});

/** An invitation waiting for its person: what the workspace's managers list and revoke, and the invitee accepts. */
export const pendingInvitationSchema = invitationSchema.omit({ accountExists: true }).extend({ id, workspaceId: z.string(), createdAt: timestamp, expiresAt: timestamp });

export const apiKeySchema = z.object({ id, name: z.string(), prefix: z.string(), createdAt: timestamp, lastUsedAt: timestamp.nullable() });

/** An answer as the app shows it: with its value as one line of text, option ids turned into their text. */
export const appAnswerSchema = z.intersection(answerSchema, z.object({ display: z.string() }));

export const appSubmissionSchema = submissionSchema.extend({ answers: z.record(z.string(), appAnswerSchema) });

/** What a form's responses hold. */
export const formStorageSchema = z.object({ files: z.number().int(), bytes: z.number().int(), quotaBytes: z.number().int() });

/** What deleting a form in the Trash for good deletes (or deleted): its responses, partial ones and files. */
export const formHoldingsSchema = z.object({
  responses: z.number().int(),
  partials: z.number().int(),
  files: z.number().int(),
  bytes: z.number().int(),
});

/** A calculated field that stored null on some responses, and why. */
export const calculatedFieldProblemSchema = z.object({
  field: z.string(),
  reason: z.enum(["deadline", "queued", "busy", "unavailable"]),
  count: z.number().int(),
  lastAt: timestamp.nullable(),
});

/** How many answers (or responses) have one value: an option id, a step or a day (YYYY-MM-DD). */
export const valueCountSchema = z.object({
  value: z.string(),
  /** The option's text in the current version, when the value is one of its option ids; else empty. */
  label: z.string(),
  count: z.number().int(),
});

/** A question of the current version summed up over the matching responses, by its answer shape. */
export const questionSummarySchema = z.object({
  key: z.string(),
  type: z.string(),
  label: z.string(),
  shape: z.string(),
  answered: z.number().int(),
  /** Choices and ratings: per option or step; dates: per day. */
  counts: z.array(valueCountSchema),
  /** Numbers; null without any. */
  min: z.number().nullable(),
  median: z.number().nullable(),
  max: z.number().nullable(),
  mean: z.number().nullable(),
  /** Text: the latest answers, newest first. */
  latest: z.array(z.string()),
  /** Uploads: files attached. */
  files: z.number().int(),
  /** NPS: the Net Promoter Score (% of 9–10 minus % of 0–6, from the counts); null without answers. */
  score: z.number().nullable(),
  /** Rankings: every option by its mean place (1: first), best first; null for an option nobody ranked. */
  ranks: z.array(z.object({ value: z.string(), label: z.string(), meanRank: z.number().nullable() })),
  /** Matrices: per row, the counts of its columns. */
  rows: z.array(z.object({ value: z.string(), label: z.string(), counts: z.array(valueCountSchema) })),
});

/** A form's completed responses summed up (the app's Summary tab). */
export const responseSummarySchema = z.object({
  responses: z.number().int(),
  submittedByDay: z.array(valueCountSchema),
  questions: z.array(questionSummarySchema),
});

const count = (what: string) => z.number().int().min(0).describe(what);
/** A form's funnel over a date range (GET /forms/:id/insights): counted as respondents come, never from responses. */
export const formInsightsSchema = z
  .object({
    views: count("Loads of the published form page by a browser (robots and prefetches left out)"),
    visitors: count("Distinct visitors of each day (a hash with that day's secret salt; no cookie, no address kept), added up over the days"),
    starts: count("Respondents who gave a first answer"),
    completions: count("Responses completed on the hosted page"),
    completionRate: z.number().nullable().describe("completions / starts, from 0 to 1; null without a start"),
    medianSecondsToComplete: z.number().nullable().describe("From the page's load to completion, over the completions the page's script timed; null without any"),
    questions: z
      .array(
        z.object({
          key: z.string(),
          label: z.string().describe("The field name where one is set, otherwise the question"),
          shown: count("Times a respondent who started was shown it (a question the form's rules skipped is not shown)"),
          answered: count("Times it was answered"),
          dropOffs: count("Respondents who left without completing while it was where they stopped (the first shown question not answered, else the last shown)"),
        }),
      )
      .describe("Each question of the current version, in its order"),
    days: z
      .array(z.object({ date: z.string().describe("YYYY-MM-DD, UTC"), views: count("Views that day"), starts: count("Starts that day"), completions: count("Completions that day") }))
      .describe("Days with any count, oldest first"),
  })
  .meta({
    id: "FormInsights",
    examples: [
      {
        views: 120,
        visitors: 95,
        starts: 60,
        completions: 45,
        completionRate: 0.75,
        medianSecondsToComplete: 84,
        questions: [{ key: "q_name", label: "Your full name", shown: 60, answered: 58, dropOffs: 2 }],
        days: [{ date: "2026-12-01", views: 120, starts: 60, completions: 45 }],
      },
    ],
  });

/** A list the app gets whole. */
export const itemsOf = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });

/** A page of a list the app pages through by number (the API's lists add a cursor). */
export const appPageOf = <T extends z.ZodType>(item: T) =>
  itemsOf(item).extend({ page: z.number().int(), limit: z.number().int(), hasMore: z.boolean() });

export type FieldProblem = NonNullable<z.output<typeof errorSchema>["fields"]>[number];
export type User = z.output<typeof userSchema>;
export type SessionUser = z.output<typeof sessionUserSchema>;
export type Workspace = z.output<typeof workspaceSchema>;
export type AppWorkspace = z.output<typeof appWorkspaceSchema>;
export type Role = z.output<typeof roleSchema>;
export type Member = z.output<typeof memberSchema>;
export type Invitation = z.output<typeof invitationSchema>;
export type PendingInvitation = z.output<typeof pendingInvitationSchema>;
/** SIGNUP as /app/api/session tells the app (the configuration's own shape). */
export type { SignUpPolicy } from "@formsvc/platform/config.ts";
export type Form = z.output<typeof formSchema>;
export type AppForm = z.output<typeof appFormSchema>;
export type FormStatus = Form["status"];
export type Question = z.output<typeof questionSchema>;
export type Answer = z.output<typeof answerSchema>;
export type AppAnswer = z.output<typeof appAnswerSchema>;
export type Submission = z.output<typeof submissionSchema>;
export type AppSubmission = z.output<typeof appSubmissionSchema>;
export type Webhook = z.output<typeof webhookSchema>;
export type Delivery = z.output<typeof deliverySchema>;
export type Attempt = z.output<typeof attemptSchema>;
export type AuditEvent = z.output<typeof auditEventSchema>;
export type ApiKey = z.output<typeof apiKeySchema>;
export type FormStorage = z.output<typeof formStorageSchema>;
export type FormHoldings = z.output<typeof formHoldingsSchema>;
export type CalculatedFieldProblem = z.output<typeof calculatedFieldProblemSchema>;
export type ResponseSummary = z.output<typeof responseSummarySchema>;
export type FormInsights = z.output<typeof formInsightsSchema>;
export type QuestionSummary = z.output<typeof questionSummarySchema>;
export type Items<T> = z.output<ReturnType<typeof itemsOf<z.ZodType<T>>>>;
export type AppPage<T> = z.output<ReturnType<typeof appPageOf<z.ZodType<T>>>>;
