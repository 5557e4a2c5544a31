import type { Client } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { z } from "zod";
import { asCaller } from "@formsvc/platform/caller.ts";
import { formJson, questionJson } from "@formsvc/api-records";
import { createFormBodySchema, updateFormBodySchema } from "@formsvc/form-document";
import type { FormsService } from "@formsvc/proto/forms/v1/forms_pb.js";
import { defineRoute } from "../route-table.ts";
import { cursorPagingQuerySchema, envelope, envelopeOf, formSchema, idParamsSchema, questionSchema, recordIdSchema, wholeList } from "../schemas.ts";

const listFormsQuerySchema = cursorPagingQuerySchema.extend({
  workspaceId: recordIdSchema.optional().describe("Only forms of this workspace"),
});

export function formRoutes(forms: Client<typeof FormsService>) {
  return [
    defineRoute({
      method: "get",
      path: "/forms",
      operationId: "listForms",
      tag: "Forms",
      summary: "Forms of the caller's workspaces, newest first",
      description: "Forms in the Trash are not listed.",
      query: listFormsQuerySchema,
      success: { status: 200, description: "A page of forms", schema: envelopeOf(formSchema, "FormPage") },
      errors: [404],
      handle: async ({ query, caller }) => {
        const page = await forms.listForms(
          { workspaceId: query.workspaceId ?? "", page: query.page, limit: query.limit, cursor: query.cursor },
          asCaller(caller.userId),
        );
        return envelope(page.forms.map(formJson), query, page);
      },
    }),
    defineRoute({
      method: "post",
      path: "/forms",
      operationId: "createForm",
      tag: "Forms",
      summary: "Create a draft form in a workspace",
      description: "Publishing and closing happen only in the app.",
      body: createFormBodySchema,
      success: { status: 201, description: "The created draft form", schema: formSchema },
      errors: [404],
      handle: async ({ body, caller }) =>
        formJson(
          (
            await forms.createForm(
              { workspaceId: body.workspaceId, name: body.name, document: body.document as JsonObject | undefined },
              asCaller(caller.userId),
            )
          ).form!,
        ),
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id",
      operationId: "getForm",
      tag: "Forms",
      summary: "One form, including its status",
      description: "The form with its whole document (blocks, hidden and calculated fields), settings, status and version. Forms in the Trash are a 404.",
      params: idParamsSchema,
      success: { status: 200, description: "The form", schema: formSchema },
      errors: [],
      handle: async ({ params, caller }) => formJson((await forms.getForm({ id: params.id }, asCaller(caller.userId))).form!),
    }),
    defineRoute({
      method: "patch",
      path: "/forms/:id",
      operationId: "updateForm",
      tag: "Forms",
      summary: "Change a form's name, document or settings",
      description:
        "`document` replaces the whole document: start from a fresh GET, or edits made in the app since are lost. " +
        "`settings` are merged. `branding: false` needs a plan with the branding entitlement (403 otherwise). " +
        "PATCH never publishes or closes a form.",
      params: idParamsSchema,
      body: updateFormBodySchema,
      success: { status: 200, description: "The updated form", schema: formSchema },
      errors: [403],
      handle: async ({ params, body, caller }) =>
        formJson(
          (
            await forms.updateForm(
              {
                id: params.id,
                name: body.name,
                document: body.document as JsonObject | undefined,
                settings: body.settings as JsonObject | undefined,
              },
              asCaller(caller.userId),
            )
          ).form!,
        ),
    }),
    defineRoute({
      method: "delete",
      path: "/forms/:id",
      operationId: "trashForm",
      tag: "Forms",
      summary: "Move a form to the Trash",
      description: "The form answers 404 on the API until it is restored in the app.",
      params: idParamsSchema,
      success: { status: 204, description: "Moved to the Trash" },
      errors: [],
      handle: async ({ params, caller }) => {
        await forms.trashForm({ id: params.id }, asCaller(caller.userId));
      },
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/questions",
      operationId: "listQuestions",
      tag: "Forms",
      summary: "The columns of the form's Submissions table",
      description:
        "Every input block, then one HIDDEN_FIELDS entry per hidden field, RESPONDENT_COUNTRY, and one CALCULATED_FIELD per calculated field.",
      params: idParamsSchema,
      success: { status: 200, description: "Every column, in one page", schema: envelopeOf(questionSchema, "QuestionList") },
      errors: [],
      handle: async ({ params, caller }) => {
        const { questions } = await forms.listQuestions({ formId: params.id }, asCaller(caller.userId));
        return wholeList(questions.map(questionJson));
      },
    }),
  ];
}
