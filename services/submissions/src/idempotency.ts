import { createHash } from "node:crypto";
import type { MikroORM } from "@formsvc/platform/database.ts";
import { tableRetention, type PruneTarget } from "@formsvc/platform/retention.ts";

/** How long a respondent's Idempotency-Key answers repeats: a day, like the API's. */
export const idempotencyTtlMs = 24 * 60 * 60 * 1000;

/** A save's key (scoped to its form) and the hash of what it asks, to tell a repeat from a reuse. */
export interface SaveKey {
  formId: string;
  key: string;
  hash: string;
}

/** The answer a key gives: the first save's result, or that the key came with other content. */
export type EarlierAnswer = { responseId: string; completed: boolean; idempotencyKeyReused: boolean; replayed: boolean };

export function idempotencyTable(orm: MikroORM): string {
  return `"${orm.config.get("schema") ?? "public"}"."idempotency_keys"`;
}

/** SHA-256 of what a save asks for (not the country, which the gateway derives per request). */
export function saveRequestHash(req: {
  formId: string;
  version: number;
  answers?: unknown;
  hidden: Record<string, string>;
  completed: boolean;
  responseId: string;
}): string {
  const content = [req.formId, req.version, req.answers ?? {}, req.hidden, req.completed, req.responseId];
  return createHash("sha256").update(JSON.stringify(content)).digest("base64url");
}

/**
 * A CTE claiming `key` for a save that will answer (responseId, completed): it inserts the key's row, or
 * takes over one older than the TTL not yet swept. Its `returning 1` row exists only when claimed; a
 * concurrent claim of the same key makes it wait for that transaction's end, then claim nothing.
 */
export function claimKeyCte(orm: MikroORM, key: SaveKey, result: { responseId: string; completed: boolean }, at: Date) {
  const table = idempotencyTable(orm);
  return {
    sql: `insert into ${table} ("form_id", "key", "request_hash", "response_id", "completed", "created_at")
      values (?, ?, ?, ?, ?, ?)
      on conflict ("form_id", "key") do update set "request_hash" = excluded."request_hash", "response_id" = excluded."response_id",
        "completed" = excluded."completed", "created_at" = excluded."created_at"
      where ${table}."created_at" < ?
      returning 1`,
    params: [key.formId, key.key, key.hash, result.responseId, result.completed, at, new Date(at.getTime() - idempotencyTtlMs)],
  };
}

/** What an earlier save with this key answered, while it is within the TTL; undefined otherwise. */
export async function earlierAnswer(orm: MikroORM, key: SaveKey, now: Date): Promise<EarlierAnswer | undefined> {
  const [row] = await orm.em
    .getConnection()
    .execute<{ request_hash: string; response_id: string; completed: boolean }[]>(
      `select "request_hash", "response_id", "completed" from ${idempotencyTable(orm)} where "form_id" = ? and "key" = ? and "created_at" >= ?`,
      [key.formId, key.key, new Date(now.getTime() - idempotencyTtlMs)],
    );
  if (!row) return undefined;
  if (row.request_hash !== key.hash) return { responseId: "", completed: false, idempotencyKeyReused: true, replayed: false };
  return { responseId: row.response_id, completed: row.completed, idempotencyKeyReused: false, replayed: true };
}

/**
 * `<schema>.idempotency_keys`: keys past the TTL (a day after their save), deleted by the periodic pass a
 * batch per statement (by the created_at index). The operator's prune removes those older than its bound
 * too, but never a key still within the TTL: a repeat of its save would then be stored again. `now`: the
 * clock the TTL is counted from (the system's when absent).
 */
export function idempotencyKeysTarget(orm: MikroORM, now: () => Date = () => new Date()): PruneTarget {
  return tableRetention(orm, {
    table: "idempotency_keys",
    olderThanAt: (at) => new Date(at.getTime() - idempotencyTtlMs),
    where: (olderThan) => ({ sql: `"created_at" < ?`, params: [new Date(Math.min(olderThan.getTime(), now().getTime() - idempotencyTtlMs))] }),
  });
}
