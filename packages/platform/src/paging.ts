import { Code, ConnectError } from "@connectrpc/connect";

export const defaultPageSize = 50;
export const maxPageSize = 500;

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

export function pageOf<T>(rows: T[], limit: number): { items: T[]; hasMore: boolean } {
  return { items: rows.slice(0, limit), hasMore: rows.length > limit };
}
