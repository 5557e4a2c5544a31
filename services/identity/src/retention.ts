// What identity removes as it ages (packages/platform/src/retention.ts): expired sessions, links that
// expired or were used, expired Idempotency-Keys, the outbox's sent mail, and audit events past AUDIT_RETENTION_DAYS.
import { defaultAuditRetentionDays } from "@formsvc/platform/audit-settings.ts";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { sentMailRetention } from "@formsvc/platform/mail.ts";
import { tableRetention, type PruneTarget } from "@formsvc/platform/retention.ts";
import { idempotencyTtlMs } from "./idempotency.ts";

/**
 * The bound of rows that go because they expired: `olderThan`, but never later than now, so the operator's
 * `prune --older-than` with a time to come still leaves every row that is good now.
 */
const endedBefore = (olderThan: Date) => new Date(Math.min(olderThan.getTime(), Date.now()));

/** Expiry is the condition: each pass takes whatever has expired by then. */
const expiredByNow = (now: Date) => now;

/**
 * Identity's targets, each bounded by when its rows stopped being of use: a session's expiry, a link's use
 * or expiry (the earlier), an Idempotency-Key's save (once past its day), a mail's sending.
 */
export function identityRetention(orm: MikroORM, settings: { safetySeconds: number; auditRetentionDays?: number }): PruneTarget[] {
  const auditRetentionMs = (settings.auditRetentionDays ?? defaultAuditRetentionDays) * 24 * 60 * 60 * 1000;
  return [
    tableRetention(orm, {
      table: "sessions",
      olderThanAt: expiredByNow,
      where: (olderThan) => ({ sql: `"expires_at" < ?`, params: [endedBefore(olderThan)] }),
    }),
    tableRetention(orm, {
      table: "email_links",
      olderThanAt: expiredByNow,
      // A used link answers as an unknown one does (useLink, peekLink): nothing needs it kept.
      where: (olderThan) => ({ sql: `least("used_at", "expires_at") < ?`, params: [endedBefore(olderThan)] }),
    }),
    tableRetention(orm, {
      table: "idempotency_keys",
      olderThanAt: expiredByNow,
      // Saved before the bound and past the TTL (as submissions' keys): never one a repeat could still need.
      where: (olderThan) => ({ sql: `"created_at" < ?`, params: [new Date(Math.min(olderThan.getTime(), Date.now() - idempotencyTtlMs))] }),
    }),
    sentMailRetention(orm, settings.safetySeconds),
    tableRetention(orm, {
      table: "audit_events",
      olderThanAt: (now) => new Date(now.getTime() - auditRetentionMs),
      // Never younger than AUDIT_RETENTION_DAYS, whatever the operator's bound: the log is not the operator's to cut.
      where: (olderThan) => ({ sql: `"occurred_at" < ?`, params: [new Date(Math.min(olderThan.getTime(), Date.now() - auditRetentionMs))] }),
      // The table's trigger refuses every other DELETE.
      beforeDelete: `select set_config('formsvc.audit_prune', 'on', true)`,
    }),
  ];
}
