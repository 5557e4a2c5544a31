// Sample answers by question type: what a test event (Integrations → Send test event, the API's
// POST /webhooks/:id/test) carries for a form's real questions, so a receiver sees the shape its real
// responses will have.
import { questionTypes, scaleOf } from "./block-types.ts";
import type { ChoiceBlock, InputBlock } from "./schema.ts";

type SampleValue = string | number | boolean | string[] | Record<string, string | string[]> | null;

/** A valid answer to `block` (null for uploads: a test event carries no file, there is no upload to link to). */
export function sampleAnswer(block: InputBlock): SampleValue {
  const type = questionTypes[block.type];
  switch (type.answer) {
    case "number": {
      const { min, max } = block as { min?: number; max?: number };
      return Math.min(Math.max(42, min ?? -Infinity), max ?? Infinity);
    }
    case "steps":
      return scaleOf(block).max;
    case "consent":
      return true;
    case "option":
      return (block as ChoiceBlock).options[0]?.id ?? null;
    case "options": {
      const { options, min, max } = block as ChoiceBlock & { min?: number; max?: number };
      return options.slice(0, Math.min(Math.max(2, min ?? 0), max ?? Infinity)).map((o) => o.id ?? "");
    }
    case "grid": {
      // Every row, in the first column.
      const { rows, columns, multiple } = block as Extract<InputBlock, { type: "MATRIX" }>;
      const first = columns[0]?.id ?? "";
      return Object.fromEntries(rows.map((row) => [row.id ?? "", multiple ? [first] : first]));
    }
    case "ranking":
      return (block as ChoiceBlock).options.map((o) => o.id ?? "");
    case "text":
      return "sample" in type ? type.sample : null;
    case "uploads":
      return null;
  }
}
