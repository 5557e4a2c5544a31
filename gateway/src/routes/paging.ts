// Paging: the query of a list, and the envelope each door answers a list in.
import { z } from "zod";
import { cursorPattern, maxInt32 } from "@formsvc/form-document";
import { maxPageSize } from "@formsvc/platform/page-size.ts";
import type { AppPage, Items } from "@formsvc/api-records/schemas";

/**
 * A page of an /api/v1 list of `item`, named `name` in the reference. `whole`: a list answered in one page
 * (wholeList), whose `limit` is its length and so has no page size's maximum (a form may have 701 columns).
 */
export function envelopeOf<T extends z.ZodType>(item: T, name: string, whole?: "whole") {
  const limit = z.number().int().min(1);
  return z
    .object({
      items: z.array(item),
      page: z.number().int().min(1),
      limit: whole ? limit.describe("The number of items (at least 1): the whole list is this one page") : limit.max(maxPageSize),
      hasMore: z.boolean().describe("True while further pages exist"),
      nextCursor: z
        .string()
        .nullable()
        .describe("Pass as `cursor` for the page after this one; null on the last page. Stable while records arrive."),
    })
    .meta({ id: name });
}

export const pagingQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(maxInt32).default(1).describe("Page number, from 1"),
  limit: z.coerce.number().int().min(1).max(maxPageSize).default(50).describe(`Page size, 1 to ${maxPageSize}`),
});

/** `page`/`limit` and the opaque `cursor` of /api/v1 lists. */
export const cursorPagingQuerySchema = pagingQuerySchema.extend({
  cursor: z
    .string()
    .regex(cursorPattern, "must be a nextCursor this list gave")
    .optional()
    .describe(
      "The `nextCursor` of the previous page: the page after it, in the same order, whatever was added or removed meanwhile " +
        "(keyset paging, as fast at any depth). Not with `page` beyond 1; keep the other parameters of the first request.",
    ),
});

/** The list envelope of one page (`page` is 1 when paging by cursor). */
export function envelope<T>(
  items: T[],
  query: { page: number; limit: number },
  page: { hasMore: boolean; nextCursor?: string },
): { items: T[]; page: number; limit: number; hasMore: boolean; nextCursor: string | null } {
  return { items, page: query.page, limit: query.limit, hasMore: page.hasMore, nextCursor: page.nextCursor || null };
}

/** A list answered in one page: every item, nothing after it. */
export function wholeList<T>(items: T[]) {
  return envelope(items, { page: 1, limit: Math.max(1, items.length) }, { hasMore: false });
}

/** A page of a list at /app/api: by page number, no cursor. */
export function appPage<T>(items: T[], query: { page: number; limit: number }, hasMore: boolean): AppPage<T> {
  return { items, page: query.page, limit: query.limit, hasMore };
}

/** A list the app gets whole. */
export function items<T>(list: T[]): Items<T> {
  return { items: list };
}
