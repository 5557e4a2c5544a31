// A workspace's audit log, for its owner and admins (identity answers 404 to anyone else, a plain member too).
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { z } from "zod";
import { auditEventJson } from "@formsvc/api-records";
import { auditActionNames, auditEventSchema } from "@formsvc/api-records/schemas";
import type { IdentityService } from "@formsvc/proto/identity/v1/identity_pb.js";
import { instant } from "./instant.ts";
import { cursorPagingQuerySchema, envelope, envelopeOf } from "./paging.ts";
import { defineRoute, idParamsSchema, recordIdSchema } from "./route.ts";

const auditQuerySchema = cursorPagingQuerySchema.extend({
  since: instant("only events at or after it").optional(),
  until: instant("only events before it").optional(),
  action: z
    .string()
    .regex(/^[a-z_]+\.(\*|[a-z_]+)$/, "must be an action (form.publish) or a record's every action (form.*)")
    .optional()
    .describe(`Only this action, or \`<record>.*\` for every action on a kind of record: ${auditActionNames.join(", ")}`),
  actor: recordIdSchema.optional().describe("Only this actor: a user id (their requests in the app and with their keys), an API key id, or `system`"),
});

export function auditEventRoutes(identity: Client<typeof IdentityService>) {
  return [
    defineRoute({
      method: "get",
      path: "/workspaces/:id/audit-events",
      params: idParamsSchema,
      query: auditQuerySchema,
      success: { status: 200, description: "A page of the workspace's audit events", schema: envelopeOf(auditEventSchema, "AuditEventPage") },
      handle: ({ params, query, asUser }) =>
        identity.listAuditEvents(
          {
            workspaceId: params.id,
            page: query.page,
            limit: query.limit,
            cursor: query.cursor,
            since: query.since ? timestampFromDate(query.since) : undefined,
            until: query.until ? timestampFromDate(query.until) : undefined,
            action: query.action,
            actor: query.actor,
          },
          asUser,
        ),
      answer: (page, { query }) => envelope(page.events.map(auditEventJson), query, page),
      api: {
        operationId: "listAuditEvents",
        tag: "Workspaces",
        summary: "The workspace's audit log, newest first",
        description:
          "Every change of the workspace's forms, webhooks, members and settings, its members' API keys, sign-ins and failed sign-ins, " +
          "and response exports: when, who (a user, an API key, or the system), from which address, what (`action`, `target`) and which fields " +
          "changed, with values only for harmless fields (never a secret, password, token, key or answer). For the workspace's owner and " +
          "admins; anyone else gets 404. Events are kept `AUDIT_RETENTION_DAYS` (365 by default). Page with `cursor` (keyset, stable while " +
          "events arrive); `since` and `until` bound `occurredAt`.",
        errors: [],
      },
      app: {},
    }),
  ];
}
