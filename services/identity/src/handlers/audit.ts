// The audit log: events the gateway (and the operator's CLI) record, listed to a workspace's owner and admins.
// The table is append-only in the database (its migration's trigger); rows go only by retention (retention.ts).
import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { auditEventJson } from "@formsvc/api-records";
import { actorOf, callerOf, operator } from "@formsvc/platform/caller.ts";
import { pageOf, pageRequest } from "@formsvc/platform/paging.ts";
import { AuditEventSchema, type AuditEvent } from "@formsvc/proto/identity/v1/identity_pb.js";
import { MembershipEntity } from "../entities/membership.ts";
import { UserEntity } from "../entities/user.ts";
import { normaliseEmail, workspaceNotFound, type IdentityContext, type IdentityHandlers } from "./context.ts";

/** The most events one RecordAuditEvents call carries: the gateway sends no more. */
export const maxAuditEventsPerCall = 500;
/** Who may act, as events name them. */
export const auditActorTypes = ["user", "api_key", "system", "anonymous"] as const;
const maxChanges = 100;
/** Rows one insert writes: 12 parameters each, under Postgres's 65,535. */
const rowsPerStatement = 5_000;
const maxValueLength = 500;
/** The workspace column's value for a personal event of nobody's (a failed sign-in naming no account). */
const noWorkspace = "";

type AuditHandlers = Pick<IdentityHandlers, "recordAuditEvents" | "listAuditEvents">;

interface AuditRow {
  id: string;
  workspace_id: string;
  occurred_at: Date | string;
  actor_type: string;
  actor_user_id: string | null;
  actor_api_key_id: string | null;
  address: string;
  action: string;
  target_type: string;
  target_id: string;
  changes: { field: string; value?: string }[];
  request_id: string;
}

const invalid = (message: string) => new ConnectError(message, Code.InvalidArgument);
const bounded = (what: string, text: string, max: number, required = false) => {
  if (required && !text) throw invalid(`${what} is required`);
  if (text.length > max) throw invalid(`${what}: at most ${max} characters`);
  return text;
};

export function auditHandlers({ deps, now, fork, table, schemaTable, managedWorkspace, anyWorkspace }: IdentityContext): AuditHandlers {
  const auditTable = schemaTable("audit_events");

  /** Checks one event as sent; what would not fit the table, or a person writing their own record, is refused. */
  function checked(event: AuditEvent): AuditEvent {
    bounded("id", event.id, 64, true);
    bounded("action", event.action, 100, true);
    bounded("target_type", event.targetType, 50, true);
    bounded("target_id", event.targetId, 200);
    bounded("workspace_id", event.workspaceId, 64);
    bounded("address", event.address, 100);
    bounded("request_id", event.requestId, 100);
    if (!auditActorTypes.includes(event.actor?.type as (typeof auditActorTypes)[number])) throw invalid(`actor.type must be one of ${auditActorTypes.join(", ")}`);
    if (event.changes.length > maxChanges) throw invalid(`changes: at most ${maxChanges}`);
    for (const change of event.changes) {
      bounded("changes.field", change.field, 200, true);
      // A value is a name, a status or a host: cut, never refused, so a long name does not lose the event.
      if (change.value !== undefined) change.value = change.value.slice(0, maxValueLength);
    }
    return event;
  }

  /** The workspaces each of `userIds` belongs to now. */
  async function workspacesOf(userIds: string[]): Promise<Map<string, string[]>> {
    const byUser = new Map<string, string[]>();
    if (!userIds.length) return byUser;
    const rows = await fork().execute<{ user_id: string; workspace_id: string }[]>(
      `select "user_id", "workspace_id" from ${table(MembershipEntity)} where "user_id" in (${userIds.map(() => "?").join(", ")})`,
      userIds,
    );
    for (const row of rows) byUser.set(row.user_id, [...(byUser.get(row.user_id) ?? []), row.workspace_id]);
    return byUser;
  }

  /** The users of the emails failed sign-ins named (the email itself is never stored). */
  async function usersByEmail(emails: string[]): Promise<Map<string, string>> {
    if (!emails.length) return new Map();
    const rows = await fork().execute<{ id: string; email: string }[]>(
      `select "id", "email" from ${table(UserEntity)} where "email" in (${emails.map(() => "?").join(", ")})`,
      emails,
    );
    return new Map(rows.map((row) => [row.email, row.id]));
  }

  /** One JSON line per recorded event on stdout (AUDIT_LOG_STDOUT), for a log pipeline. */
  function writeLines(rows: AuditRow[]): void {
    if (!deps.auditLine) return;
    const byId = new Map<string, AuditRow[]>();
    for (const row of rows) byId.set(row.id, [...(byId.get(row.id) ?? []), row]);
    for (const [first, ...others] of byId.values()) {
      // The API's shape, with every workspace the event went to (one line however many).
      const { workspaceId: _one, ...event } = auditEventJson(toAuditEventMessage(first));
      deps.auditLine(JSON.stringify({ auditEvent: { ...event, workspaceIds: [first, ...others].map((r) => r.workspace_id).filter(Boolean) } }));
    }
  }

  return {
    async recordAuditEvents(req, ctx) {
      if (callerOf(ctx)) throw new ConnectError("audit events are recorded by the system only", Code.PermissionDenied);
      if (req.events.length > maxAuditEventsPerCall) throw invalid(`events: at most ${maxAuditEventsPerCall} in one call`);
      const events = req.events.map(checked);
      if (!events.length) return { recorded: 0 };
      const subjects = await usersByEmail([...new Set(events.filter((e) => e.subjectEmail).map((e) => normaliseEmail(e.subjectEmail)))]);
      const subjectOf = (e: AuditEvent) => e.actor?.userId || (e.subjectEmail ? subjects.get(normaliseEmail(e.subjectEmail)) : undefined);
      const personal = events.filter((e) => e.personal);
      const memberships = await workspacesOf([...new Set(personal.map(subjectOf).filter((id): id is string => !!id))]);

      const rows: unknown[][] = [];
      const at = now();
      for (const event of events) {
        const subject = subjectOf(event);
        // A failed sign-in's target is the account its email names, when one does.
        const target = event.subjectEmail && !event.targetId && subject ? subject : event.targetId;
        const workspaces = event.personal ? (memberships.get(subject ?? "") ?? [noWorkspace]) : [event.workspaceId];
        for (const workspaceId of workspaces) {
          rows.push([
            event.id,
            workspaceId,
            event.occurredAt ? timestampDate(event.occurredAt) : at,
            event.actor!.type,
            event.actor!.userId || null,
            event.actor!.apiKeyId || null,
            event.address,
            event.action,
            event.targetType,
            target,
            JSON.stringify(event.changes.map((c) => (c.value === undefined ? { field: c.field } : { field: c.field, value: c.value }))),
            event.requestId,
          ]);
        }
      }
      // A statement per rowsPerStatement rows (Postgres takes at most 65,535 parameters); an id recorded before (a
      // batch sent again after a lost answer) writes nothing.
      const written: AuditRow[] = [];
      for (let start = 0; start < rows.length; start += rowsPerStatement) {
        const chunk = rows.slice(start, start + rowsPerStatement);
        written.push(
          ...(await fork().execute<AuditRow[]>(
            `insert into ${auditTable} ("id", "workspace_id", "occurred_at", "actor_type", "actor_user_id", "actor_api_key_id", "address",
                                        "action", "target_type", "target_id", "changes", "request_id")
             values ${chunk.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?)").join(", ")} on conflict do nothing returning *`,
            chunk.flat(),
          )),
        );
      }
      writeLines(written);
      return { recorded: written.length };
    },

    async listAuditEvents(req, ctx) {
      const em = fork();
      if (actorOf(ctx) === operator) await anyWorkspace(em, req.workspaceId);
      else {
        // A plain member is told what a stranger is: there is nothing here for them.
        await managedWorkspace(em, ctx, req.workspaceId).catch((err: unknown) => {
          throw ConnectError.from(err).code === Code.PermissionDenied ? workspaceNotFound() : err;
        });
      }
      const window = pageRequest(req);
      const where: string[] = [];
      const params: unknown[] = [];
      const and = (condition: string, ...values: unknown[]) => {
        where.push(condition);
        params.push(...values);
      };
      and(`e."workspace_id" = ?`, req.workspaceId);
      if (req.since) and(`e."occurred_at" >= ?`, timestampDate(req.since));
      if (req.until) and(`e."occurred_at" < ?`, timestampDate(req.until));
      if (req.action.endsWith(".*")) and(`left(e."action", ?) = ?`, req.action.length - 1, req.action.slice(0, -1));
      else if (req.action) and(`e."action" = ?`, req.action);
      if (req.actor === "system") and(`e."actor_type" = 'system'`);
      else if (req.actor) and(`(e."actor_user_id" = ? or e."actor_api_key_id" = ?)`, req.actor, req.actor);
      if (window.after) {
        // The position's own row gives its time (a cursor keeps milliseconds); gone, the cursor's stands in.
        and(
          `(e."occurred_at", e."id") < (coalesce((select "occurred_at" from ${auditTable} where "workspace_id" = ? and "id" = ?), ?::timestamptz), ?)`,
          req.workspaceId,
          window.after.id,
          window.after.at.toISOString(),
          window.after.id,
        );
      }
      const rows = await em.execute<AuditRow[]>(
        `select e.* from ${auditTable} e where ${where.join(" and ")} order by e."occurred_at" desc, e."id" desc limit ? offset ?`,
        [...params, window.fetch, window.offset],
      );
      const page = pageOf(rows, window.limit, (row) => new Date(row.occurred_at));
      return { events: page.items.map(toAuditEventMessage), hasMore: page.hasMore, nextCursor: page.nextCursor };
    },
  };
}

function toAuditEventMessage(row: AuditRow): AuditEvent {
  return create(AuditEventSchema, {
    id: row.id,
    occurredAt: timestampFromDate(new Date(row.occurred_at)),
    workspaceId: row.workspace_id,
    actor: { type: row.actor_type, userId: row.actor_user_id ?? "", apiKeyId: row.actor_api_key_id ?? "" },
    address: row.address,
    action: row.action,
    targetType: row.target_type,
    targetId: row.target_id,
    changes: row.changes,
    requestId: row.request_id,
  });
}

