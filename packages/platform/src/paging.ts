import { Code, ConnectError } from "@connectrpc/connect";
import { raw } from "@mikro-orm/core";
import { defaultPageSize, maxPageSize } from "./page-size.ts";

/**
 * A position in a list ordered by (timestamp, id): the last row a page showed. The opaque `cursor` of
 * the API is its base64url JSON; only the service that made it reads it.
 */
export interface ListPosition {
  at: Date;
  id: string;
}

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.at.getTime(), position.id])).toString("base64url");
}

/** The position a cursor names; INVALID_ARGUMENT for anything this service did not make. */
export function decodeCursor(cursor: string): ListPosition {
  const invalid = () => new ConnectError("cursor is not a cursor this list gave", Code.InvalidArgument);
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2) throw invalid();
  const [ms, id] = decoded as unknown[];
  if (!Number.isSafeInteger(ms) || typeof id !== "string" || id.length < 1 || id.length > 64) throw invalid();
  const at = new Date(ms as number);
  if (Number.isNaN(at.getTime())) throw invalid();
  return { at, id };
}

/** How to read one page: by offset (`page`) or after a cursor's position (`cursor`), never both. */
export type PageRequest = { limit: number; fetch: number } & ({ offset: number; after?: undefined } | { offset: 0; after: ListPosition });

/** Offset and row count to fetch for a 1-based page; one row more than asked tells whether more exist. */
export function pageWindow(page: number, limit: number): { offset: number; fetch: number; limit: number } {
  const p = page || 1;
  const l = limit || defaultPageSize;
  if (!Number.isInteger(p) || p < 1) throw new ConnectError("page must be an integer of at least 1", Code.InvalidArgument);
  if (!Number.isInteger(l) || l < 1 || l > maxPageSize) {
    throw new ConnectError(`limit must be an integer from 1 to ${maxPageSize}`, Code.InvalidArgument);
  }
  return { offset: (p - 1) * l, fetch: l + 1, limit: l };
}

/** `pageWindow`, or, with a cursor, the first page after its position. */
export function pageRequest(req: { page: number; limit: number; cursor?: string }): PageRequest {
  const window = pageWindow(req.page, req.limit);
  if (!req.cursor) return window;
  if (req.page > 1) throw new ConnectError("give page or cursor, not both", Code.InvalidArgument);
  return { ...window, offset: 0, after: decodeCursor(req.cursor) };
}

/**
 * A MikroORM condition for the rows after `position` in a list ordered by (`column`, id) in `order`:
 * one row comparison, so an index on (..., column, id) in that order reads only the page. The position's
 * row gives its own timestamp (a cursor keeps milliseconds, the column may hold microseconds); when that
 * row is gone, the cursor's timestamp stands in.
 */
export function keysetAfter(table: string, column: string, order: "asc" | "desc", position: ListPosition) {
  const op = order === "desc" ? "<" : ">";
  return {
    [raw(
      (alias: string) =>
        `(${alias}."${column}", ${alias}."id") ${op} (coalesce((select "${column}" from ${table} where "id" = ?), ?::timestamptz), ?)`,
      [position.id, position.at.toISOString(), position.id],
    )]: [],
  };
}

/**
 * The page's rows, whether more exist and, when they do, the cursor of the row after which the next
 * page starts (`key` gives a row's timestamp in the list's order).
 */
export function pageOf<T extends { id: string }>(
  rows: T[],
  limit: number,
  key?: (row: T) => Date,
): { items: T[]; hasMore: boolean; nextCursor: string } {
  const items = rows.slice(0, limit);
  const hasMore = rows.length > limit;
  const last = items.at(-1);
  return { items, hasMore, nextCursor: hasMore && last && key ? encodeCursor({ at: key(last), id: last.id }) : "" };
}
