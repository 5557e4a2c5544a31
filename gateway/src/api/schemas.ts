// Response shapes of the REST API. They document what `@formsvc/api-records` produces and back
// the OpenAPI reference; the end-to-end tests parse real answers with them.
import { z } from "zod";
import { maxPageSize } from "@formsvc/platform/paging.ts";

const timestamp = z.iso.datetime().describe("ISO 8601 UTC timestamp");
const id = z.string().describe("Random, URL-safe identifier");

export const errorSchema = z
  .object({ error: z.string().describe("What went wrong, in words") })
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
  .meta({ id: "Workspace" });

export const formSchema = z
  .object({
    id,
    workspaceId: id,
    name: z.string(),
    status: z.enum(["draft", "published", "closed"]),
    document: z.record(z.string(), z.unknown()).describe("The form document, version 1: see FormDocument"),
    settings: z.record(z.string(), z.unknown()).describe("See FormSettings"),
    version: z.number().int().describe("Current version; each document change of a published form adds one"),
    responseCount: z.number().int().describe("Completed responses"),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "Form" });

export const questionSchema = z
  .object({
    id: z.string(),
    type: z.string().describe("Question type, or HIDDEN_FIELDS, RESPONDENT_COUNTRY, CALCULATED_FIELD"),
    label: z.string().describe("Column head: the field name where one is set, otherwise the question"),
    key: z.string().describe("Where the answer is filed in a submission; never changes"),
  })
  .meta({ id: "Question" });

export function envelopeOf<T extends z.ZodType>(item: T, name: string) {
  return z
    .object({
      items: z.array(item),
      page: z.number().int().min(1),
      limit: z.number().int().min(1).max(maxPageSize),
      hasMore: z.boolean().describe("True while further pages exist"),
    })
    .meta({ id: name });
}

export const pagingQuerySchema = z.object({
  page: z.coerce.number().int().min(1).default(1).describe("Page number, from 1"),
  limit: z.coerce.number().int().min(1).max(maxPageSize).default(50).describe(`Page size, 1 to ${maxPageSize}`),
});

export const idParamsSchema = z.object({ id: z.string().min(1).describe("Identifier") });

/** The JSON POSTed to webhooks for each completed response (eventType FORM_RESPONSE). */
export const webhookPayloadSchema = z
  .object({
    eventId: z.string().describe("Stable across retries of one delivery: use it for idempotency"),
    eventType: z.literal("FORM_RESPONSE"),
    createdAt: timestamp,
    data: z.object({
      responseId: z.string(),
      formId: z.string(),
      formName: z.string(),
      submittedAt: timestamp,
      fields: z.array(
        z.object({
          questionId: z.string(),
          type: z.string().describe("The question type as /questions reports it"),
          label: z.string().describe("The question text"),
          value: z.unknown().describe("The answer"),
        }),
      ),
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
          fields: [{ questionId: "b1", type: "SHORT_TEXT", label: "Your full name", value: "Ada Lovelace" }],
        },
      },
    ],
  });

export const submissionSchema = z
  .object({
    id,
    formId: id,
    version: z.number().int().describe("The form version the respondent saw"),
    completed: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
    submittedAt: timestamp.nullable().describe("When it was completed; null while partial"),
    answers: z.record(
      z.string().describe("The question's key"),
      z.object({
        questionId: z.string(),
        type: z.string(),
        label: z.string().describe("The label in the version the respondent saw"),
        value: z.unknown(),
        files: z
          .array(z.object({ name: z.string(), url: z.string().describe("Signed link, valid for seven days") }))
          .optional()
          .describe("FILE and SIGNATURE answers only"),
      }),
    ),
  })
  .meta({ id: "Submission" });

export const webhookSchema = z
  .object({
    id,
    formId: id,
    url: z.string().describe("http(s) URL that receives the POSTs"),
    secret: z.string().nullable().describe("Signs each request's body (X-Service-Signature); null when none"),
    headers: z.record(z.string(), z.string()).describe("Sent with every request"),
    enabled: z.boolean(),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "Webhook" });

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
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: "DeliveryReceipt" });

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
  .meta({ id: "DeliveryAttempt" });
