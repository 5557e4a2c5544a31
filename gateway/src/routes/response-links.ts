// Single-use links of a form (issue 31), at both doors: POST /forms/:id/links mints one or many tokens,
// GET lists them (never their tokens), POST .../:linkId/revoke withdraws an unused one. Submissions keeps
// them (only each token's hash) and uses a token up with the response it completes; forms' access check
// guards every call, so a form the caller may not see is a 404.
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import { maxLinksPerCall } from "@formsvc/form-document/response-rules";
import type { ResponseLink, SubmissionsService } from "@formsvc/proto/submissions/v1/submissions_pb.js";
import { instant } from "./instant.ts";
import { items } from "./paging.ts";
import { defineRoute, idParamsSchema } from "./route.ts";

const timestamp = z.iso.datetime({ offset: true });
const responseLinkSchema = z
  .object({
    id: z.string(),
    formId: z.string(),
    createdAt: timestamp,
    expiresAt: timestamp.nullable().describe("After it the link opens nothing; null: it does not expire"),
    usedAt: timestamp.nullable().describe("When the response it opened was completed; null while unused"),
    responseId: z.string().nullable().describe("The submission completed through it"),
    revokedAt: timestamp.nullable(),
  })
  .meta({ id: "ResponseLink" });
const mintedLinkSchema = responseLinkSchema
  .extend({
    token: z.string().describe("The secret of `?t=`: shown this once, only its hash is kept"),
    url: z.string().describe("The hosted form's address with the token: send it to one respondent"),
  })
  .meta({ id: "MintedResponseLink" });
type LinkJson = z.output<typeof responseLinkSchema>;

const createLinksBodySchema = z
  .strictObject({
    count: z.number().int().min(1).max(maxLinksPerCall).default(1).describe(`How many links to mint at once (1 to ${maxLinksPerCall})`),
    expiresAt: instant("when the links stop opening the form").optional(),
  })
  .meta({ examples: [{ count: 20, expiresAt: "2027-01-31T17:00:00Z" }] });
const linkParamsSchema = idParamsSchema.extend({ linkId: z.string().min(1).describe("Link id") });

const iso = (at: Timestamp | undefined) => (at ? timestampDate(at).toISOString() : null);
function linkJson(link: ResponseLink): LinkJson {
  return {
    id: link.id,
    formId: link.formId,
    createdAt: iso(link.createdAt)!,
    expiresAt: iso(link.expiresAt),
    usedAt: iso(link.usedAt),
    responseId: link.responseId || null,
    revokedAt: iso(link.revokedAt),
  };
}

export function responseLinkRoutes(submissions: Client<typeof SubmissionsService>, publicUrl: string) {
  return [
    defineRoute({
      method: "post",
      path: "/forms/:id/links",
      params: idParamsSchema,
      body: createLinksBodySchema,
      success: { status: 201, description: "The minted links, each with its token and URL", schema: z.object({ items: z.array(mintedLinkSchema) }) },
      handle: async ({ params, body, asUser }) => {
        const { links } = await submissions.createResponseLinks(
          { formId: params.id, count: body.count, expiresAt: body.expiresAt ? timestampFromDate(body.expiresAt) : undefined },
          asUser,
        );
        return items(
          links.map((link) => ({
            ...linkJson(link),
            token: link.token,
            url: `${publicUrl}/f/${encodeURIComponent(params.id)}?t=${encodeURIComponent(link.token)}`,
          })),
        );
      },
      api: {
        operationId: "createResponseLinks",
        tag: "Forms",
        summary: "Mint single-use links to a form",
        description:
          "An extension of the spec (issue 31). Each link (`/f/:id?t=TOKEN`) is good for one completed response, until `expiresAt` if given. " +
          "A form whose setting `requireSingleUseLink` is true takes responses only through one: without a usable token its page says so and " +
          "`POST /f/:id/responses` answers 403; a second completion with a used token is refused the same way. Tokens are shown only here.",
        errors: [],
      },
      app: {},
    }),
    defineRoute({
      method: "get",
      path: "/forms/:id/links",
      params: idParamsSchema,
      success: { status: 200, description: "The form's links, newest first, without their tokens", schema: z.object({ items: z.array(responseLinkSchema) }) },
      handle: async ({ params, asUser }) => items((await submissions.listResponseLinks({ formId: params.id }, asUser)).links.map(linkJson)),
      api: {
        operationId: "listResponseLinks",
        tag: "Forms",
        summary: "A form's single-use links",
        description: "Every link minted for the form, newest first, with whether and when it was used (and for which submission) or revoked.",
        errors: [],
      },
      app: {},
    }),
    defineRoute({
      method: "post",
      path: "/forms/:id/links/:linkId/revoke",
      params: linkParamsSchema,
      success: { status: 200, description: "The revoked link", schema: responseLinkSchema },
      handle: async ({ params, asUser }) => linkJson((await submissions.revokeResponseLink({ formId: params.id, id: params.linkId }, asUser)).link!),
      api: {
        operationId: "revokeResponseLink",
        tag: "Forms",
        summary: "Withdraw an unused single-use link",
        description: "From then on the link opens nothing. A used link cannot be revoked (409): its response stands.",
        errors: [409],
      },
      app: {},
    }),
  ];
}
