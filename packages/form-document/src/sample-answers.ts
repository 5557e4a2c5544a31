// Sample answers by question type: what a test event (Integrations → Send test event, the API's
// POST /webhooks/:id/test) carries for a form's real questions, so a receiver sees the shape its real
// responses will have.
import { defaultRatingMax, type InputBlockType } from "./block-types.ts";
import type { InputBlock } from "./schema.ts";

type SampleValue = string | number | string[] | null;

const fixedSamples: Partial<Record<InputBlockType, SampleValue>> = {
  SHORT_TEXT: "Ada Lovelace",
  LONG_TEXT: "A sample answer\nover two lines.",
  EMAIL: "ada@example.com",
  PHONE: "+44 20 7946 0958",
  URL: "https://example.com/",
  DATE: "2026-01-15",
  // A test event carries no file: there is no upload to link to.
  FILE: null,
  SIGNATURE: null,
};

/** A valid answer to `block` (null for FILE and SIGNATURE, which need an upload). */
export function sampleAnswer(block: InputBlock): SampleValue {
  switch (block.type) {
    case "NUMBER":
      return Math.min(Math.max(42, block.min ?? -Infinity), block.max ?? Infinity);
    case "RATING":
      return block.max ?? defaultRatingMax;
    case "MULTIPLE_CHOICE":
    case "DROPDOWN":
      return block.options[0]?.id ?? null;
    case "CHECKBOXES":
      return block.options.slice(0, 2).map((o) => o.id ?? "");
    default:
      return fixedSamples[block.type] ?? null;
  }
}
