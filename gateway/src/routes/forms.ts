import type { Client } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { appFormJson, formHoldingsJson, formJson, questionJson } from "@formsvc/api-records";
import { formHoldingsSchema, formSchema, questionSchema } from "@formsvc/api-records/schemas";
import { createFormBodySchema, updateFormBodySchema } from "@formsvc/form-document";
import { maxPageSize } from "@formsvc/platform/page-size.ts";
import { FormStatus, type FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { HttpError } from "../http-errors.ts";
import { appPage, cursorPagingQuerySchema, envelope, envelopeOf, items, pagingQuerySchema, wholeList } from "./paging.ts";
import { defineRoute, idParamsSchema, recordIdSchema } from "./route.ts";

const listFormsQuerySchema = cursorPagingQuerySchema.extend({
  workspaceId: recordIdSchema.optional().describe("Only forms of this workspace"),
});
/** The app's: the Trash on request, and every form at once unless it asks for fewer. */
const appListFormsQuerySchema = pagingQuerySchema.extend({
  workspaceId: recordIdSchema.optional(),
  trashed: z.enum(["true", "false"]).optional(),
  limit: pagingQuerySchema.shape.limit.unwrap().default(maxPageSize),
});

/** The form as the app shows it (with when it went to the Trash), for the routes both doors serve. */
const inTheApp = { answer: appFormJson };

export function formRoutes(forms: Client<typeof FormsService>) {
  return [
    defineRoute({
      method: "get",
      path: "/forms",
      query: appListFormsQuerySchema,
      success: { status: 200, description: "A page of forms", schema: envelopeOf(formSchema, "FormPage") },
      handle: ({ query, asUser }) =>
        forms.listForms(
          { workspaceId: query.workspaceId ?? "", trashed: query.trashed === "true", page: query.page, limit: query.limit, cursor: query.cursor },
          asUser,
        ),
      api: {
        operationId: "listForms",
        tag: "Forms",
        summary: "Forms of the caller's workspaces, newest first",
        description: "Forms in the Trash are not listed.",
        errors: [404],
        query: listFormsQuerySchema,
        answer: (page, { query }) => envelope(page.forms.map(formJson), query, page),
      },
      app: { answer: (page, { query }) => appPage(page.forms.map(appFormJson), query, page.hasMore) },
    }),
    defineRoute({
      method: "post",
      path: "/forms",
      body: createFormBodySchema,
      success: { status: 201, description: "The created draft form", schema: formSchema },
      handle: async ({ body, asUser }) =>
        (await forms.createForm({ workspaceId: body.workspaceId, name: body.name, document: body.document as JsonObject | undefined }, asUser)).form!,
      answer: formJson,
      api: {
        operationId: "createForm",
        tag: "Forms",
        summary: "Create a draft form in a workspace",
        description: "Publishing and closing happen only in the app.",
        errors: [404],
      },
      app: inTheApp,
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id",
      params: idParamsSchema,
      success: { status: 200, description: "The form", schema: formSchema },
      handle: async ({ params, asUser }) => (await forms.getForm({ id: params.id }, asUser)).form!,
      answer: formJson,
      api: {
        operationId: "getForm",
        tag: "Forms",
        summary: "One form, including its status",
        description: "The form with its whole document (blocks, hidden and calculated fields), settings, status and version. Forms in the Trash are a 404.",
        errors: [],
      },
      app: inTheApp,
    }),
    defineRoute({
      method: "patch",
      path: "/forms/:id",
      params: idParamsSchema,
      body: updateFormBodySchema,
      success: { status: 200, description: "The updated form", schema: formSchema },
      handle: async ({ params, body, asUser }) =>
        (
          await forms.updateForm(
            {
              id: params.id,
              name: body.name,
              document: body.document as JsonObject | undefined,
              settings: body.settings as JsonObject | undefined,
            },
            asUser,
          )
        ).form!,
      answer: formJson,
      api: {
        operationId: "updateForm",
        tag: "Forms",
        summary: "Change a form's name, document or settings",
        description:
          "`document` replaces the whole document: start from a fresh GET, or edits made in the app since are lost. " +
          "`settings` are merged. `branding: false` needs a plan with the branding entitlement (403 otherwise). " +
          "PATCH never publishes or closes a form.",
        errors: [403],
      },
      app: inTheApp,
    }),
    defineRoute({
      method: "delete",
      path: "/forms/:id",
      params: idParamsSchema,
      success: { status: 204, description: "Moved to the Trash" },
      handle: async ({ params, asUser }) => {
        await forms.trashForm({ id: params.id }, asUser);
      },
      api: {
        operationId: "trashForm",
        tag: "Forms",
        summary: "Move a form to the Trash",
        description: "The form answers 404 on the API until it is restored in the app.",
        errors: [],
      },
      app: { method: "post", path: "/forms/:id/trash" },
    }),
    defineRoute({
      method: "post",
      path: "/forms/:id/restore",
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser }) => appFormJson((await forms.restoreForm({ id: params.id }, asUser)).form!),
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/purge-preview",
      params: idParamsSchema,
      success: { status: 200, schema: formHoldingsSchema },
      handle: async ({ params, asUser }) => formHoldingsJson((await forms.previewPurgeForm({ id: params.id }, asUser)).holdings),
      app: {},
    }),
    defineRoute({
      // Deleting for good, from the Trash only (409 otherwise; 403 for members who are not owner or admin).
      method: "delete",
      path: "/forms/:id/purge",
      params: idParamsSchema,
      success: { status: 200, schema: formHoldingsSchema },
      handle: async ({ params, asUser }) => formHoldingsJson((await forms.purgeForm({ id: params.id }, asUser)).deleted),
      app: {},
    }),
    defineRoute({
      method: "post",
      path: "/forms/:id/duplicate",
      params: idParamsSchema,
      success: { status: 201 },
      handle: async ({ params, asUser }) => appFormJson((await forms.duplicateForm({ id: params.id }, asUser)).form!),
      app: {},
    }),
    ...statusActions(forms),
    defineRoute({
      method: "get",
      path: "/forms/:id/questions",
      params: idParamsSchema,
      success: { status: 200, description: "Every column, in one page", schema: envelopeOf(questionSchema, "QuestionList", "whole") },
      handle: async ({ params, asUser }) => (await forms.listQuestions({ formId: params.id }, asUser)).questions.map(questionJson),
      api: {
        operationId: "listQuestions",
        tag: "Forms",
        summary: "The columns of the form's Submissions table",
        description:
          "Every input block, then one HIDDEN_FIELDS entry per hidden field, RESPONDENT_COUNTRY, and one CALCULATED_FIELD per calculated field.",
        errors: [],
        answer: wholeList,
      },
      app: { answer: items },
    }),
  ];
}

/** The app's Publish, Close and Reopen: a form's status. */
function statusActions(forms: Client<typeof FormsService>) {
  const statuses = { publish: FormStatus.PUBLISHED, close: FormStatus.CLOSED, reopen: FormStatus.PUBLISHED };
  return Object.entries(statuses).map(([action, status]) =>
    defineRoute({
      method: "post",
      path: `/forms/:id/${action}`,
      params: idParamsSchema,
      success: { status: 200 },
      handle: async ({ params, asUser }) => {
        if (action === "reopen") {
          // Reopen is for closed forms only; publishing a draft is Publish.
          const { form } = await forms.getForm({ id: params.id }, asUser);
          if (form?.status !== FormStatus.CLOSED) throw new HttpError(409, "only a closed form can be reopened");
        }
        return appFormJson((await forms.setFormStatus({ id: params.id, status }, asUser)).form!);
      },
      app: {},
    }),
  );
}
