// What submissions removes as it ages (packages/platform/src/retention.ts): outbox rows every consumer has
// passed, expired Idempotency-Keys, the mail outbox's sent mail, and email verifications past use; never responses (the operator's
// prune must not remove any). Uploads nobody keeps are swept with their rows
// (files/sweep-uploads.ts), count changes are deleted as they are folded (response-counts.ts), and a form's
// calculated-field problems are one row per field and reason, gone with the form.
import type { MikroORM } from "@formsvc/platform/database.ts";
import { sentMailRetention } from "@formsvc/platform/mail.ts";
import type { PruneTarget } from "@formsvc/platform/retention.ts";
import { idempotencyKeysTarget } from "./idempotency.ts";
import { emailVerificationsTarget } from "./links/email-verifications.ts";
import { outboxTarget, type OutboxConsumers } from "./outbox/outbox-retention.ts";

export function submissionsRetention(orm: MikroORM, settings: { safetySeconds: number }, consumers: OutboxConsumers): PruneTarget[] {
  return [
    outboxTarget(orm, { ...consumers, safetySeconds: settings.safetySeconds }),
    idempotencyKeysTarget(orm),
    sentMailRetention(orm, settings.safetySeconds),
    emailVerificationsTarget(orm),
  ];
}
