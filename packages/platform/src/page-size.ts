// A list page's size limits, apart from paging.ts so that the gateway checks them without loading the ORM.
export const defaultPageSize = 50;
export const maxPageSize = 500;
