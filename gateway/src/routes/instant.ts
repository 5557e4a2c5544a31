// An instant in a query or body (`since`, `until`): ISO 8601 with a zone, within what both Postgres's timestamptz
// and protobuf's Timestamp hold. `0000-01-01T00:00:00Z` or `9999-12-31T23:59:59-14:00` (year 10000 in UTC) parse
// as dates but cannot travel to a service: a 400 naming the parameter, not a 500.
import { z } from "zod";

const earliest = Date.parse("0001-01-01T00:00:00Z");
const latest = Date.parse("9999-12-31T23:59:59.999Z");

export function instant(what: string) {
  return z.iso
    .datetime({ offset: true })
    .transform((text) => new Date(text))
    .refine((date) => date.getTime() >= earliest && date.getTime() <= latest, { message: "must be from 0001-01-01 to 9999-12-31 in UTC" })
    .describe(`ISO 8601 date-time with a zone (\`2026-12-01T00:00:00Z\`): ${what}`);
}
